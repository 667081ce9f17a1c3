#include "kafka_cluster.hpp"

#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

namespace leadflow::testing {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string script() { return std::string(LEADFLOW_SOURCE_DIR) + "/scripts/kafka_cluster.sh"; }

}  // namespace

KafkaCluster::KafkaCluster()
    : KafkaCluster([] {
        if (const char* v = std::getenv("LEADFLOW_TEST_KAFKA_DIR"); v && *v) return std::string(v);
        return std::string(LEADFLOW_BINARY_DIR) + "/kafka";
      }()) {}

KafkaCluster::KafkaCluster(std::string dir)
    : dir_(std::move(dir)), bootstrap_(read_first_line(dir_ + "/bootstrap")) {}

int KafkaCluster::run_script(const std::string& args) const {
  const std::string cmd = script() + " " + args + " >>'" + dir_ + "/faults.log' 2>&1";
  return std::system(cmd.c_str());
}

pid_t KafkaCluster::pid(int node) const {
  const std::string line = read_first_line(dir_ + "/node" + std::to_string(node) + "/pid");
  if (line.empty()) return -1;
  const pid_t p = static_cast<pid_t>(std::atoi(line.c_str()));
  return p > 0 && ::kill(p, 0) == 0 ? p : -1;
}

void KafkaCluster::kill9(int node) { run_script("kill '" + dir_ + "' " + std::to_string(node)); }

bool KafkaCluster::restart(const std::vector<int>& nodes) {
  std::string args = "restart '" + dir_ + "'";
  for (const int n : nodes) args += " " + std::to_string(n);
  return run_script(args) == 0;
}

void KafkaCluster::pause(int node) {
  if (const pid_t p = pid(node); p > 0) ::kill(p, SIGSTOP);
}

void KafkaCluster::resume(int node) {
  if (const pid_t p = pid(node); p > 0) ::kill(p, SIGCONT);
}

int KafkaCluster::controller() const {
  const std::string cmd = script() + " controller '" + dir_ + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> out(::popen(cmd.c_str(), "r"), ::pclose);
  if (!out) return -1;
  char buf[64] = {};
  if (!std::fgets(buf, sizeof buf, out.get())) return -1;
  const int id = std::atoi(buf);
  return id >= 1 && id <= kNodes ? id : -1;
}

std::vector<PartitionState> KafkaCluster::partitions(const std::string& topic) const {
  std::vector<PartitionState> out;
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return out;
  }
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR && md) {
    for (int i = 0; i < md->topic_cnt; ++i) {
      const rd_kafka_metadata_topic_t& mt = md->topics[i];
      if (mt.err || topic != mt.topic) continue;
      for (int p = 0; p < mt.partition_cnt; ++p) {
        const rd_kafka_metadata_partition_t& mp = mt.partitions[p];
        PartitionState s;
        s.partition = mp.id;
        s.leader = mp.leader;
        s.replicas.assign(mp.replicas, mp.replicas + mp.replica_cnt);
        s.in_sync.assign(mp.isrs, mp.isrs + mp.isr_cnt);
        out.push_back(std::move(s));
      }
    }
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return out;
}

int KafkaCluster::main_leader(const std::string& topic) const {
  std::map<int, int> led;
  for (const auto& p : partitions(topic))
    if (p.leader >= 0) ++led[p.leader];
  int best = -1, most = 0;
  for (const auto& [node, n] : led)
    if (n > most) best = node, most = n;
  return best;
}

bool KafkaCluster::heal(const std::vector<std::string>& topics, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<int> down;
  for (int n = 1; n <= kNodes; ++n) {
    resume(n);
    if (pid(n) < 0) down.push_back(n);
  }
  if (!down.empty() && !restart(down)) return false;
  while (std::chrono::steady_clock::now() < deadline) {
    bool whole = true;
    for (const auto& topic : topics) {
      const auto parts = partitions(topic);
      if (parts.empty()) whole = false;
      for (const auto& p : parts)
        if (p.leader < 0 || p.in_sync.size() != p.replicas.size()) whole = false;
    }
    if (whole) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return false;
}

}  // namespace leadflow::testing
