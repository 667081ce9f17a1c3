#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/store.hpp"
#include "leadflow/auction/distributor.hpp"

namespace leadflow {

/// Writes decided outcomes in batches: many auction threads submit at once and share one
/// transaction (and one fsync). Thread-safe.
class OutcomeRecorder {
 public:
  explicit OutcomeRecorder(Store& store);
  ~OutcomeRecorder();
  /// Blocks until the outcome's batch is committed; returns the store's answer for it.
  StoreStatus record(OutcomeRecord outcome);

 private:
  struct Item {
    OutcomeRecord record;
    StoreStatus status = StoreStatus::kOk;
    bool done = false;
  };
  void run();

  Store& store_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::shared_ptr<Item>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

struct WorkerOptions {
  std::string group = "leadflow-workers";
  Topics topics;
  int concurrency = 64;  // auctions at once
  int max_attempts = 3;  // auctions of one lead that may throw before it is recorded failed
};

/// A distribution worker: consumes leads, records them pending, runs auctions on a pool of
/// threads, records outcomes, publishes them, and commits offsets only after the outcome is
/// recorded (at-least-once; the store keeps a redelivered lead from being sold twice).
/// start()/stop() from one thread; stop() finishes what is in flight and commits. Pauses (a store
/// it cannot reach) and the decide time it measures run on `clock`.
class Worker {
 public:
  Worker(LeadQueue& queue, Store& store, LeadDecider& distributor, OutcomePublisher& publisher,
         const Clock& clock, WorkerOptions options);
  ~Worker();
  void start();
  void stop();
  bool healthy() const { return healthy_.load(); }

 private:
  struct Job {
    QueueRecord record;
    Lead lead;
    SteadyTime consumed_at;
    bool already_decided = false;  // a redelivery of a decided lead: answer, sell nothing
  };
  void consume_loop();
  void auction_loop();
  void finish(const QueueRecord& record);
  void apply_commits();
  void drain_for_rebalance();
  /// The auction's outcome; nullopt when it threw and the lead went to the retry topic.
  std::optional<Distribution> decide_or_set_aside(const Job& job);
  void publish_stored(const std::string& lead_id);

  LeadQueue& queue_;
  Store& store_;
  LeadDecider& distributor_;
  OutcomePublisher& publisher_;
  const Clock& clock_;
  WorkerOptions options_;
  OutcomeRecorder recorder_;

  std::unique_ptr<QueueConsumer> consumer_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> healthy_{true};
  std::thread consume_thread_;
  std::vector<std::thread> auction_threads_;

  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_, space_cv_, drained_cv_;
  std::deque<Job> jobs_;
  int busy_ = 0;
  bool consumer_done_ = false;

  std::mutex offsets_mu_;
  std::map<std::pair<std::string, int>, OffsetTracker> trackers_;
  std::map<std::pair<std::string, int>, std::int64_t> to_commit_;
};

}  // namespace leadflow
