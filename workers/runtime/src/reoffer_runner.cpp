// The runner of second chances (leadflow/runtime/reoffer_runner.hpp): claims due re-offers in the
// capacity live leads leave, runs them on the Distributor, records their outcomes.
#include "leadflow/runtime/reoffer_runner.hpp"

#include "leadflow/auction/worker_metrics.hpp"
#include "leadflow/base/log.hpp"

namespace leadflow {

ReofferRunner::ReofferRunner(ReofferStore& schedule, IntakeStore& leads, Distributor& distributor,
                             const Clock& clock, std::function<bool()> live_busy,
                             ReofferRunnerOptions options)
    : schedule_(schedule),
      leads_(leads),
      distributor_(distributor),
      clock_(clock),
      live_busy_(std::move(live_busy)),
      options_(options) {}

ReofferRunner::~ReofferRunner() { stop(); }

void ReofferRunner::start() {
  if (options_.concurrency <= 0 || thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { loop(); });
}

void ReofferRunner::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ReofferRunner::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    const bool stopping = stopping_;
    if (stopping && running_.load() == 0 && finished_.empty()) return;
    lock.unlock();
    record_finished();
    if (!stopping) start_due();
    lock.lock();
    cv_.wait_for(lock, options_.poll, [&] { return !finished_.empty(); });
  }
}

void ReofferRunner::start_due() {
  const int room = options_.concurrency - running_.load();
  if (room <= 0 || (live_busy_ && live_busy_())) return;  // live leads first
  const std::int64_t now = clock_.now_ms();
  const auto claims = schedule_.claim_reoffers(now, room, now + options_.lease.count());
  if (!claims) return;  // the store will answer at the next poll
  for (const ReofferClaim& claim : *claims) {
    const Lookup<LeadRecord> found = leads_.get_lead(claim.lead_id);
    if (found.status != StoreStatus::kOk || !found.value) continue;  // run again after its lease
    ++running_;
    distributor_.reoffer(*found.value, claim.round, [this](Decision d) {
      // On the auction loop: nothing here may block.
      {
        std::lock_guard lock(mu_);
        finished_.push_back(std::move(d));
      }
      cv_.notify_all();
    });
  }
}

void ReofferRunner::record_finished() {
  std::vector<Decision> done;
  {
    std::lock_guard lock(mu_);
    done.swap(finished_);
  }
  for (Decision& d : done) {
    --running_;
    if (d.kind != Decision::Kind::kDecided || !d.reoffer) {
      // A post with no answer, or our store down: the claim's lease runs out and the re-offer
      // runs again, asking the buyers of its post intents first.
      log(LogLevel::kWarn, "reoffer_not_decided", {{"error", d.error}});
      continue;
    }
    const StoreStatus s = schedule_.record_reoffer(*d.reoffer);
    if (s == StoreStatus::kOk) {
      auto& metrics = worker_metrics();
      for (const auto& sale : d.reoffer->sales)
        metrics.count_sale(sale.buyer_id, sale.price, sale.payout);
      log(LogLevel::kDebug, "reoffer_decided",
          {{"lead_id", d.reoffer->lead_id},
           {"round", d.reoffer->round},
           {"sales", static_cast<std::int64_t>(d.reoffer->sales.size())}});
    } else if (s == StoreStatus::kUnavailable) {
      worker_metrics().store_errors.Increment();
      log(LogLevel::kWarn, "store_unavailable", {{"during", "record_reoffer"}});
    }
  }
}

}  // namespace leadflow
