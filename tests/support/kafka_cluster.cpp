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

namespace {

// A short-lived client of the cluster, for the tests' questions; nullptr when it cannot be made.
std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> client_of(const std::string& bootstrap,
                                                             rd_kafka_type_t type,
                                                             const std::string& group = "") {
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  if (!group.empty()) {
    rd_kafka_conf_set(conf, "group.id", group.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) rd_kafka_conf_destroy(conf);
  return {rk, [](rd_kafka_t* h) {
            if (h) rd_kafka_destroy(h);
          }};
}

}  // namespace

std::string KafkaCluster::add_partitions(const std::string& topic, int total) const {
  auto rk = client_of(bootstrap_, RD_KAFKA_PRODUCER);
  if (!rk) return "no client";
  char err[256];
  rd_kafka_NewPartitions_t* np = rd_kafka_NewPartitions_new(topic.c_str(), total, err, sizeof err);
  if (!np) return err;
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk.get());
  rd_kafka_CreatePartitions(rk.get(), &np, 1, nullptr, q);
  std::string error = "no answer";
  if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 15000)) {
    if (rd_kafka_event_error(ev)) {
      error = rd_kafka_event_error_string(ev);
    } else if (const auto* res = rd_kafka_event_CreatePartitions_result(ev)) {
      size_t n = 0;
      const rd_kafka_topic_result_t** topics = rd_kafka_CreatePartitions_result_topics(res, &n);
      error = n == 1 && !rd_kafka_topic_result_error(topics[0])
                  ? ""
                  : (n == 1 ? rd_kafka_topic_result_error_string(topics[0]) : "no topic result");
    }
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_NewPartitions_destroy(np);
  return error;
}

std::vector<std::int64_t> KafkaCluster::end_offsets(const std::string& topic,
                                                    int partitions) const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(partitions), -1);
  auto rk = client_of(bootstrap_, RD_KAFKA_PRODUCER);
  if (!rk) return out;
  for (int p = 0; p < partitions; ++p) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), p, &low, &high, 5000) ==
        RD_KAFKA_RESP_ERR_NO_ERROR)
      out[static_cast<std::size_t>(p)] = high;
  }
  return out;
}

std::vector<std::int64_t> KafkaCluster::committed(const std::string& group,
                                                  const std::string& topic, int partitions) const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(partitions), -1);
  // A consumer of the group that never subscribes: it joins nothing and only reads the offsets.
  auto rk = client_of(bootstrap_, RD_KAFKA_CONSUMER, group);
  if (!rk) return out;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  if (rd_kafka_committed(rk.get(), list, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < list->cnt; ++i)
      if (list->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR && list->elems[i].offset >= 0)
        out[static_cast<std::size_t>(list->elems[i].partition)] = list->elems[i].offset;
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_consumer_close(rk.get());
  return out;
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
