// The Distributor: what all auctions of a process share (the store, the HTTP client, the
// buyers' health and requests in flight, the batching of post intents), and the entry points that
// start one (decide, decide_and_wait). One auction's state machine is auction_machine.cpp.
#include "leadflow/auction/distributor.hpp"

#include <algorithm>
#include <condition_variable>
#include <future>
#include <memory>
#include <stdexcept>

#include "auction_machine.hpp"
#include "buyer_caps.hpp"
#include "leadflow/auction/auction.hpp"
#include "leadflow/auction/worker_metrics.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/domain/test_mode.hpp"

namespace leadflow {

Distributor::Distributor(DistributionStore& store, HttpClient& http, BuyerDirectory& buyers,
                         CampaignDirectory& campaigns, const VerticalRegistry& verticals,
                         const Clock& clock, DistributorOptions options)
    : store_(store),
      http_(http),
      buyers_(buyers),
      campaigns_(campaigns),
      verticals_(verticals),
      clock_(clock),
      options_(options),
      health_(clock, options.health),
      rng_(std::random_device{}()),
      loop_(std::make_unique<EventLoop>(clock, options.store_threads)) {}

Distributor::~Distributor() = default;

void Distributor::observe_health(const std::string& buyer_id, const HttpResponse& r) {
  if (r.not_sent) return;      // our own queue's doing, not the buyer's
  if (r.stalled_here) return;  // this process was starved of CPU: not the buyer's doing either
  if (health_.record(buyer_id, classify_retry(r) == RetryClass::kRetryable)) {
    worker_metrics().buyer_pauses.Add({{"buyer_id", buyer_id}}).Increment();
    log(LogLevel::kWarn, "buyer_paused",
        {{"buyer_id", buyer_id},
         {"cool_down_ms", static_cast<std::int64_t>(options_.health.cool_down.count())}});
  }
}

bool Distributor::at_capacity(const Buyer& b) const {
  if (b.max_concurrency <= 0) return false;
  auto it = in_flight_.find(b.id);
  return it != in_flight_.end() && it->second >= b.max_concurrency;
}

void Distributor::request_sent(const std::string& buyer_id) { ++in_flight_[buyer_id]; }

std::unordered_map<std::string, int> Distributor::in_flight_now(std::chrono::milliseconds wait) {
  auto answer = std::make_shared<std::promise<std::unordered_map<std::string, int>>>();
  auto now = answer->get_future();
  loop_->post([this, answer] { answer->set_value(in_flight_); });
  if (now.wait_for(wait) != std::future_status::ready) return {};
  try {
    return now.get();
  } catch (const std::future_error&) {  // the loop dropped the task: it is stopping
    return {};
  }
}

void Distributor::request_answered(const std::string& buyer_id) {
  auto it = in_flight_.find(buyer_id);
  if (it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
}

std::string Distributor::ineligibility(const Buyer& b, const Lead& lead, std::int64_t now_ms,
                                       const std::optional<PersonFingerprints>& person) {
  const std::int64_t now_s = now_ms / 1000;
  std::string why = static_ineligibility(b, lead, now_s);
  if (why.empty() && person) {
    const std::optional<bool> listed = options_.suppression->buyer_suppresses(b.id, *person);
    if (!listed)
      why = "suppressed:unknown";  // cannot tell: hold the lead back
    else if (*listed)
      why = "suppressed";
  }
  if (why.empty() && health_.paused(b.id)) why = "unhealthy";
  if (why.empty()) why = cap_ineligibility(store_, b, cap_windows(b, now_s));
  if (why.empty() && b.duplicate_lookback_days > 0) {
    const auto bought = store_.buyer_bought_person(
        b.id, lead.id, now_ms - b.duplicate_lookback_days * 86'400'000LL);
    if (!bought)
      why = "duplicate:unknown";  // cannot tell: do not risk selling it twice
    else if (*bought)
      why = "duplicate";
  }
  return why;
}

void Distributor::write_intent(DistributionStore::PostIntentWrite write,
                               std::function<void(StoreStatus)> then) {
  if (intents_waiting_.empty())
    intents_waiting_since_.store(clock_.steady_now().time_since_epoch().count());
  intents_waiting_.push_back({std::move(write), std::move(then)});
  if (intent_batches_out_ < kMaxIntentBatches) write_intents();
}

std::chrono::milliseconds Distributor::own_backlog() const {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  std::chrono::nanoseconds wait = loop_->blocking_wait();
  const std::int64_t since = intents_waiting_since_.load();
  if (since != kNoIntentWaiting) {
    const std::chrono::nanoseconds intents{clock_.steady_now().time_since_epoch().count() - since};
    wait = std::max(wait, intents);
  }
  wait = std::max(wait, std::chrono::nanoseconds{request_queue_ns_.load()});
  wait = std::max(wait, http_.oldest_unsent());
  return duration_cast<milliseconds>(wait);
}

void Distributor::observe_request_queue(std::chrono::nanoseconds queued) {
  request_queue_ns_.store(std::max(queued, std::chrono::nanoseconds{0}).count());
}

void Distributor::write_intents() {
  // Every intent waiting goes in one batch: one transaction (one fsync) for many auctions.
  ++intent_batches_out_;
  auto batch = std::make_shared<std::vector<PendingIntent>>(std::move(intents_waiting_));
  intents_waiting_.clear();
  intents_waiting_since_.store(kNoIntentWaiting);
  loop_->blocking([this, batch] {
    std::vector<DistributionStore::PostIntentWrite> writes;
    writes.reserve(batch->size());
    for (auto& p : *batch) writes.push_back(std::move(p.write));
    auto statuses = store_.record_post_intents(writes);
    return [this, batch, statuses = std::move(statuses)] {
      --intent_batches_out_;
      for (std::size_t i = 0; i < batch->size(); ++i)
        (*batch)[i].then(i < statuses.size() ? statuses[i] : StoreStatus::kUnavailable);
      if (!intents_waiting_.empty() && intent_batches_out_ < kMaxIntentBatches) write_intents();
    };
  });
}

void Distributor::decide(const Lead& lead, std::function<void(Decision)> done) {
  // What a test lead skips (leadflow/domain/test_mode.hpp): everything an auction does. No
  // dedupe, no buyer read, pinged or posted, no post intent, cap or budget counted; it is
  // decided `test` at once, on the loop as any decision is.
  if (lead.test) {
    loop_->post([done = std::move(done), now = clock_.now_ms()] {
      Decision decided;
      decided.distribution = test_outcome(now);
      done(std::move(decided));
    });
    return;
  }
  run_auction(*this, lead, std::move(done));
}

void Distributor::reoffer(const LeadRecord& record, int round, std::function<void(Decision)> done) {
  run_aged_auction(*this, record.lead,
                   AgedLead{round, record.distribution.attempts, record.distribution.sales},
                   std::move(done));
}

Distribution Distributor::decide_and_wait(const Lead& lead) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Decision> result;
  decide(lead, [&](Decision d) {
    std::lock_guard lock(mu);
    result = std::move(d);
    cv.notify_all();
  });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return result.has_value(); });
  switch (result->kind) {
    case Decision::Kind::kDecided:
      return std::move(result->distribution);
    case Decision::Kind::kDeferred:
      throw AuctionDeferred(result->error);
    case Decision::Kind::kFailed:
      break;
  }
  throw std::runtime_error(result->error);
}

}  // namespace leadflow
