#pragma once
#include <memory>
#include <string>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/config.hpp"

namespace leadflow {

class Store;
class Management;

/// The whole embedded-default process: store, durable queue, in-process distribution workers,
/// and the HTTPS (and optional plain-HTTP and metrics) listeners. Used by leadflow-ingest's main
/// and by the integration tests, so both run the same wiring. start()/stop() from one thread.
class App {
 public:
  explicit App(Config config, const Clock& clock = SystemClock::instance());
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  /// Opens everything and starts listening. Ports of 0 pick free ones (see the *_port getters).
  bool start(std::string& error);
  /// Stops accepting, finishes in-flight requests and auctions, flushes the queue, commits.
  void stop();

  int tls_port() const;
  int http_port() const;     // 0 when no plain listener
  int metrics_port() const;  // 0 when no metrics listener
  Store& store();
  Management& management();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leadflow
