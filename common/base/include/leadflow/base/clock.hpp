#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace leadflow {

using SystemTime = std::chrono::system_clock::time_point;
using SteadyTime = std::chrono::steady_clock::time_point;

/// Source of time for everything that measures or schedules (limiters, caps, deadlines).
/// Implementations are thread-safe. Production code uses SystemClock; tests use ManualClock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual SystemTime now() const = 0;
  virtual SteadyTime steady_now() const = 0;

  std::int64_t now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now().time_since_epoch()).count();
  }

  /// Waits until `done()` holds or this clock's steady time reaches `deadline`, whichever comes
  /// first, and returns done(). `lock` (held on entry and on return) guards what done() reads;
  /// other threads notify `cv` when it may have changed. SteadyTime::max() waits without a
  /// deadline. The default waits in real time for the clock's remaining time; a simulated clock
  /// moves its own time on instead, so a retry pause or an auction deadline costs a test nothing.
  virtual bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          SteadyTime deadline, const std::function<bool()>& done) const;

  /// Pauses the calling thread for `d` of this clock's time (through wait_until).
  void sleep_for(std::chrono::nanoseconds d) const;
};

/// The real clocks. Stateless; one shared instance.
class SystemClock final : public Clock {
 public:
  SystemTime now() const override { return std::chrono::system_clock::now(); }
  SteadyTime steady_now() const override { return std::chrono::steady_clock::now(); }
  static SystemClock& instance();
};

/// A clock that moves only when told to. Thread-safe (atomics).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(SystemTime start = SystemTime{std::chrono::seconds{1'700'000'000}})
      : system_ns_(start.time_since_epoch().count()) {}
  SystemTime now() const override { return SystemTime{SystemTime::duration{system_ns_.load()}}; }
  SteadyTime steady_now() const override {
    return SteadyTime{SteadyTime::duration{steady_ns_.load()}};
  }
  void advance(std::chrono::nanoseconds d) {
    system_ns_ += std::chrono::duration_cast<SystemTime::duration>(d).count();
    steady_ns_ += std::chrono::duration_cast<SteadyTime::duration>(d).count();
  }

 private:
  std::atomic<SystemTime::rep> system_ns_;
  std::atomic<SteadyTime::rep> steady_ns_{1'000'000'000};
};

}  // namespace leadflow
