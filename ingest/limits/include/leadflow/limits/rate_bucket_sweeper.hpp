#pragma once
// The clean-up of shared rate-limit buckets (docs/limits.md): one row per API key, campaign or
// address that asked for tokens would otherwise stay in the store for ever.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "leadflow/base/clock.hpp"
#include "leadflow/store/limits.hpp"

namespace leadflow {

/// What the clean-up does with one shared rate bucket.
enum class BucketFate { kKeep, kRevoked, kIdle };

/// The rule. A bucket of a revoked API key goes at once: nothing asks it for a token again. Any
/// other bucket goes once it is as one never seen, so that deleting it changes no answer (the
/// next request makes it anew, full): its tokens are full again (a bucket refills whole within a
/// minute of its last lease, whatever its per-minute limit) and its day counter counts a UTC day
/// past (a new day counts from 0). Example: a bucket last leased at 23:59:30 is kept until
/// 00:00:30 (a minute), one leased at 12:00 is kept until midnight (its day's count still
/// bounds a daily limit).
BucketFate rate_bucket_fate(const RateBucketRow& bucket, std::int64_t now_ms);

/// Goes through the shared buckets in key order, a batch at a time (each batch one read and one
/// short delete transaction), deleting those rate_bucket_fate lets go; a round goes through
/// every bucket. Counts leadflow_rate_buckets_removed_total{reason="revoked"|"idle"}. Several
/// replicas may sweep at once: a bucket is deleted only while it is as it was read, so one leased
/// meanwhile stays. run_round() is one round (tests call it on a simulated clock); start() runs
/// one every `every` on a thread of its own until the object is destroyed. Not copyable;
/// run_round is not to be called while the thread runs.
class RateBucketSweeper {
 public:
  struct Options {
    int batch = 200;  // buckets read and deleted at a time
    std::chrono::milliseconds every{std::chrono::minutes(10)};
  };
  struct Removed {
    std::int64_t revoked = 0;
    std::int64_t idle = 0;
  };

  RateBucketSweeper(LimitsStore& store, const Clock& clock, Options options);
  ~RateBucketSweeper();
  RateBucketSweeper(const RateBucketSweeper&) = delete;
  RateBucketSweeper& operator=(const RateBucketSweeper&) = delete;

  /// One round over every bucket: what it removed, or nullopt when the store failed (the next
  /// round starts again from the first key).
  std::optional<Removed> run_round();
  void start();

 private:
  LimitsStore& store_;
  const Clock& clock_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leadflow
