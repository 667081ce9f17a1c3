#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "leadflow/base/clock.hpp"

namespace leadflow {

/// Threads for calls that block (the store, the queue's producer), so that the event loop that
/// drives auctions never waits on them. Tasks run in the order given, on any of `threads`.
/// Thread-safe; the destructor runs what is queued, then joins.
class BlockingPool {
 public:
  explicit BlockingPool(int threads);
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;
  /// Queues `task`; `queued_at` is when it was asked for, as oldest_queued() reports it.
  void run(std::function<void()> task, SteadyTime queued_at = SteadyTime{});
  /// When the task waiting longest for a thread was queued; nullopt while none waits.
  std::optional<SteadyTime> oldest_queued() const;
  /// How long a task queued now would wait for a thread: the tasks waiting, times how long a
  /// task has taken of late (real time), over the threads. Zero while none waits.
  std::chrono::nanoseconds expected_wait() const;

 private:
  struct Queued {
    SteadyTime at;
    std::function<void()> task;
  };
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> tasks_;
  const int thread_count_;
  std::chrono::nanoseconds mean_run_{0};  // of the tasks run, weighted to the recent ones
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

/// The thread that runs auctions as events: answers from buyers (HTTP client callbacks), timers
/// on a Clock (a pause between re-asks, the auction deadline), and the continuations of blocking
/// store calls, which run on its own BlockingPool. One thread serves thousands of auctions; an
/// auction holds memory, never a thread.
///
/// Time: timers run on `clock`. While some auction is waiting (hold()) and no blocking call is
/// out, the loop waits on the clock, so a simulated clock jumps straight to the next buyer's
/// answer or timer. While a blocking call is out, or nothing is held, it waits in real time for
/// the next event: a simulated clock never runs ahead of a store call in progress. Each turn
/// runs what was posted before the timers then due, so a loop that ran late never lets a
/// deadline cut an answer that had already reached it.
///
/// post() and blocking() are thread-safe; at()/cancel() are for the loop thread only. Events
/// posted after the loop is destroyed are dropped (an HTTP answer arriving late is harmless).
class EventLoop {
 public:
  using Task = std::function<void()>;
  using TimerId = std::uint64_t;

  EventLoop(const Clock& clock, int blocking_threads);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  /// Runs `task` on the loop thread, after the events already posted.
  void post(Task task);
  /// A function that posts to this loop and stays safe to call after the loop is gone.
  std::function<void(Task)> poster() const;
  /// Runs `work` on the blocking pool; the Task it returns then runs on the loop.
  void blocking(std::function<Task()> work);
  /// How long blocking calls wait for a thread of the pool: the longer of how long the oldest
  /// waiting has waited (on the loop's clock) and BlockingPool::expected_wait(); zero while
  /// none waits. Any thread.
  std::chrono::nanoseconds blocking_wait() const;
  /// Runs `task` on the loop once the clock reaches `at`. Loop thread only.
  TimerId at(SteadyTime at, Task task);
  /// Forgets a timer that has not run. Loop thread only.
  void cancel(TimerId id);
  /// Something (an auction) waits for events driven by the clock; release() when it no longer does.
  void hold();
  void release();
  const Clock& clock() const { return clock_; }

 private:
  struct Core {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Task> events;
    int blocking_out = 0;
    int held = 0;
    bool stopping = false;
  };
  void run();

  const Clock& clock_;
  std::shared_ptr<Core> core_;
  std::multimap<SteadyTime, std::pair<TimerId, Task>> timers_;  // loop thread only
  std::map<TimerId, std::multimap<SteadyTime, std::pair<TimerId, Task>>::iterator> timer_index_;
  TimerId next_timer_ = 1;
  BlockingPool pool_;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace leadflow
