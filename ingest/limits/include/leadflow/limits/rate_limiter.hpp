#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "leadflow/base/clock.hpp"

namespace leadflow {

/// The answer for one request, with what the X-RateLimit-* headers show.
struct RateDecision {
  bool allowed = false;
  int limit = 0;                // X-RateLimit-Limit: the per-minute limit
  int remaining = 0;            // X-RateLimit-Remaining: min(minute allowance, day allowance) now
  std::int64_t reset_unix = 0;  // X-RateLimit-Reset: when the binding allowance is full again
  int retry_after_s = 0;        // for a refusal: seconds until one request is allowed
};

/// X-RateLimit-Reset for a bucket that is full `to_full_s` seconds after `unix_ms`: the first
/// whole second at or after that moment. Rounded up, so it never names a second already past
/// nor one before the bucket is full (at 12:00:00.900 with 0.5 s to go it is 12:00:02, not
/// 12:00:01).
std::int64_t reset_second(std::int64_t unix_ms, double to_full_s);

/// Per-key limits: a token bucket of `per_minute` tokens refilled evenly over a minute, and a
/// UTC-day counter of `per_day`. Both must allow a request. Example: a standard key (100/min) that
/// spent 100 tokens at 12:00:00 gets its next one at 12:00:00.6 and is full again at 12:01:00.
/// per_day <= 0 means no daily limit. Thread-safe; idle keys are evicted.
class RateLimiter {
 public:
  explicit RateLimiter(const Clock& clock) : clock_(clock) {}
  virtual ~RateLimiter() = default;
  virtual RateDecision acquire(std::string_view key, int per_minute, int per_day);
  /// acquire() when it can answer without waiting on I/O (an event loop calls this); nullopt
  /// when it would have to wait, and then nothing was taken. This one always answers.
  virtual std::optional<RateDecision> try_acquire(std::string_view key, int per_minute,
                                                  int per_day) {
    return acquire(key, per_minute, per_day);
  }

 protected:
  const Clock& clock_;

 private:
  struct Bucket {
    double tokens = 0;
    SteadyTime refilled_at{};
    std::int64_t day = -1;
    int day_count = 0;
    bool initialised = false;
  };
  void evict_idle(SteadyTime now);

  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  SteadyTime last_eviction_{};
};

class LimitsStore;

/// The same limits held across several ingest replicas (scale-out). The bucket of each key lives
/// in the store (LimitsStore::update_rate_bucket); a replica takes a lease of several tokens at a
/// time and spends them locally, so most requests cost no database round trip.
///
/// A lease is a slice of the shared bucket (about 1/50 of the per-minute limit, at least 1) and
/// expires unspent after one second. Tokens are taken from the shared bucket when leased, so the
/// replicas together never spend more than the bucket gave out; a lease spent up to a second after
/// it was granted lets a key exceed its per-minute limit by at most the tokens refilled in that
/// second: limit/60 (a standard key: 101 requests in the worst minute instead of 100). The daily
/// limit is exact (leased tokens count when leased). The price: a lease left unspent on one
/// replica is lost to the others, so a key spread thinly over many replicas may get slightly less
/// than its limit.
///
/// A key the shared bucket refused is refused by the replica on its own until the bucket has
/// refilled a token (or, past the daily limit, until the next UTC day): nobody can give tokens
/// back, so asking the store again could only say the same.
///
/// When the store cannot answer, the replica falls back to its own local bucket (limits then hold
/// per replica) rather than refusing every seller. Thread-safe.
class SharedRateLimiter final : public RateLimiter {
 public:
  SharedRateLimiter(const Clock& clock, LimitsStore& store);
  RateDecision acquire(std::string_view key, int per_minute, int per_day) override;
  /// Answers from a live lease only; nullopt when a new lease must be taken from the store.
  std::optional<RateDecision> try_acquire(std::string_view key, int per_minute,
                                          int per_day) override;

  /// Tokens in one lease for a per-minute limit.
  static int lease_size(int per_minute);

 private:
  std::optional<RateDecision> take(std::string_view key, int per_minute, int per_day,
                                   bool may_block);

  struct Lease {
    std::mutex mu;
    int tokens = 0;  // unspent tokens of the current lease
    SteadyTime granted_at{};
    double shared_tokens = 0;       // the shared bucket after the last lease
    std::int64_t day_left = 0;      // the day's allowance after the last lease
    std::int64_t leased_at_ms = 0;  // when the last lease was asked for (wall clock)
    // The last lease got nothing: refused without asking the store until then, for these limits.
    std::int64_t refused_until_ms = 0;
    std::pair<int, int> refused_limits{0, 0};
    SteadyTime used_at{};
  };
  std::shared_ptr<Lease> lease_of(std::string_view key);

  LimitsStore& store_;
  std::mutex map_mu_;
  std::unordered_map<std::string, std::shared_ptr<Lease>> leases_;
  SteadyTime last_sweep_{};
};

}  // namespace leadflow
