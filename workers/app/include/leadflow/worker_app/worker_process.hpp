#pragma once
#include <memory>
#include <string>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/config.hpp"

namespace leadflow {

class Store;

/// A leadflow-worker process of the scale-out shape: the store (PostgreSQL), the Kafka consumer
/// group of the leads topic, LEADFLOW_WORKERS worker loops, the results-topic publisher, and a
/// plain-HTTP listener for /healthz, /readyz and /metrics (LEADFLOW_METRICS_LISTEN). Used by
/// leadflow-worker's main and by tests. start()/stop() from one thread.
class WorkerProcess {
 public:
  explicit WorkerProcess(Config config, const Clock& clock = SystemClock::instance());
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  bool start(std::string& error);
  /// Stops consuming, finishes in-flight auctions, records and commits them, flushes the producer.
  void stop();
  int metrics_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leadflow
