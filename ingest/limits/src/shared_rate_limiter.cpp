// Per-key limits shared by ingest replicas through the store; see rate_limiter.hpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "leadflow/base/log.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/limits/rate_limiter.hpp"
#include "leadflow/store/limits.hpp"

namespace leadflow {

namespace {
constexpr auto kLeaseLife = std::chrono::seconds(1);
}  // namespace

SharedRateLimiter::SharedRateLimiter(const Clock& clock, LimitsStore& store)
    : RateLimiter(clock), store_(store) {}

int SharedRateLimiter::lease_size(int per_minute) { return std::clamp(per_minute / 50, 1, 2000); }

std::shared_ptr<SharedRateLimiter::Lease> SharedRateLimiter::lease_of(std::string_view key) {
  const SteadyTime now = clock_.steady_now();
  std::lock_guard lock(map_mu_);
  if (now - last_sweep_ > std::chrono::minutes(1)) {
    // A lease idle for a minute has long expired: forget it (its state is in the store).
    last_sweep_ = now;
    for (auto it = leases_.begin(); it != leases_.end();) {
      std::unique_lock l(it->second->mu, std::try_to_lock);
      if (l.owns_lock() && now - it->second->used_at > std::chrono::minutes(1))
        it = leases_.erase(it);
      else
        ++it;
    }
  }
  auto& slot = leases_[std::string(key)];
  if (!slot) slot = std::make_shared<Lease>();
  return slot;
}

RateDecision SharedRateLimiter::acquire(std::string_view key, int per_minute, int per_day) {
  return *take(key, per_minute, per_day, true);
}

std::optional<RateDecision> SharedRateLimiter::try_acquire(std::string_view key, int per_minute,
                                                           int per_day) {
  return take(key, per_minute, per_day, false);
}

std::optional<RateDecision> SharedRateLimiter::take(std::string_view key, int per_minute,
                                                    int per_day, bool may_block) {
  auto lease = lease_of(key);
  std::lock_guard lock(lease->mu);
  const SteadyTime now = clock_.steady_now();
  const std::int64_t unix_ms = clock_.now_ms();
  const std::int64_t day = unix_ms / kDayMs;
  const double rate_per_ms = per_minute / 60'000.0;
  lease->used_at = now;
  if (now - lease->granted_at >= kLeaseLife) lease->tokens = 0;  // an old lease is not spent

  // Refused by the shared bucket a moment ago: no replica can put a token back, so until the
  // bucket has refilled one (or the day has turned) the answer is the same without asking the
  // store. A flood past a limit (bad keys from one address) then costs no store round trip.
  const bool still_refused = lease->tokens == 0 && unix_ms < lease->refused_until_ms &&
                             lease->refused_limits == std::pair{per_minute, per_day};
  bool allowed = false;
  if (lease->tokens > 0) {
    --lease->tokens;
    allowed = true;
  } else if (still_refused) {
    // allowed stays false; the answer below is made from the last lease
  } else if (!may_block) {
    return std::nullopt;
  } else {
    // Take a new lease from the shared bucket: the same token bucket and day counter as the
    // local limiter, with wall-clock time because replicas share it.
    const int want = lease_size(per_minute);
    int granted = 0;
    const StoreStatus s = store_.update_rate_bucket(key, [&](RateBucketState& b) {
      if (!b.exists) {
        b.tokens = per_minute;
        b.refilled_at_ms = unix_ms;
      } else if (unix_ms > b.refilled_at_ms) {
        b.tokens =
            std::min<double>(per_minute, b.tokens + (unix_ms - b.refilled_at_ms) * rate_per_ms);
        b.refilled_at_ms = unix_ms;
      }
      b.tokens = std::min<double>(b.tokens, per_minute);  // the limit may have been lowered
      if (b.day != day) {
        b.day = day;
        b.day_count = 0;
      }
      const std::int64_t day_left =
          per_day > 0 ? per_day - b.day_count : std::numeric_limits<int>::max();
      granted = static_cast<int>(std::max<std::int64_t>(
          0, std::min<std::int64_t>(
                 {want, static_cast<std::int64_t>(std::floor(b.tokens)), day_left})));
      b.tokens -= granted;
      b.day_count += granted;
      lease->shared_tokens = b.tokens;
      lease->day_left = per_day > 0 ? per_day - b.day_count : std::numeric_limits<int>::max();
    });
    if (s != StoreStatus::kOk) {
      static std::atomic<std::int64_t> last_warned{0};
      if (unix_ms - last_warned.exchange(unix_ms) > 10'000)
        log(LogLevel::kWarn, "shared_rate_limit_unavailable", {{"fallback", "local"}});
      return RateLimiter::acquire(key, per_minute, per_day);
    }
    lease->granted_at = now;
    lease->leased_at_ms = unix_ms;
    if (granted > 0) {
      lease->tokens = granted - 1;
      allowed = true;
    } else {
      const bool day_out = per_day > 0 && lease->day_left <= 0;
      lease->refused_until_ms =
          day_out ? (day + 1) * kDayMs
                  : unix_ms + static_cast<std::int64_t>(
                                  std::ceil((1.0 - lease->shared_tokens) / rate_per_ms - 1e-6));
      lease->refused_limits = {per_minute, per_day};
    }
  }
  // The shared bucket now, as far as this replica knows: what the last lease left, refilled since.
  const double shared_tokens = std::min<double>(
      per_minute, lease->shared_tokens +
                      std::max<std::int64_t>(0, unix_ms - lease->leased_at_ms) * rate_per_ms);

  RateDecision d;
  d.allowed = allowed;
  d.limit = per_minute;
  const std::int64_t minute_left =
      lease->tokens + static_cast<std::int64_t>(std::floor(shared_tokens));
  const std::int64_t day_left = per_day > 0 ? lease->day_left + lease->tokens : minute_left;
  d.remaining = static_cast<int>(std::max<std::int64_t>(0, std::min(minute_left, day_left)));
  const std::int64_t now_s = unix_ms / 1000;
  const std::int64_t next_day_s = (day + 1) * 86'400;
  const bool day_binding = per_day > 0 && day_left <= minute_left;
  const double to_full_s = (per_minute - shared_tokens - lease->tokens) / (rate_per_ms * 1000);
  d.reset_unix = day_binding ? next_day_s : reset_second(unix_ms, to_full_s);
  if (!allowed) {
    const bool day_out = per_day > 0 && lease->day_left <= 0;
    d.retry_after_s =
        day_out         ? static_cast<int>(next_day_s - now_s)
        : still_refused ? static_cast<int>((lease->refused_until_ms - unix_ms + 999) / 1000)
                        : static_cast<int>(std::ceil((1.0 - shared_tokens) / (rate_per_ms * 1000)));
    d.retry_after_s = std::max(1, d.retry_after_s);
  }
  return d;
}

}  // namespace leadflow
