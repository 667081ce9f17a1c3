#pragma once
// Private: the threads that run the handlers which may wait (on a store, a queue, a buyer).
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace leadflow::http {

/// Runs tasks on a fixed set of threads. stop() runs what is queued, then joins. Owned by the
/// server; post() is thread-safe.
class BlockingPool {
 public:
  void start(int threads);
  /// From any thread.
  void post(std::function<void()> task);
  void stop();

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace leadflow::http
