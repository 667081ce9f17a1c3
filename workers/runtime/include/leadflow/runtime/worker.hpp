#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "leadflow/auction/distributor.hpp"
#include "leadflow/auction/event_loop.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/runtime/auction_window.hpp"
#include "leadflow/store/intake.hpp"

namespace leadflow {

/// Writes decided outcomes in batches: many auctions submit at once and share one transaction
/// (and one fsync). An outcome the store cannot take now (kUnavailable) is tried again after a
/// pause on `clock`, unless give_up() was called, in which case it is answered kUnavailable.
/// Thread-safe; `done` runs on the recorder's thread.
class OutcomeRecorder {
 public:
  OutcomeRecorder(IntakeStore& store, const Clock& clock);
  ~OutcomeRecorder();
  void record(OutcomeRecord outcome, std::function<void(StoreStatus)> done);
  /// From now on an outcome the store cannot take is answered kUnavailable, not tried again.
  void give_up();

 private:
  struct Item {
    OutcomeRecord record;
    std::function<void(StoreStatus)> done;
  };
  void run();

  IntakeStore& store_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::vector<Item> queue_;
  bool stopping_ = false;
  bool give_up_ = false;
  std::thread thread_;
};

/// The leads a worker holds (taken from the queue, their offsets not yet done) by the time the
/// ingest accepted each, so that the oldest one's age can be read from any thread. A lead stays
/// here through its auction, the recording of its outcome and a retry or dead-letter produce.
class HeldLeads {
 public:
  void add(const QueueRecord& record, std::int64_t received_at_ms);
  /// A record never added (one no worker could read) is ignored.
  void remove(const QueueRecord& record);
  /// When the oldest lead held was accepted; nullopt when none is held.
  std::optional<std::int64_t> oldest_received_ms() const;

 private:
  using Key = std::tuple<std::string, int, std::int64_t>;  // topic, partition, offset
  mutable std::mutex mu_;
  std::map<Key, std::int64_t> by_record_;
  std::multiset<std::int64_t> received_;
};

struct WorkerOptions {
  std::string group = "leadflow-workers";
  Topics topics;
  int concurrency = 10000;  // auctions in flight at once, at most
  /// Auctions in flight at once when the worker starts: the window then doubles each time they
  /// finish in time, up to the concurrency, and halves when the decider's own work falls behind
  /// (LeadDecider::times_behind; leadflow/runtime/auction_window.hpp).
  int first_window = 64;
  /// While the decider's own work has waited this long (LeadDecider::own_backlog: its store
  /// calls, its requests for a connection), no new auction starts unless none runs: the leads
  /// read ahead wait in the queue's order, and an auction in its buyers' time does not wait
  /// behind the work of thousands just taken in.
  std::chrono::milliseconds own_backlog_limit{500};
  int max_attempts = 3;  // auctions of one lead that may fail before it is recorded failed
  /// The installation's secret (Store::shared_secret kInstallationSecretName), which keys the
  /// search keys of the leads the worker records (leadflow/domain/lead_search.hpp); "": the
  /// leads are found by id only.
  std::string search_secret;
};

/// A distribution worker: consumes leads, records them pending, hands them to the decider
/// (auctions run as events, thousands at once), records outcomes in batches, publishes them, and
/// commits offsets only after the outcome is recorded (at-least-once; the store keeps a
/// redelivered lead from being sold twice). Backpressure: at most `concurrency` auctions are in
/// flight, and the worker reads ahead at most one batch beyond them (min(256, concurrency)
/// records); the queue, not memory, holds the backlog. start()/stop() from one thread; stop()
/// finishes what is in flight and commits. Pauses (a store it cannot reach) and the decide time it
/// measures run on `clock`.
class Worker {
 public:
  Worker(LeadQueue& queue, IntakeStore& store, LeadDecider& distributor,
         OutcomePublisher& publisher, const Clock& clock, WorkerOptions options);
  ~Worker();
  void start();
  void stop();
  bool healthy() const { return healthy_.load(); }
  /// Records held now: auctions in flight (at most the concurrency), the read-ahead waiting
  /// beside them (at most one batch), leads being recorded.
  int held() const;
  /// Auctions running now (at most the concurrency). Any thread.
  int running() const;
  /// Auctions it lets run at once now (AuctionWindow, never above the concurrency). Any thread.
  int window() const;
  /// Whether leads read ahead wait for an auction slot (the auctions are at the concurrency):
  /// then re-offers of unsold leads take no slot. Any thread.
  bool leads_waiting() const;
  /// When the oldest lead held now was accepted (see HeldLeads). Any thread.
  std::optional<std::int64_t> oldest_held_received_ms() const {
    return held_leads_.oldest_received_ms();
  }
  /// The group's lag on the partitions this worker owns (QueueConsumer::lag). Any thread,
  /// between start() and stop().
  std::vector<PartitionLag> lag() const;

 private:
  struct Job {
    QueueRecord record;
    Lead lead;
    SteadyTime consumed_at;
    bool already_decided = false;  // a redelivery of a decided lead: answer, sell nothing
  };
  void consume_loop();
  void start_job(std::shared_ptr<Job> job);
  void on_decided(std::shared_ptr<Job> job, Decision decision);
  /// `reoffer_at_ms`: an unsold lead's first re-offer (0: none), scheduled with the outcome.
  void record(std::shared_ptr<Job> job, Distribution d, std::int64_t reoffer_at_ms = 0);
  /// Retry topic, or failed and dead-lettered after the last attempt. Blocking.
  void set_aside(std::shared_ptr<Job> job, const std::string& error, Distribution tried);
  /// A lead the store refused for good: written without the person's fields and recorded
  /// failed where the store takes that, set aside on the dead-letter topic, committed. Blocking.
  void refuse(const QueueRecord& record, const Lead& lead, const std::string& refusal,
              SteadyTime consumed_at);
  /// Back to the retry topic under the same attempt number. Blocking.
  void defer(std::shared_ptr<Job> job, const std::string& error);
  /// A held record is over: commit its offset if `done`, start the next lead waiting if it was
  /// `started`, and let the consumer read one more.
  void release(const QueueRecord& record, bool done, bool started = true);
  /// Under held_mu_: the next lead read ahead that may start its auction now (a slot free, and
  /// the worker keeping up unless nothing runs), counted as running; nullptr if none may.
  std::shared_ptr<Job> admit_locked(bool behind);
  /// Whether the decider's own work waits past own_backlog_limit. Any thread, no lock held.
  bool behind_itself() const;
  void apply_commits();
  void drain_for_rebalance();
  void publish_stored(const std::string& lead_id);

  LeadQueue& queue_;
  IntakeStore& store_;
  LeadDecider& distributor_;
  OutcomePublisher& publisher_;
  const Clock& clock_;
  WorkerOptions options_;
  OutcomeRecorder recorder_;
  BlockingPool side_{2};  // produce to the retry and dead-letter topics, re-announcements

  std::unique_ptr<QueueConsumer> consumer_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> healthy_{true};
  std::thread consume_thread_;

  mutable std::mutex held_mu_;
  std::condition_variable space_cv_;
  int held_ = 0;                              // records from the poll until their offset is done
  int running_ = 0;                           // of which started (at most the concurrency)
  std::deque<std::shared_ptr<Job>> waiting_;  // read ahead, not started yet
  AuctionWindow window_;
  std::uint64_t times_behind_seen_ = 0;  // LeadDecider::times_behind at the last auction's end
  HeldLeads held_leads_;

  std::mutex offsets_mu_;
  std::map<std::pair<std::string, int>, OffsetTracker> trackers_;
  std::map<std::pair<std::string, int>, std::int64_t> to_commit_;
};

}  // namespace leadflow
