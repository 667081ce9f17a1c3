// A consumer group's lag per partition: from the embedded queue's own offsets, and from
// librdkafka's statistics.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <tuple>

#include "leadflow/queue/embedded_queue.hpp"
#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;

// Shaped like librdkafka 2.0's statistics of a consumer: two partitions it wants, one it has
// committed nothing on yet, one whose high watermark is not known yet, one it no longer wants,
// and the internal "unassigned" partition (-1).
constexpr const char* kStatistics = R"({
  "name": "leadflow#consumer-1", "type": "consumer", "ts": 1, "time": 1700000000,
  "brokers": {},
  "topics": {
    "leadflow.leads": {
      "topic": "leadflow.leads", "age": 5000,
      "partitions": {
        "0": {"partition": 0, "desired": true, "fetch_state": "active", "lo_offset": 0,
              "hi_offset": 120, "committed_offset": 100, "consumer_lag": 20},
        "1": {"partition": 1, "desired": true, "fetch_state": "active", "lo_offset": 30,
              "hi_offset": 45, "committed_offset": -1001, "consumer_lag": -1},
        "2": {"partition": 2, "desired": true, "fetch_state": "offset-query", "lo_offset": -1,
              "hi_offset": -1, "committed_offset": -1001, "consumer_lag": -1},
        "3": {"partition": 3, "desired": false, "fetch_state": "none", "lo_offset": 0,
              "hi_offset": 99, "committed_offset": 10, "consumer_lag": 89},
        "-1": {"partition": -1, "desired": false, "fetch_state": "none", "lo_offset": -1,
               "hi_offset": -1, "committed_offset": -1001, "consumer_lag": -1}
      }
    },
    "leadflow.leads.retry": {
      "topic": "leadflow.leads.retry",
      "partitions": {
        "0": {"partition": 0, "desired": true, "lo_offset": 0, "hi_offset": 7,
              "committed_offset": 7, "consumer_lag": 0}
      }
    }
  }
})";

TEST(KafkaStatisticsLag, TakesThePartitionsTheConsumerWantsWithKnownOffsets) {
  auto lag = lag_from_kafka_statistics(kStatistics);
  ASSERT_EQ(lag.size(), 3u);
  std::sort(lag.begin(), lag.end(), [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  EXPECT_EQ(lag[0].topic, "leadflow.leads");
  EXPECT_EQ(lag[0].partition, 0);
  EXPECT_EQ(lag[0].end, 120);
  EXPECT_EQ(lag[0].committed, 100);
  EXPECT_EQ(lag[0].lag(), 20);
  // Nothing committed yet: the group starts at the log's start.
  EXPECT_EQ(lag[1].partition, 1);
  EXPECT_EQ(lag[1].committed, 30);
  EXPECT_EQ(lag[1].lag(), 15);
  EXPECT_EQ(lag[2].topic, "leadflow.leads.retry");
  EXPECT_EQ(lag[2].lag(), 0);
}

TEST(KafkaStatisticsLag, IgnoresWhatIsNotStatistics) {
  EXPECT_TRUE(lag_from_kafka_statistics("").empty());
  EXPECT_TRUE(lag_from_kafka_statistics("{\"topics\": [1, 2]}").empty());
  EXPECT_TRUE(lag_from_kafka_statistics("not json").empty());
  EXPECT_TRUE(
      lag_from_kafka_statistics(
          R"({"topics": {"t": {"partitions": {"0": {"partition": "0", "desired": "yes"}}}}})")
          .empty());
}

TEST(PartitionLag, NeverNegative) {
  EXPECT_EQ((PartitionLag{"t", 0, 10, 4}).lag(), 6);
  EXPECT_EQ((PartitionLag{"t", 0, 4, 10}).lag(), 0);
}

TEST(EmbeddedQueueLag, ProducedAgainstCommittedOnTheConsumersPartitions) {
  std::string tmpl = "/tmp/leadflow-lag-test-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl.data());
  {
    EmbeddedQueueOptions o;
    o.dir = dir;
    o.partitions = 1;
    std::string error;
    auto queue = open_embedded_queue(o, error);
    ASSERT_NE(queue, nullptr) << error;
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(queue->producer().produce("leads", "k" + std::to_string(i), "v", 5s),
                ProduceStatus::kOk);
    }
    auto consumer = queue->make_consumer("g", {"leads"});
    auto lag = consumer->lag();
    ASSERT_EQ(lag.size(), 1u);
    EXPECT_EQ(lag[0].topic, "leads");
    EXPECT_EQ(lag[0].end, 5);
    EXPECT_EQ(lag[0].committed, 0);
    // Read and not committed is still lag: only a commit moves it.
    ASSERT_TRUE(consumer->poll(1s).has_value());
    ASSERT_TRUE(consumer->poll(1s).has_value());
    EXPECT_EQ(consumer->lag()[0].lag(), 5);
    consumer->commit("leads", 0, 2);
    EXPECT_EQ(consumer->lag()[0].committed, 2);
    EXPECT_EQ(consumer->lag()[0].lag(), 3);
    ASSERT_EQ(queue->producer().produce("leads", "k5", "v", 5s), ProduceStatus::kOk);
    EXPECT_EQ(consumer->lag()[0].lag(), 4);
    // A second member takes nothing from a one-partition topic, so it reports nothing.
    auto idle = queue->make_consumer("g", {"leads"});
    EXPECT_TRUE(idle->lag().empty());
    consumer->close();
    EXPECT_TRUE(consumer->lag().empty());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace leadflow
