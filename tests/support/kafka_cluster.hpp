#pragma once
// The real Apache Kafka cluster the tests share: three KRaft nodes on loopback, started once per
// test run by the `kafka` CTest fixture (scripts/kafka_cluster.sh, docs/kafka.md). A test reaches
// it through this class, and hurts it only through it, so that it can heal it again for the next.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace leadflow::testing {

/// One partition as the cluster's metadata describes it.
struct PartitionState {
  int partition = 0;
  int leader = -1;  // node id, -1 while it has none
  std::vector<int> replicas, in_sync;
};

class KafkaCluster {
 public:
  static constexpr int kNodes = 3;

  /// The cluster in $LEADFLOW_TEST_KAFKA_DIR, else the fixture's ${build}/kafka.
  KafkaCluster();
  explicit KafkaCluster(std::string dir);

  /// host:port,host:port,host:port, or "" when no cluster runs there (the fixture did not run).
  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& dir() const { return dir_; }

  /// Node n's JVM (1..kNodes), or -1 when it is not running.
  pid_t pid(int node) const;
  /// kill -9 of node n; its data and ports stay for restart().
  void kill9(int node);
  /// Starts node n again if it is not running, and waits until its broker answers.
  bool restart(int node) { return restart(std::vector<int>{node}); }
  /// The same for several nodes at once: nodes that need each other for a quorum (after the
  /// whole cluster died) must start together.
  bool restart(const std::vector<int>& nodes);
  /// SIGSTOP / SIGCONT of node n: a node that stops answering without closing a connection.
  void pause(int node);
  void resume(int node);

  /// The node id of the active controller (the metadata quorum's leader), or -1.
  int controller() const;
  /// The partitions of `topic` as a broker's metadata answer describes them; empty on no answer.
  std::vector<PartitionState> partitions(const std::string& topic) const;
  /// The node that leads most of `topic`'s partitions (ties: the lowest id), or -1.
  int main_leader(const std::string& topic) const;

  /// Grows `topic` to `total` partitions (the admin API's CreatePartitions); "" or the error.
  std::string add_partitions(const std::string& topic, int total) const;
  /// Each partition's log end offset (the high watermark), -1 where no broker answered.
  std::vector<std::int64_t> end_offsets(const std::string& topic, int partitions) const;
  /// The offsets `group` committed on each partition, -1 where it committed none.
  std::vector<std::int64_t> committed(const std::string& group, const std::string& topic,
                                      int partitions) const;

  /// Every node running and not paused, and every partition of `topics` led and with all its
  /// replicas in sync again, within `limit`. What a test that hurt the cluster calls before it
  /// ends, so that the next test starts on a whole cluster.
  bool heal(const std::vector<std::string>& topics, std::chrono::seconds limit);

 private:
  int run_script(const std::string& args) const;

  std::string dir_, bootstrap_;
};

}  // namespace leadflow::testing
