#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/store/port.hpp"

namespace leadflow {

/// The shared state of one rate-limit key in scale-out mode: a token bucket and a day counter
/// (see SharedRateLimiter). `exists` is false for a key seen for the first time.
struct RateBucketState {
  bool exists = false;
  double tokens = 0;
  std::int64_t refilled_at_ms = 0;
  std::int64_t day = -1;
  std::int64_t day_count = 0;
};

/// One shared rate bucket as the clean-up reads it; what becomes of it is the limits
/// component's rule (rate_bucket_fate), not the store's.
struct RateBucketRow {
  std::string key;
  std::int64_t refilled_at_ms = 0;
  std::int64_t day = -1;
  /// The key is the id of an API key that is revoked: nothing asks this bucket for a token again.
  bool key_revoked = false;
};

/// The limits port: the shared state of rate limits and sign-in attempt windows (scale-out),
/// for the limits component.
class LimitsStore : public virtual StorePort {
 public:
  // --- shared rate limits (scale-out) --------------------------------------------------------
  /// Reads the bucket of `key`, lets `update` change it, and writes it back, atomically against
  /// every other process using the store (row lock / serialised writer). `update` runs once,
  /// inside the critical section, and must be quick and must not call the store.
  virtual StoreStatus update_rate_bucket(std::string_view key,
                                         const std::function<void(RateBucketState&)>& update) = 0;

  /// Up to `limit` buckets whose key sorts after `after` (byte order), in key order; nullopt when
  /// the store failed.
  virtual std::optional<std::vector<RateBucketRow>> list_rate_buckets(std::string_view after,
                                                                      int limit) = 0;
  /// Deletes each of `rows` that is still as it was listed (its refilled_at and day unchanged: a
  /// bucket leased since then stays), in one short transaction; the number deleted, or nullopt
  /// when the store failed.
  virtual std::optional<std::int64_t> delete_rate_buckets(
      const std::vector<RateBucketRow>& rows) = 0;

  // --- attempt windows (sign-in limits; shared in scale-out) -------------------------------
  /// Reads the attempt times (ms, oldest first; none for a key never seen) of each of `keys`
  /// (distinct), lets `update` change them, and writes them back, atomically for all the keys
  /// together against every other process using the store (row locks taken in key order /
  /// serialised writer). A window left empty is as one never seen. `update` runs once, inside
  /// the critical section, must be quick and must not call the store. The rule of what a window
  /// holds is the caller's (AttemptLimiter); the store keeps the times.
  virtual StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) = 0;
  /// Removes the windows whose newest time is before `before_ms` (nothing in them counts any
  /// more), so keys that went quiet do not stay.
  virtual StoreStatus forget_attempt_windows(std::int64_t before_ms) = 0;
};

}  // namespace leadflow
