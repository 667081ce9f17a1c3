// The clean-up of shared rate-limit buckets; see rate_bucket_sweeper.hpp.
#include "leadflow/limits/rate_bucket_sweeper.hpp"
#include "leadflow/base/time_format.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <utility>
#include <vector>

#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"

namespace leadflow {
namespace {

constexpr std::int64_t kRefillMs = 60'000;  // a bucket refills whole in a minute

prometheus::Counter& removed_counter(BucketFate fate) {
  static prometheus::Family<prometheus::Counter>& family =
      prometheus::BuildCounter()
          .Name("leadflow_rate_buckets_removed_total")
          .Help(
              "Shared rate-limit buckets deleted from the store by the clean-up, by reason "
              "(revoked: of a revoked API key; idle: full again and of a day past)")
          .Register(*metrics_registry());
  static prometheus::Counter& revoked = family.Add({{"reason", "revoked"}});
  static prometheus::Counter& idle = family.Add({{"reason", "idle"}});
  return fate == BucketFate::kRevoked ? revoked : idle;
}

}  // namespace

BucketFate rate_bucket_fate(const RateBucketRow& bucket, std::int64_t now_ms) {
  if (bucket.key_revoked) return BucketFate::kRevoked;
  const bool full = now_ms - bucket.refilled_at_ms >= kRefillMs;
  const bool day_past = bucket.day < now_ms / kDayMs;
  return full && day_past ? BucketFate::kIdle : BucketFate::kKeep;
}

RateBucketSweeper::RateBucketSweeper(LimitsStore& store, const Clock& clock, Options options)
    : store_(store), clock_(clock), options_(options) {
  // Registered at start, so the series read 0 before the first removal.
  removed_counter(BucketFate::kRevoked);
  removed_counter(BucketFate::kIdle);
}

RateBucketSweeper::~RateBucketSweeper() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<RateBucketSweeper::Removed> RateBucketSweeper::run_round() {
  Removed removed;
  std::string after;
  for (;;) {
    const auto rows = store_.list_rate_buckets(after, options_.batch);
    if (!rows) return std::nullopt;
    if (rows->empty()) break;
    after = rows->back().key;
    const std::int64_t now_ms = clock_.now_ms();
    std::vector<RateBucketRow> revoked, idle;
    for (const RateBucketRow& b : *rows) {
      const BucketFate fate = rate_bucket_fate(b, now_ms);
      if (fate == BucketFate::kRevoked) revoked.push_back(b);
      if (fate == BucketFate::kIdle) idle.push_back(b);
    }
    // Two deletes, so that each reason is counted as what the store really deleted.
    for (auto [fate, batch] :
         {std::pair{BucketFate::kRevoked, &revoked}, std::pair{BucketFate::kIdle, &idle}}) {
      if (batch->empty()) continue;
      const auto deleted = store_.delete_rate_buckets(*batch);
      if (!deleted) return std::nullopt;
      removed_counter(fate).Increment(static_cast<double>(*deleted));
      (fate == BucketFate::kRevoked ? removed.revoked : removed.idle) += *deleted;
    }
    if (static_cast<int>(rows->size()) < options_.batch) break;
    std::lock_guard lock(mu_);
    if (stopping_) break;
  }
  return removed;
}

void RateBucketSweeper::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      const auto removed = run_round();
      if (!removed)
        log(LogLevel::kWarn, "rate_bucket_sweep_failed");
      else if (removed->revoked + removed->idle > 0)
        log(LogLevel::kInfo, "rate_buckets_removed",
            {{"revoked", removed->revoked}, {"idle", removed->idle}});
      lock.lock();
      const SteadyTime next = clock_.steady_now() + options_.every;
      clock_.wait_until(lock, cv_, next, [this] { return stopping_; });
    }
  });
}

}  // namespace leadflow
