#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "leadflow/clock.hpp"

namespace leadflow {

/// The answer for one request, with what the X-RateLimit-* headers show.
struct RateDecision {
  bool allowed = false;
  int limit = 0;              // X-RateLimit-Limit: the per-minute limit
  int remaining = 0;          // X-RateLimit-Remaining: min(minute allowance, day allowance) now
  std::int64_t reset_unix = 0;  // X-RateLimit-Reset: when the binding allowance is full again
  int retry_after_s = 0;      // for a refusal: seconds until one request is allowed
};

/// Per-key limits: a token bucket of `per_minute` tokens refilled evenly over a minute, and a
/// UTC-day counter of `per_day`. Both must allow a request. Example: a standard key (100/min) that
/// spent 100 tokens at 12:00:00 gets its next one at 12:00:00.6 and is full again at 12:01:00.
/// per_day <= 0 means no daily limit. Thread-safe; idle keys are evicted.
class RateLimiter {
 public:
  explicit RateLimiter(const Clock& clock) : clock_(clock) {}
  RateDecision acquire(std::string_view key, int per_minute, int per_day);

 private:
  struct Bucket {
    double tokens = 0;
    SteadyTime refilled_at{};
    std::int64_t day = -1;
    int day_count = 0;
    bool initialised = false;
  };
  void evict_idle(SteadyTime now);

  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  SteadyTime last_eviction_{};
};

}  // namespace leadflow
