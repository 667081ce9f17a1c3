// Outcomes across processes (scale-out): workers publish to the results topic and announce the
// awaited ones through the store; every ingest replica hears the announcements (or, with a store
// that cannot announce, tails the results topic) and wakes the request waiting for the lead, if
// that request is its own.
#include <utility>

#include "leadflow/base/log.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/announcements.hpp"
#include "leadflow/store/intake.hpp"

namespace leadflow {

QueueOutcomePublisher::QueueOutcomePublisher(QueueProducer& producer, std::string topic,
                                             AnnouncementStore& store)
    : producer_(producer), topic_(std::move(topic)), store_(store) {
  if (store_.announces()) announcer_ = std::thread([this] { announce_loop(); });
}

QueueOutcomePublisher::~QueueOutcomePublisher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (announcer_.joinable()) announcer_.join();
}

void QueueOutcomePublisher::publish(const OutcomeMessage& m) {
  std::string payload = encode_outcome(m);
  const ProduceStatus s = producer_.send(topic_, m.lead_id, payload);
  if (s != ProduceStatus::kOk)
    log(LogLevel::kWarn, "outcome_notice_dropped",
        {{"lead_id", m.lead_id}, {"reason", to_string(s)}});
  if (!m.awaited || !announcer_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    to_announce_.push_back(std::move(payload));
  }
  cv_.notify_one();
}

void QueueOutcomePublisher::announce_loop() {
  bool failing = false;
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !to_announce_.empty(); });
    if (to_announce_.empty()) return;  // stopping, everything sent
    std::vector<std::string> batch;
    batch.swap(to_announce_);
    lock.unlock();
    // Logged once per outage: the store logs each failure itself.
    const bool sent = store_.announce(kOutcomeChannel, batch) == StoreStatus::kOk;
    if (sent == failing)
      log(sent ? LogLevel::kInfo : LogLevel::kWarn,
          sent ? "outcome_announcements_resumed" : "outcome_announcements_dropped",
          {{"outcomes", batch.size()}});
    failing = !sent;
    lock.lock();
  }
}

std::unique_ptr<StoreWatch> listen_for_outcomes(AnnouncementStore& store, IntakeStore& leads,
                                                OutcomeWaiters& waiters) {
  return store.watch(
      kOutcomeChannel,
      [&waiters](std::string_view payload) {
        if (auto m = decode_outcome(payload)) waiters.deliver(*m);
      },
      [&leads, &waiters] {
        for (const std::string& id : waiters.waiting_for()) {
          // One the store could not read is asked again at the next announcement.
          const auto r = leads.get_lead(id);
          if (!r.value || !is_final(r.value->distribution.status)) continue;
          const Distribution& d = r.value->distribution;
          waiters.deliver({id, d.status, d.buyer_id, d.price, d.payout});
        }
      });
}

ResultsListener::ResultsListener(std::unique_ptr<QueueConsumer> consumer, OutcomeWaiters& waiters)
    : consumer_(std::move(consumer)), waiters_(waiters) {
  thread_ = std::thread([this] {
    while (!stopping_) {
      auto record = consumer_->poll(std::chrono::milliseconds(100));
      if (!record) continue;
      if (auto m = decode_outcome(record->payload)) waiters_.deliver(*m);
    }
  });
}

ResultsListener::~ResultsListener() { stop(); }

void ResultsListener::stop() {
  if (stopping_.exchange(true)) return;
  if (thread_.joinable()) thread_.join();
  consumer_->close();
}

}  // namespace leadflow
