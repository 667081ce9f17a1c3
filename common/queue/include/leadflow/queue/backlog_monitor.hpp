#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/queue/queue.hpp"

namespace leadflow {

/// The workers' backlog as the queue sees it, measured by a process that is not one of them (the
/// ingest), so that a backlog with no worker left to report it still shows: with Kafka, the
/// group's committed offsets against the log end, read from the brokers; embedded, the queue's
/// own offsets. It measures on a timer of its own, off the scrape and request paths, each reading
/// bounded by the queue's timeouts, and exports at each scrape:
///   leadflow_queue_backlog{source,group}                 records the group has not committed
///   leadflow_queue_backlog_stalled_seconds{source,group} how long records have waited while the
///                                                        group's position stood still; 0 when
///                                                        none wait
///   leadflow_queue_backlog_oldest_age_seconds{source,group}
///                                                        age of the oldest record waiting (its
///                                                        produce time at the last reading);
///                                                        0 when none wait, no sample when the
///                                                        queue cannot tell (an embedded record
///                                                        of the first format)
///   leadflow_queue_backlog_known{source,group}           1 when the last reading answered
/// While the queue cannot tell (a broker outage), the first two have no sample, so Prometheus
/// marks them stale instead of reading a backlog of 0. Thread-safe; `queue` and `clock` must
/// outlive it.
class BacklogMonitor {
 public:
  struct Options {
    std::string group;   // the workers' consumer group
    std::string source;  // the `source` label: "broker" (Kafka) or "embedded"
    std::chrono::milliseconds interval{10'000};
  };

  BacklogMonitor(LeadQueue& queue, const Clock& clock, Options options);
  /// Stops the timer and the scrape hook; waits for a reading under way (at most the queue's
  /// timeouts).
  ~BacklogMonitor();
  BacklogMonitor(const BacklogMonitor&) = delete;
  BacklogMonitor& operator=(const BacklogMonitor&) = delete;

  /// Measures now, then every interval on a thread of its own; adds the families to scrapes.
  void start();
  /// One reading, now (the timer's; tests call it on a simulated clock).
  void measure();
  /// The families of the last reading.
  void collect(std::vector<prometheus::MetricFamily>& families) const;

 private:
  LeadQueue& queue_;
  const Clock& clock_;
  const Options options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool known_ = false;
  std::int64_t records_ = 0;
  std::optional<std::int64_t> position_;  // the last position read
  SteadyTime progress_{};                 // when the position last moved, or nothing waited
  double stalled_seconds_ = 0;
  std::optional<std::int64_t> oldest_produced_ms_;

  std::thread timer_;
  std::unique_ptr<ScrapeHook> hook_;
};

}  // namespace leadflow
