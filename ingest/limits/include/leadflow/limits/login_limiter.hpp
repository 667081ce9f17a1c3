#pragma once
// Failed sign-ins counted in a sliding window, per key (a client address, an e-mail).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "leadflow/base/clock.hpp"

namespace leadflow {

/// At most `max_failures` failed sign-ins per key within any `window`: once a key has that many
/// in the window, check() refuses it until the oldest of them leaves the window (retry_after_s
/// says when, rounded up to a whole second). Successful sign-ins are not counted and clear
/// nothing. Memory is bounded: a key holds at most `max_failures` times, keys with no failure
/// left in the window are dropped, and past kMaxKeys keys the oldest-failing are forgotten
/// first. Local to this process. Thread-safe.
class LoginLimiter {
 public:
  static constexpr std::size_t kMaxKeys = 100'000;

  LoginLimiter(const Clock& clock, int max_failures, std::chrono::milliseconds window)
      : clock_(clock), max_failures_(max_failures), window_(window) {}

  struct Decision {
    bool allowed = true;
    int retry_after_s = 0;  // refused: seconds until one more attempt is allowed
  };
  Decision check(std::string_view key);
  void record_failure(std::string_view key);

  int max_failures() const { return max_failures_; }
  std::chrono::milliseconds window() const { return window_; }

 private:
  void forget_old(SteadyTime now);

  const Clock& clock_;
  const int max_failures_;
  const std::chrono::milliseconds window_;
  std::mutex mu_;
  std::unordered_map<std::string, std::deque<SteadyTime>> failures_;
};

}  // namespace leadflow
