// The queue contract against every LeadQueue there is: the embedded segment log on a temporary
// directory, Kafka through librdkafka's mock cluster (leadflow-kafka-mock, one per test), and the
// in-memory FakeQueue the unit tests drive the worker with, so the fake keeps the promises the
// adapters keep.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "fake_queue.hpp"
#include "leadflow/queue/embedded_queue.hpp"
#include "leadflow/queue/kafka_queue.hpp"
#include "queue_contract.hpp"

namespace leadflow::contract {
namespace {

using namespace std::chrono_literals;

constexpr int kPartitions = 4;

Topics contract_topics() {
  Topics t;
  t.leads = "contract.leads";
  t.results = "contract.results";
  t.retry = "contract.leads.retry";
  t.dead = "contract.leads.dead";
  return t;
}

QueueFactory embedded_factory() {
  return {"embedded", [] {
            std::string dir =
                (std::filesystem::temp_directory_path() / "leadflow-queue-XXXXXX").string();
            EXPECT_NE(mkdtemp(dir.data()), nullptr);
            EmbeddedQueueOptions o;
            o.dir = dir + "/queue";
            o.partitions = kPartitions;
            std::string error;
            auto q = open_embedded_queue(o, error);
            EXPECT_NE(q, nullptr) << error;
            return QueueHandle{std::move(q), Topics{}, [dir] {
                                 std::error_code ec;
                                 std::filesystem::remove_all(dir, ec);
                               }};
          }};
}

/// A mock cluster of 3 brokers in a child process, with the topics created up front (the mock
/// has no CreateTopics API). Stopped with SIGTERM when destroyed.
class MockCluster {
 public:
  explicit MockCluster(const Topics& t)
      : process_(testing::binary_path("leadflow-kafka-mock"),
                 {"--brokers", "3", "--topic", t.leads + ":" + std::to_string(kPartitions),
                  "--topic", t.results + ":" + std::to_string(kPartitions), "--topic",
                  t.retry + ":" + std::to_string(kPartitions), "--topic",
                  t.dead + ":" + std::to_string(kPartitions), "--exit-on-stdin-eof"},
                 {}) {
    const std::string line = process_.read_line(10s);
    if (line.rfind("BOOTSTRAP ", 0) == 0) bootstrap_ = line.substr(10);
  }
  ~MockCluster() { process_.terminate(5s); }
  const std::string& bootstrap() const { return bootstrap_; }

 private:
  testing::ChildProcess process_;
  std::string bootstrap_;
};

QueueFactory kafka_factory() {
  // The mock answers a group's first JoinGroup after 3 s, and a later one after the session
  // timeout less a second.
  return {"kafka",
          [] {
            const Topics topics = contract_topics();
            auto cluster = std::make_shared<MockCluster>(topics);
            EXPECT_FALSE(cluster->bootstrap().empty()) << "leadflow-kafka-mock did not start";
            KafkaQueueOptions o;
            o.brokers = cluster->bootstrap();
            o.client_id = "queue-contract";
            o.topics = topics;
            o.partitions = kPartitions;
            o.replication_factor = 3;
            o.message_timeout_ms = 5000;
            o.session_timeout_ms = 3000;
            o.fetch_wait_ms = 5;  // the mock holds an idle fetch for all of it
            std::string error;
            auto q = open_kafka_queue(o, error);
            EXPECT_NE(q, nullptr) << error;
            return QueueHandle{std::move(q), topics, [cluster]() mutable { cluster.reset(); }};
          },
          15s};
}

QueueFactory fake_factory() {
  return {"fake", [] {
            return QueueHandle{std::make_unique<testing::FakeQueue>(kPartitions), Topics{}, {}};
          }};
}

}  // namespace

#include "queue_contract_tests.inc"

INSTANTIATE_TEST_SUITE_P(Queues, QueueContract,
                         ::testing::Values(embedded_factory(), kafka_factory(), fake_factory()),
                         queue_factory_name);

// --- FakeQueue only: the rebalances the worker's unit tests trigger -----------------------------

namespace {

TEST(FakeQueue, AJoiningMemberGetsPartitionsOnlyOnceTheirOwnerHasRevokedAndCommitted) {
  testing::FakeQueue q(kPartitions);
  const Topics t = contract_topics();
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(q.producer().produce(t.leads, "key-" + std::to_string(i), std::to_string(i), 1s),
              ProduceStatus::kOk);
  auto a = q.make_consumer("g", {t.leads});
  std::vector<QueueRecord> read_by_a;
  a->set_revoke_handler([&] {
    // What the owner finished is committed before its partitions go.
    for (const auto& r : read_by_a) a->commit(r.topic, r.partition, r.offset + 1);
  });
  while (auto r = a->poll(0ms)) read_by_a.push_back(*r);
  ASSERT_EQ(read_by_a.size(), 8u);
  EXPECT_EQ(a->generation(), 0u);

  auto b = q.make_consumer("g", {t.leads});
  EXPECT_FALSE(b->poll(0ms)) << "a partition moved before its owner gave it up";
  EXPECT_FALSE(a->poll(0ms));  // the revoke: handler, commit, then the partitions are let go
  EXPECT_EQ(a->generation(), 1u);
  ASSERT_EQ(q.revokes().size(), 1u);
  for (int p = 0; p < kPartitions; ++p)
    EXPECT_EQ(q.committed("g", t.leads, p), q.revokes()[0].committed.at({t.leads, p}));

  ASSERT_EQ(q.producer().produce(t.leads, "late", "late", 1s), ProduceStatus::kOk);
  std::vector<QueueRecord> after;
  for (int i = 0; i < 4; ++i) {
    if (auto r = a->poll(0ms)) after.push_back(*r);
    if (auto r = b->poll(0ms)) after.push_back(*r);
  }
  ASSERT_EQ(after.size(), 1u);  // only the new record: everything else was committed
  EXPECT_EQ(after[0].key, "late");
  EXPECT_EQ(q.backlog("g"), 1);
}

TEST(FakeQueue, RecordsHandedOutBeforeARevokeCarryTheOldGeneration) {
  testing::FakeQueue q(1);
  const Topics t = contract_topics();
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(q.producer().produce(t.leads, "k", std::to_string(i), 1s), ProduceStatus::kOk);
  auto c = q.make_consumer("g", {t.leads});
  q.rebalance_after("g", 2);
  std::vector<QueueRecord> got;
  while (auto r = c->poll(0ms)) got.push_back(*r);
  // Two records, the revoke inside the third poll, then all three again from the committed offset.
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].generation, 0u);
  EXPECT_EQ(got[1].generation, 0u);
  for (std::size_t i = 2; i < got.size(); ++i) EXPECT_EQ(got[i].generation, 1u);
  EXPECT_EQ(got[2].offset, 0);
  EXPECT_EQ(c->generation(), 1u);
}

}  // namespace
}  // namespace leadflow::contract
