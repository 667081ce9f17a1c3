#include "leadflow/base/clock.hpp"

namespace leadflow {

bool Clock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                       SteadyTime deadline, const std::function<bool()>& done) const {
  if (deadline == SteadyTime::max()) {
    cv.wait(lock, done);
    return true;
  }
  // This clock's time may not be the real one (ManualClock): wait for the real time it has left.
  const auto left = deadline - steady_now();
  return cv.wait_until(lock, std::chrono::steady_clock::now() + left, done);
}

void Clock::sleep_for(std::chrono::nanoseconds d) const {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock lock(mu);
  wait_until(lock, cv, steady_now() + std::chrono::duration_cast<SteadyTime::duration>(d),
             [] { return false; });
}

SystemClock& SystemClock::instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace leadflow
