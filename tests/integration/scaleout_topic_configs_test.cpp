// The topics leadflow creates itself on a real three-node Kafka carry the retention and segment
// settings the manifests give theirs (LEADFLOW_KAFKA_RETENTION_MS, _DEAD_RETENTION_MS,
// _SEGMENT_MS; docs/erasure.md), read back from the brokers with the admin API's
// DescribeConfigs, not the broker's defaults. And a tail reader of a topic hears the partitions
// added to it while it runs.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kafka_cluster.hpp"
#include "leadflow/base/config.hpp"
#include "leadflow/queue/open_queue.hpp"

namespace leadflow::testing {
namespace {

using Configs = std::map<std::string, std::string>;

/// An admin client of the cluster: describes and deletes topics.
class Admin {
 public:
  explicit Admin(const std::string& bootstrap) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char why[512];
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), why, sizeof why);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
    if (!rk_) rd_kafka_conf_destroy(conf);
  }
  ~Admin() {
    if (rk_) rd_kafka_destroy(rk_);
  }
  bool ok() const { return rk_ != nullptr; }

  /// Every config of `topic` as its brokers answer, empty on no answer. A topic just created is
  /// known to its controller first and to the other brokers a moment later (one that has not
  /// heard of it yet answers UNKNOWN_TOPIC_OR_PART), so this asks again for up to 15 seconds.
  Configs describe(const std::string& topic) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    for (;;) {
      Configs out = describe_once(topic);
      if (!out.empty() || std::chrono::steady_clock::now() > deadline) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  void remove(const std::vector<std::string>& topics) {
    std::vector<rd_kafka_DeleteTopic_t*> del;
    for (const auto& t : topics) del.push_back(rd_kafka_DeleteTopic_new(t.c_str()));
    rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
    rd_kafka_DeleteTopics(rk_, del.data(), del.size(), nullptr, q);
    if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 15000)) rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteTopic_destroy_array(del.data(), del.size());
  }

 private:
  Configs describe_once(const std::string& topic) {
    Configs out;
    rd_kafka_ConfigResource_t* res =
        rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
    rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
    rd_kafka_DescribeConfigs(rk_, &res, 1, nullptr, q);
    rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 15000);
    if (ev && !rd_kafka_event_error(ev)) {
      size_t n = 0;
      const rd_kafka_ConfigResource_t** rs =
          rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev), &n);
      for (size_t i = 0; i < n; ++i) {
        size_t m = 0;
        const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(rs[i], &m);
        for (size_t j = 0; j < m; ++j) {
          const char* v = rd_kafka_ConfigEntry_value(entries[j]);
          out[rd_kafka_ConfigEntry_name(entries[j])] = v ? v : "";
          if (rd_kafka_ConfigEntry_is_default(entries[j]))
            out[std::string(rd_kafka_ConfigEntry_name(entries[j])) + "#default"] = "1";
        }
      }
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_ConfigResource_destroy(res);
    return out;
  }

  rd_kafka_t* rk_ = nullptr;
};

/// The configuration of a process with these LEADFLOW_* settings.
Config config_with(const std::map<std::string, std::string>& env) {
  std::vector<std::string> names;
  for (const auto& [k, v] : env) names.push_back(k);
  std::string error;
  auto c = load_config(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      names, error);
  EXPECT_TRUE(c) << error;
  return c.value_or(Config{});
}

TEST(ScaleOutTopics, TheTopicsLeadflowCreatesGetTheConfiguredRetentionAndSegments) {
  KafkaCluster cluster;
  ASSERT_FALSE(cluster.bootstrap().empty()) << "no Kafka cluster (the kafka_start fixture)";
  Admin admin(cluster.bootstrap());
  ASSERT_TRUE(admin.ok());
  const std::string run = std::to_string(::getpid());

  struct Case {
    std::map<std::string, std::string> settings;
    std::string retention, dead_retention, segment;
  };
  const std::vector<Case> cases = {
      // Set: two days, nine days for the dead letters, segments of three hours.
      {{{"LEADFLOW_KAFKA_RETENTION_MS", "172800000"},
        {"LEADFLOW_KAFKA_DEAD_RETENTION_MS", "777600000"},
        {"LEADFLOW_KAFKA_SEGMENT_MS", "10800000"}},
       "172800000",
       "777600000",
       "10800000"},
      // Unset: the manifests' week, 30 days and a day.
      {{}, "604800000", "2592000000", "86400000"},
  };
  for (std::size_t n = 0; n < cases.size(); ++n) {
    auto env = cases[n].settings;
    env["LEADFLOW_QUEUE"] = "kafka://" + cluster.bootstrap();
    env["LEADFLOW_TOPIC_PREFIX"] = "cfg" + run + "-" + std::to_string(n);
    env["LEADFLOW_QUEUE_PARTITIONS"] = "2";
    const Config c = config_with(env);
    const Topics t = topics_for(c);
    const std::vector<std::string> all = {t.leads, t.results, t.retry, t.dead};
    {
      std::string error;
      auto q = open_queue(c, error);
      ASSERT_NE(q, nullptr) << error;
    }
    for (const std::string& topic : all) {
      const Configs got = admin.describe(topic);
      ASSERT_FALSE(got.empty()) << topic << ": no configs answered";
      const std::string& retention = topic == t.dead ? cases[n].dead_retention : cases[n].retention;
      EXPECT_EQ(got.count("retention.ms#default"), 0u) << topic << ": the broker's default";
      EXPECT_EQ(got.at("retention.ms"), retention) << topic;
      EXPECT_EQ(got.count("segment.ms#default"), 0u) << topic << ": the broker's default";
      EXPECT_EQ(got.at("segment.ms"), cases[n].segment) << topic;
      EXPECT_EQ(got.at("cleanup.policy"), "delete") << topic;
    }
    // A topic that exists keeps its own: opening again with other settings changes nothing.
    if (n == 0) {
      env["LEADFLOW_KAFKA_RETENTION_MS"] = "3600000";
      std::string error;
      auto again = open_queue(config_with(env), error);
      ASSERT_NE(again, nullptr) << error;
      EXPECT_EQ(admin.describe(t.leads).at("retention.ms"), "172800000");
    }
    admin.remove(all);
  }
}

// The tail reader (the ingest's reader of the results topic where its store cannot announce
// outcomes) hears what lands on partitions added to its topic after it began.
TEST(ScaleOutTopics, ATailReaderHearsWhatLandsOnPartitionsAddedWhileItRuns) {
  KafkaCluster cluster;
  ASSERT_FALSE(cluster.bootstrap().empty()) << "no Kafka cluster (the kafka_start fixture)";
  Admin admin(cluster.bootstrap());
  ASSERT_TRUE(admin.ok());
  const Config c = config_with({{"LEADFLOW_QUEUE", "kafka://" + cluster.bootstrap()},
                                {"LEADFLOW_TOPIC_PREFIX", "tail" + std::to_string(::getpid())},
                                {"LEADFLOW_QUEUE_PARTITIONS", "2"}});
  const Topics t = topics_for(c);
  std::string error;
  auto queue = open_queue(c, error);
  ASSERT_NE(queue, nullptr) << error;
  // The topic's leaders are elected before the reader looks for its partitions' ends: a record
  // written with acks=all says they are (a lookup that finds none falls back to the end as the
  // reader's first fetch finds it, which may pass records written meanwhile).
  ASSERT_EQ(queue->producer().produce(t.results, "warm", "warm", std::chrono::seconds(30)),
            ProduceStatus::kOk);
  auto tail = queue->make_tail_consumer({t.results});
  ASSERT_NE(tail, nullptr);
  ASSERT_EQ(cluster.add_partitions(t.results, 4), "");

  // Writers made from now on see the four partitions once the brokers do: each round's records
  // go out from a new one until one of them is heard from an added partition.
  std::set<std::string> sent, heard;
  bool heard_added = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int round = 0; !heard_added && std::chrono::steady_clock::now() < deadline; ++round) {
    auto writer = open_queue(c, error);
    ASSERT_NE(writer, nullptr) << error;
    for (int i = 0; i < 20; ++i) {
      const std::string key = "r" + std::to_string(round) + "-" + std::to_string(i);
      ASSERT_EQ(writer->producer().produce(t.results, key, key, std::chrono::seconds(10)),
                ProduceStatus::kOk);
      sent.insert(key);
    }
    const auto round_end = std::chrono::steady_clock::now() + std::chrono::seconds(8);
    while (std::chrono::steady_clock::now() < round_end && heard.size() < sent.size()) {
      if (auto r = tail->poll(std::chrono::milliseconds(200))) {
        heard.insert(r->key);
        heard_added = heard_added || r->partition >= 2;
      }
    }
  }
  EXPECT_TRUE(heard_added) << "nothing was heard from the partitions added";
  const auto rest = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (heard.size() < sent.size() && std::chrono::steady_clock::now() < rest)
    if (auto r = tail->poll(std::chrono::milliseconds(200))) heard.insert(r->key);
  EXPECT_EQ(heard, sent) << "records on the partitions it began with or those added were lost";
  tail->close();
  admin.remove({t.leads, t.results, t.retry, t.dead});
}

}  // namespace
}  // namespace leadflow::testing
