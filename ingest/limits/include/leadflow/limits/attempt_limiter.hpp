#pragma once
// Attempts at a secret (a password, a second factor's code) limited in a sliding window, with
// each attempt's place reserved before the secret is checked.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "leadflow/base/clock.hpp"

namespace leadflow {

class LimitsStore;

/// One key an attempt counts against, and how many attempts the key may hold in any window.
struct AttemptKey {
  std::string key;
  int max_attempts = 1;
};

/// The places one attempt holds, from reserve() until release() or until they leave the window.
/// Empty once released (or when nothing was reserved).
struct AttemptReservation {
  std::vector<std::string> keys;
  std::int64_t at_ms = 0;
  bool held() const { return !keys.empty(); }
};

enum class AttemptStatus {
  kReserved,     // go on and check the secret
  kRefused,      // a key is at its limit: answer 429 with retry_after_s, check nothing
  kUnavailable,  // the store could not say (shared windows): answer 503, check nothing
};

struct AttemptDecision {
  AttemptStatus status = AttemptStatus::kUnavailable;
  int retry_after_s = 0;           // kRefused: seconds until every refusing key has room again
  std::size_t refused_by = 0;      // kRefused: the first key (index in the request) at its limit
  AttemptReservation reservation;  // kReserved
  bool reserved() const { return status == AttemptStatus::kReserved; }
};

class AttemptWindows;

/// At most `max_attempts` attempts per key in any `window`, counted when an attempt is made,
/// not when it is known to have failed: reserve() takes a place in the window of every key of
/// the attempt (all or none, atomically) before the secret is checked, and release() gives the
/// places back when the secret was right. A wrong secret keeps its places. So N concurrent
/// guesses never get more than the limit checked: with a limit of 5, 24 wrong passwords sent at
/// once are 5 checks (5 x 401) and 19 refusals (429), and a refusal costs no hash.
///
/// A full key refuses every attempt, the right secret included, until its oldest place leaves
/// the window (retry_after_s says when, rounded up to a whole second): a success frees only the
/// place it took itself. An attempt whose outcome is never told (a crash between reserve and
/// release) keeps its places, as a failure would.
///
/// The windows live in this process (bounded memory: past kMaxLocalKeys keys the quietest are
/// forgotten first) or in the store (LimitsStore::update_attempt_windows), shared by every process
/// using it, on wall-clock milliseconds. Thread-safe.
class AttemptLimiter {
 public:
  static constexpr std::size_t kMaxLocalKeys = 100'000;

  /// Windows local to this process.
  AttemptLimiter(const Clock& clock, std::chrono::milliseconds window);
  /// Windows shared through `store` (which must outlive the limiter).
  AttemptLimiter(const Clock& clock, std::chrono::milliseconds window, LimitsStore& store);
  ~AttemptLimiter();

  /// Reserves one place in the window of each of `keys` (distinct), or none.
  AttemptDecision reserve(const std::vector<AttemptKey>& keys);
  /// The secret was right: gives the reservation's places back and empties it. Nothing for an
  /// empty reservation. If the store cannot be reached the places stay (a success counted as a
  /// failure, never the other way round).
  void release(AttemptReservation& reservation);

  std::chrono::milliseconds window() const { return window_; }

 private:
  const Clock& clock_;
  const std::chrono::milliseconds window_;
  std::unique_ptr<AttemptWindows> windows_;
};

}  // namespace leadflow
