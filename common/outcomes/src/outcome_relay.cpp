// Outcomes across processes (scale-out): workers publish to the results topic; every ingest
// replica tails it and wakes the request waiting for the lead, if that request is its own.
#include "leadflow/base/log.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/queue.hpp"

namespace leadflow {

void QueueOutcomePublisher::publish(const OutcomeMessage& m) {
  const ProduceStatus s = producer_.send(topic_, m.lead_id, encode_outcome(m));
  if (s != ProduceStatus::kOk)
    log(LogLevel::kWarn, "outcome_notice_dropped",
        {{"lead_id", m.lead_id}, {"reason", to_string(s)}});
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
