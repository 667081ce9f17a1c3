#pragma once
// A clock for tests of the distribution core: time moves only when a test advances it or when a
// thread waits on it, and events scheduled on it (a fake buyer's answer) run when it gets there.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>

#include "leadflow/base/clock.hpp"

namespace leadflow::testing {

/// Simulated time. A wait (Clock::wait_until, sleep_for) does not pass real time: it jumps the
/// clock to the next scheduled event, runs it, and looks again, until what it waits for is done or
/// its deadline is reached. So an auction with a 10 s deadline and a buyer that never answers
/// runs in microseconds, and every duration it measures is exact.
///
/// Example: a ping answered after 300 ms and an auction deadline at 1 s. The wait for the ping
/// moves the clock to +300 ms and runs the answer; the ping is in, and the clock stays at +300 ms.
/// Had the answer been due at +2 s, the wait would have stopped at +1 s, the answer still pending.
///
/// With one thread driving, everything is deterministic. With several (a Worker's threads), any
/// waiting thread moves the time on for all, in order and never backwards. A wait with no deadline
/// and nothing scheduled waits in real time (a millisecond at a time) for another thread to act.
/// Thread-safe; events run on the thread that moves the clock, without its lock held.
class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(SystemTime start = SystemTime{std::chrono::seconds{1'700'000'000}});

  SystemTime now() const override;
  SteadyTime steady_now() const override;
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  SteadyTime deadline, const std::function<bool()>& done) const override;

  /// Runs `event` once the clock reaches `at` (on the next move of the clock if it already has).
  /// Events due at the same time run in the order they were scheduled.
  void schedule(SteadyTime at, std::function<void()> event);
  /// Moves the clock on by `d`, running every event due on the way.
  void advance(std::chrono::nanoseconds d);
  /// Events scheduled and not yet run.
  std::size_t scheduled() const;
  /// Time passed since the clock was made.
  std::chrono::nanoseconds elapsed() const;

 private:
  void advance_to(SteadyTime target) const;

  const SystemTime system_start_;
  const SteadyTime steady_start_;
  mutable std::mutex mu_;
  mutable SteadyTime steady_;
  mutable std::multimap<SteadyTime, std::function<void()>> events_;
};

}  // namespace leadflow::testing
