#include "leadflow/auction/event_loop.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "leadflow/base/log.hpp"

namespace leadflow {

BlockingPool::BlockingPool(int threads) : thread_count_(std::max(1, threads)) {
  for (int i = 0; i < thread_count_; ++i) {
    threads_.emplace_back([this] {
      std::unique_lock lock(mu_);
      for (;;) {
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        auto task = std::move(tasks_.front().task);
        tasks_.pop_front();
        lock.unlock();
        const auto started = std::chrono::steady_clock::now();
        try {
          task();
        } catch (const std::exception& e) {
          log(LogLevel::kError, "blocking_task_failed", {{"error", e.what()}});
        }
        const std::chrono::nanoseconds took = std::chrono::steady_clock::now() - started;
        lock.lock();
        mean_run_ += (took - mean_run_) / 8;
      }
    });
  }
}

BlockingPool::~BlockingPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void BlockingPool::run(std::function<void()> task, SteadyTime queued_at) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back({queued_at, std::move(task)});
  }
  cv_.notify_one();
}

std::chrono::nanoseconds BlockingPool::expected_wait() const {
  std::lock_guard lock(mu_);
  if (tasks_.empty()) return std::chrono::nanoseconds{0};
  return mean_run_ * static_cast<std::int64_t>(tasks_.size()) / thread_count_;
}

std::optional<SteadyTime> BlockingPool::oldest_queued() const {
  std::lock_guard lock(mu_);
  if (tasks_.empty()) return std::nullopt;
  return tasks_.front().at;
}

EventLoop::EventLoop(const Clock& clock, int blocking_threads)
    : clock_(clock),
      core_(std::make_shared<Core>()),
      pool_(blocking_threads),
      thread_([this] { run(); }) {}

EventLoop::~EventLoop() {
  {
    std::lock_guard lock(core_->mu);
    core_->stopping = true;
  }
  core_->cv.notify_all();
  thread_.join();
  // The pool's destructor (next) finishes the blocking calls already out; what they post is
  // dropped with the loop.
}

void EventLoop::post(Task task) {
  {
    std::lock_guard lock(core_->mu);
    if (core_->stopping) return;
    core_->events.push_back(std::move(task));
  }
  core_->cv.notify_one();
}

std::function<void(EventLoop::Task)> EventLoop::poster() const {
  return [core = core_](Task task) {
    {
      std::lock_guard lock(core->mu);
      if (core->stopping) return;
      core->events.push_back(std::move(task));
    }
    core->cv.notify_one();
  };
}

void EventLoop::blocking(std::function<Task()> work) {
  {
    std::lock_guard lock(core_->mu);
    ++core_->blocking_out;
  }
  pool_.run(
      [core = core_, work = std::move(work)] {
        Task then;
        try {
          then = work();
        } catch (const std::exception& e) {
          log(LogLevel::kError, "blocking_call_failed", {{"error", e.what()}});
        }
        {
          // The continuation is queued before the call stops counting as out, so the loop never
          // sees "nothing out, nothing to run" in between and moves a simulated clock on too early.
          std::lock_guard lock(core->mu);
          --core->blocking_out;
          if (then && !core->stopping) core->events.push_back(std::move(then));
        }
        core->cv.notify_one();
      },
      clock_.steady_now());
}

std::chrono::nanoseconds EventLoop::blocking_wait() const {
  // The longer of how long the oldest call has waited and how long a call asked for now would
  // wait: the second sees a queue that thousands of auctions just joined, before any of them
  // has waited long.
  const std::chrono::nanoseconds expected = pool_.expected_wait();
  const std::optional<SteadyTime> oldest = pool_.oldest_queued();
  if (!oldest) return expected;
  return std::max(expected, std::chrono::nanoseconds{clock_.steady_now() - *oldest});
}

EventLoop::TimerId EventLoop::at(SteadyTime when, Task task) {
  const TimerId id = next_timer_++;
  timer_index_[id] = timers_.emplace(when, std::make_pair(id, std::move(task)));
  return id;
}

void EventLoop::cancel(TimerId id) {
  auto it = timer_index_.find(id);
  if (it == timer_index_.end()) return;
  timers_.erase(it->second);
  timer_index_.erase(it);
}

void EventLoop::hold() {
  std::lock_guard lock(core_->mu);
  ++core_->held;
}

void EventLoop::release() {
  std::lock_guard lock(core_->mu);
  --core_->held;
}

void EventLoop::run() {
  auto& core = *core_;
  std::unique_lock lock(core.mu);
  for (;;) {
    if (core.stopping) return;
    // Everything posted so far runs first, then the timers that were due when it was taken: an
    // answer that reached the loop before a deadline is never cut by it because the loop ran late.
    const SteadyTime now = clock_.steady_now();
    std::deque<Task> events;
    events.swap(core.events);
    const bool timers_due = !timers_.empty() && timers_.begin()->first <= now;
    if (timers_due || !events.empty()) {
      lock.unlock();
      for (auto& t : events) t();
      events.clear();
      // A timer an event cancelled or set is looked up now, not before the events ran.
      while (!timers_.empty() && timers_.begin()->first <= now) {
        auto it = timers_.begin();
        Task t = std::move(it->second.second);
        timer_index_.erase(it->second.first);
        timers_.erase(it);
        t();
      }
      lock.lock();
      continue;
    }
    const SteadyTime next = timers_.empty() ? SteadyTime::max() : timers_.begin()->first;
    auto ready = [&] { return core.stopping || !core.events.empty(); };
    if (core.held > 0 && core.blocking_out == 0) {
      clock_.wait_until(lock, core.cv, next, ready);
    } else if (next == SteadyTime::max()) {
      core.cv.wait(lock, ready);
    } else {
      core.cv.wait_for(lock, next - clock_.steady_now(), ready);
    }
  }
}

}  // namespace leadflow
