#include "simulated_clock.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace leadflow::testing {

SimulatedClock::SimulatedClock(SystemTime start)
    : system_start_(start),
      steady_start_(SteadyTime{std::chrono::seconds{1}}),
      steady_(steady_start_) {}

SystemTime SimulatedClock::now() const {
  std::lock_guard lock(mu_);
  return system_start_ + std::chrono::duration_cast<SystemTime::duration>(steady_ - steady_start_);
}

SteadyTime SimulatedClock::steady_now() const {
  std::lock_guard lock(mu_);
  return steady_;
}

std::chrono::nanoseconds SimulatedClock::elapsed() const {
  std::lock_guard lock(mu_);
  return steady_ - steady_start_;
}

void SimulatedClock::schedule(SteadyTime at, std::function<void()> event) {
  std::lock_guard lock(mu_);
  events_.emplace(at, std::move(event));  // after the events already due at `at`
}

void SimulatedClock::advance(std::chrono::nanoseconds d) {
  advance_to(steady_now() + std::chrono::duration_cast<SteadyTime::duration>(d));
}

std::size_t SimulatedClock::scheduled() const {
  std::lock_guard lock(mu_);
  return events_.size();
}

void SimulatedClock::advance_to(SteadyTime target) const {
  std::unique_lock lock(mu_);
  for (;;) {
    auto it = events_.begin();
    if (it == events_.end() || it->first > target) break;
    if (it->first > steady_) steady_ = it->first;
    auto event = std::move(it->second);
    events_.erase(it);
    lock.unlock();
    event();
    lock.lock();
  }
  if (target > steady_) steady_ = target;
}

bool SimulatedClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                                SteadyTime deadline, const std::function<bool()>& done) const {
  for (;;) {
    if (done()) return true;
    std::optional<SteadyTime> next;
    SteadyTime now;
    {
      std::lock_guard clock_lock(mu_);
      now = steady_;
      if (!events_.empty()) next = events_.begin()->first;
    }
    if (now >= deadline) return false;
    if (!next && deadline == SteadyTime::max()) {
      // Nothing on this clock will make it happen: another thread has to.
      cv.wait_for(lock, std::chrono::milliseconds(1));
      continue;
    }
    const SteadyTime target = next && *next < deadline ? std::max(*next, now) : deadline;
    // Events take the waiter's lock to hand over what they bring (and notify): release it.
    lock.unlock();
    advance_to(target);
    lock.lock();
  }
}

}  // namespace leadflow::testing
