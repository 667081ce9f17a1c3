#include "leadflow/limits/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace leadflow {

std::int64_t reset_second(std::int64_t unix_ms, double to_full_s) {
  // The bucket's arithmetic is in doubles: a thousandth of a microsecond of rounding error must
  // not push an exact second to the next one.
  const std::int64_t full_at_ms =
      unix_ms + static_cast<std::int64_t>(std::ceil(std::max(0.0, to_full_s) * 1000.0 - 1e-6));
  return full_at_ms / 1000 + (full_at_ms % 1000 != 0 ? 1 : 0);
}

RateDecision RateLimiter::acquire(std::string_view key, int per_minute, int per_day) {
  const SteadyTime now = clock_.steady_now();
  const std::int64_t unix_ms = clock_.now_ms();
  const std::int64_t day = unix_ms / 86'400'000;
  const double rate_per_s = per_minute / 60.0;

  std::lock_guard lock(mu_);
  evict_idle(now);
  Bucket& b = buckets_[std::string(key)];
  if (!b.initialised) {
    b.tokens = per_minute;
    b.refilled_at = now;
    b.initialised = true;
  } else {
    const double elapsed = std::chrono::duration<double>(now - b.refilled_at).count();
    b.tokens = std::min<double>(per_minute, b.tokens + elapsed * rate_per_s);
    b.refilled_at = now;
  }
  if (b.day != day) {
    b.day = day;
    b.day_count = 0;
  }

  RateDecision d;
  d.limit = per_minute;
  const bool day_ok = per_day <= 0 || b.day_count < per_day;
  d.allowed = b.tokens >= 1.0 && day_ok;
  if (d.allowed) {
    b.tokens -= 1.0;
    ++b.day_count;
  }
  const int minute_left = static_cast<int>(std::floor(b.tokens));
  const int day_left = per_day <= 0 ? minute_left : per_day - b.day_count;
  d.remaining = std::max(0, std::min(minute_left, day_left));

  const std::int64_t now_s = unix_ms / 1000;
  const std::int64_t next_day_s = (day + 1) * 86'400;
  const double to_full_s = (per_minute - b.tokens) / rate_per_s;
  const bool day_binding = per_day > 0 && day_left <= minute_left;
  d.reset_unix = day_binding ? next_day_s : reset_second(unix_ms, to_full_s);
  if (!d.allowed) {
    d.retry_after_s = !day_ok ? static_cast<int>(next_day_s - now_s)
                              : static_cast<int>(std::ceil((1.0 - b.tokens) / rate_per_s));
    d.retry_after_s = std::max(1, d.retry_after_s);
  }
  return d;
}

void RateLimiter::evict_idle(SteadyTime now) {
  // A bucket untouched for two minutes is full again; its day count still matters until the day
  // ends. So idle buckets of an earlier day go; idle buckets of today go only when the map is very
  // large (then a returning key may get more than its daily limit: the price of bounded memory).
  if (now - last_eviction_ < std::chrono::minutes(1)) return;
  last_eviction_ = now;
  if (buckets_.size() < 10'000) return;
  const std::int64_t today = clock_.now_ms() / 86'400'000;
  const bool crowded = buckets_.size() > 200'000;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const Bucket& b = it->second;
    const bool idle = now - b.refilled_at > std::chrono::minutes(2);
    if (idle && (crowded || b.day != today || b.day_count == 0))
      it = buckets_.erase(it);
    else
      ++it;
  }
}

}  // namespace leadflow
