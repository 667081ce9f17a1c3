#pragma once
// The scale-out shape for real: two leadflow-ingest and two leadflow-worker processes sharing the
// real Apache Kafka cluster of the `kafka` fixture (three KRaft nodes, KafkaCluster) and a real
// PostgreSQL server, with buyer simulators on loopback. Each test has its own database, its own
// topics (LEADFLOW_TOPIC_PREFIX) and its own worker group on the shared cluster; a test that hurts
// the cluster heals it before it ends. Used by tests/integration/scaleout_*_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <httplib.h>

#include "child_process.hpp"
#include "kafka_cluster.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {

/// One process of the deployment, restartable with the same settings.
struct Node {
  std::string binary;
  std::map<std::string, std::string> env;
  std::unique_ptr<ChildProcess> process;
  int port = 0;  // TLS port (ingest) or metrics port (worker)
  int metrics_port = 0;

  void start();
};

/// What a stream of posts saw while a fault ran.
struct StreamReport {
  std::size_t acknowledged = 0, acknowledged_b = 0, refused = 0;
  double redeliveries = 0;
  /// The slowest acknowledged post, and the median one, in ms.
  double slowest_ms = 0, median_ms = 0;
  /// Of the posts not acknowledged: those answered 503, those with no answer (a client timeout
  /// or a connection refused), and the slowest of them in ms.
  std::size_t refused_503 = 0, refused_no_answer = 0;
  double slowest_refused_ms = 0;
  /// The longest stretch with no post acknowledged, from the fault's start on, in ms: how long
  /// until posts were acknowledged again.
  double longest_gap_ms = 0;
};

class ScaleOut : public ::testing::Test {
 protected:
  /// A test that restarts PostgreSQL runs its own server, so tests running beside it keep theirs.
  virtual bool own_postgres() const { return false; }
  /// Settings every process of the deployment gets besides the fixture's own.
  virtual void more_env(std::map<std::string, std::string>& /*env*/) const {}

  std::string pg_script(const std::string& verb) const;
  void SetUp() override;
  void TearDown() override;

  httplib::Headers auth(const std::string& key = "") const;
  std::unique_ptr<httplib::SSLClient> client(int i) const;
  /// Starts worker i's process (again), or one more worker when i == workers_.size().
  void start_worker(std::size_t i);
  /// A worker metric's value (the sum of its series), read from its /metrics.
  double worker_metric(int i, const std::string& name) const;
  /// Waits until every lead in `ids` has a final status in the store; returns the ones that
  /// have none.
  std::vector<std::string> not_final_after(const std::set<std::string>& ids,
                                           std::chrono::seconds limit);
  /// Lead ids posted (and accepted) by more than one buyer: a lead sold twice.
  std::vector<std::string> sold_twice() const;
  /// Leads in `ids` whose final status is not `delivered`: the buyers always bid and accept, so
  /// any other outcome was decided by a fault of ours.
  std::vector<std::string> not_delivered(const std::set<std::string>& ids) const;

  /// Streams async Surface A and Surface B posts over both ingest processes while `fault` runs,
  /// then checks that every acknowledged lead reached a final status, delivered, and none was
  /// sold twice. `after` is how long the stream goes on after the fault.
  StreamReport stream_through(const std::function<void()>& fault,
                              std::chrono::seconds after = std::chrono::seconds(4));

  /// The topics of this test on the shared cluster.
  std::string topic(const std::string& suffix) const { return prefix_ + suffix; }
  std::vector<std::string> topics() const;

  TempDir dir_;
  KafkaCluster kafka_;
  std::string admin_url_, database_, store_url_, prefix_, key_;
  std::map<std::string, std::string> common_env_;
  std::vector<std::unique_ptr<BuyerSimulator>> sims_;
  std::vector<Node> ingest_, workers_;
  std::unique_ptr<Store> store_;
};

}  // namespace leadflow::testing
