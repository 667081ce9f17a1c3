#pragma once
// The retention pass (docs/erasure.md): the personal data of leads received more than
// LEADFLOW_RETENTION_DAYS ago is erased, a bounded batch at a time, each lead in a transaction
// of its own, so intake never waits for more than one lead's erasure.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "leadflow/base/clock.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/erasure.hpp"
#include "leadflow/store/intake.hpp"

namespace leadflow {

/// Erases the leads a retention period has run out on. run_once() is one pass (tests call it
/// on a simulated clock); start() runs a pass now and then every `every` on a thread of its own
/// until the object is destroyed. Counts leadflow_leads_erased_total{cause="retention"} and sets
/// leadflow_retention_last_pass_timestamp_seconds after each whole pass. A lead still pending
/// when its time comes is skipped and taken by the first pass after a restart. Not copyable;
/// run_once is not to be called while the thread runs.
class RetentionPass {
 public:
  struct Options {
    int days = 0;     // LEADFLOW_RETENTION_DAYS; 0: the pass does nothing
    int batch = 500;  // leads read at a time
    /// The queue whose records of the leads erased are rewritten too, a batch at a time
    /// (erase_queued); none: the store alone.
    QueueProducer* queue = nullptr;
    Topics topics;
  };
  RetentionPass(IntakeStore& leads, ErasureStore& store, const Clock& clock, Options options);
  ~RetentionPass();
  RetentionPass(const RetentionPass&) = delete;
  RetentionPass& operator=(const RetentionPass&) = delete;

  /// One pass over the leads received before now - days: the number erased, or nullopt when
  /// the store failed (the next pass goes on from where this one stopped).
  std::optional<std::int64_t> run_once();
  void start(std::chrono::milliseconds every);

 private:
  IntakeStore& leads_;
  ErasureStore& store_;
  const Clock& clock_;
  const Options options_;
  /// Every lead received before it is erased or was pending when it was passed: a pass starts
  /// here rather than at the oldest lead, so the erased past is not read again and again.
  std::int64_t cursor_ms_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leadflow
