// The Kafka adapter against librdkafka's mock cluster (leadflow-kafka-mock, one per test): the real
// client code over the real protocol, with brokers that can be taken down.
//
// The mock answers a group's first JoinGroup after 3 s and any later rebalance after
// session.timeout.ms - 1 s, so tests that use a consumer group take a few seconds each.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
// The adapter's header is private to common/ and integration tests do not have common/src on
// their include path.
#include "leadflow/base/log.hpp"
#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kBrokers = 3;
constexpr int kPartitions = 8;

/// A mock cluster in a child process, with the queue's topics created up front (the mock has no
/// CreateTopics API). Stopped with SIGTERM when destroyed.
class MockCluster {
 public:
  explicit MockCluster(const Topics& topics)
      : process_(testing::binary_path("leadflow-kafka-mock"),
                 {"--brokers", std::to_string(kBrokers), "--topic",
                  topics.leads + ":" + std::to_string(kPartitions), "--topic",
                  topics.results + ":" + std::to_string(kPartitions), "--topic",
                  topics.retry + ":" + std::to_string(kPartitions), "--topic",
                  topics.dead + ":" + std::to_string(kPartitions),
                  // Gone with this process even if it dies before the destructor runs.
                  "--exit-on-stdin-eof"},
                 {}) {
    const std::string line = process_.read_line(10s);
    if (line.rfind("BOOTSTRAP ", 0) == 0) bootstrap_ = line.substr(10);
  }
  ~MockCluster() { process_.terminate(5s); }

  const std::string& bootstrap() const { return bootstrap_; }

  bool command(const std::string& line) {
    return process_.write_line(line) && process_.read_line(5s) == "OK";
  }
  bool all_brokers(const std::string& verb) {
    for (int id = 1; id <= kBrokers; ++id)
      if (!command(verb + " " + std::to_string(id))) return false;
    return true;
  }

 private:
  testing::ChildProcess process_;
  std::string bootstrap_;
};

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// How long a consumer may wait for its first records: the mock answers a group's first JoinGroup
// after 3 s, but a sanitizer build beside other tests on two cores has taken more than 20 s to
// be assigned (heartbeats late, the group rebalanced again). A guard against a hang, not a
// timing: poll_records returns as soon as the records are there.
constexpr auto kGroupJoin = 60s;

// Polls until `n` records arrived or `timeout` passed.
std::vector<QueueRecord> poll_records(QueueConsumer& c, std::size_t n,
                                      std::chrono::milliseconds timeout) {
  std::vector<QueueRecord> out;
  const auto deadline = Clock::now() + timeout;
  while (out.size() < n && Clock::now() < deadline) {
    if (auto r = c.poll(100ms)) out.push_back(std::move(*r));
  }
  return out;
}

std::chrono::milliseconds since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t);
}

class KafkaQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    topics_.leads = "t.leads";
    topics_.results = "t.results";
    topics_.retry = "t.leads.retry";
    topics_.dead = "t.leads.dead";
    cluster_ = std::make_unique<MockCluster>(topics_);
    ASSERT_FALSE(cluster_->bootstrap().empty()) << "leadflow-kafka-mock did not start";
  }

  KafkaQueueOptions options() const {
    KafkaQueueOptions o;
    o.brokers = cluster_->bootstrap();
    o.client_id = "kafka-queue-test";
    o.topics = topics_;
    o.partitions = kPartitions;
    o.replication_factor = kBrokers;
    o.message_timeout_ms = 5000;
    // Short, because the mock waits session timeout - 1 s before it completes a rebalance.
    o.session_timeout_ms = 3000;
    o.fetch_wait_ms = 5;  // the mock holds an idle fetch for all of it, even as records arrive
    return o;
  }

  std::unique_ptr<LeadQueue> open(const KafkaQueueOptions& o) {
    std::string error;
    auto q = open_kafka_queue(o, error);
    EXPECT_TRUE(q) << error;
    return q;
  }

  Topics topics_;
  std::unique_ptr<MockCluster> cluster_;
};

TEST_F(KafkaQueueTest, RoundTripKeepsKeysOnOnePartitionInOrder) {
  auto q = open(options());
  ASSERT_TRUE(q);
  ASSERT_TRUE(q->healthy());
  const std::vector<std::string> keys = {"lead-a", "lead-b", "lead-c",
                                         "lead-d", "lead-e", "lead-f"};
  for (int i = 0; i < 4; ++i)
    for (const auto& k : keys)
      ASSERT_EQ(q->producer().produce(topics_.leads, k, k + "#" + std::to_string(i), 5s),
                ProduceStatus::kOk);
  // Many request threads produce at once.
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i)
        if (q->producer().produce(topics_.leads, "c" + std::to_string(t * 10 + i), "concurrent",
                                  5s) == ProduceStatus::kOk)
          ++ok;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(q->producer().send(topics_.leads, "notice", "sent"), ProduceStatus::kOk);
  EXPECT_TRUE(q->producer().flush(5s));

  auto c = q->make_consumer("round-trip", {topics_.leads});
  const auto records = poll_records(*c, 24 + 40 + 1, kGroupJoin);
  ASSERT_EQ(records.size(), 65u);
  std::map<std::string, std::vector<const QueueRecord*>> by_key;
  std::set<int> partitions;
  for (const auto& r : records) {
    EXPECT_EQ(r.topic, topics_.leads);
    EXPECT_GE(r.partition, 0);
    EXPECT_LT(r.partition, kPartitions);
    by_key[r.key].push_back(&r);
    partitions.insert(r.partition);
  }
  EXPECT_GT(partitions.size(), 1u);
  for (const auto& k : keys) {
    const auto& rs = by_key[k];
    ASSERT_EQ(rs.size(), 4u) << k;
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(rs[i]->payload, k + "#" + std::to_string(i));
      EXPECT_EQ(rs[i]->partition, rs[0]->partition);
      if (i > 0) {
        EXPECT_GT(rs[i]->offset, rs[i - 1]->offset);
      }
    }
  }
  ASSERT_EQ(by_key["notice"].size(), 1u);
  EXPECT_EQ(by_key["notice"][0]->payload, "sent");
  // A consumer may outlive its queue.
  q.reset();
  c->close();
}

// An async lead goes out at once while fewer than 16 wait for their reports, and lingers once
// 16 do. The linger is made a second long so that which way a record went shows in when its
// report came.
TEST_F(KafkaQueueTest, AsyncRecordsGoAtOnceWhileFewWaitAndShareRequestsUnderLoad) {
  KafkaQueueOptions o = options();
  o.linger_ms = 1000;
  auto q = open(o);
  ASSERT_TRUE(q);
  // The first record on a producer waits for the topic's metadata; this one is not timed.
  ASSERT_EQ(q->producer().produce(topics_.leads, "first", "x", 5s), ProduceStatus::kOk);

  // One record after another, each waiting for the last one's report: none lingers.
  for (int i = 0; i < 3; ++i) {
    std::promise<ProduceStatus> reported;
    const auto sent = Clock::now();
    q->producer().produce_async(topics_.leads, "lone-" + std::to_string(i), "x",
                                [&](ProduceStatus s) { reported.set_value(s); });
    ASSERT_EQ(reported.get_future().get(), ProduceStatus::kOk);
    EXPECT_LT(since(sent), 900ms) << "record " << i << " waited for the linger";
  }

  // Sixteen records whose callers are told only when the gate opens: until then they count as
  // waiting (the first one's callback holds the thread that reports the others).
  std::promise<void> gate;
  std::shared_future<void> open_gate = gate.get_future().share();
  std::atomic<int> held_ok{0};
  for (int i = 0; i < 16; ++i)
    q->producer().produce_async(topics_.leads, "held-" + std::to_string(i), "x",
                                [&, open_gate](ProduceStatus s) {
                                  open_gate.wait();
                                  if (s == ProduceStatus::kOk) ++held_ok;
                                });
  // So every record of this burst lingers.
  constexpr int kBurst = 100;
  std::mutex mu;
  std::vector<std::chrono::milliseconds> after;
  std::atomic<int> ok{0};
  const auto burst = Clock::now();
  for (int i = 0; i < kBurst; ++i)
    q->producer().produce_async(topics_.leads, "burst-" + std::to_string(i), "x",
                                [&](ProduceStatus s) {
                                  if (s == ProduceStatus::kOk) ++ok;
                                  std::lock_guard lock(mu);
                                  after.push_back(since(burst));
                                });
  gate.set_value();
  // Not flush(): it sends what lingers at once.
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline && (ok.load() < kBurst || held_ok.load() < 16))
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(held_ok.load(), 16);
  ASSERT_EQ(ok.load(), kBurst);
  std::lock_guard lock(mu);
  for (auto d : after) EXPECT_GE(d, 900ms) << "a record of the burst went at once";

  // Once they are all told, a lone record goes at once again.
  std::promise<ProduceStatus> reported;
  const auto sent = Clock::now();
  q->producer().produce_async(topics_.leads, "lone-again", "x",
                              [&](ProduceStatus s) { reported.set_value(s); });
  ASSERT_EQ(reported.get_future().get(), ProduceStatus::kOk);
  EXPECT_LT(since(sent), 900ms);
}

TEST_F(KafkaQueueTest, AFatalProducerErrorMarksTheProducerBrokenAndRefusesLeads) {
  auto q = open(options());
  ASSERT_TRUE(q);
  ASSERT_EQ(q->producer().produce(topics_.leads, "before", "x", 5s), ProduceStatus::kOk);
  EXPECT_FALSE(q->producer().broken());
  ASSERT_TRUE(raise_fatal_producer_error_for_test(*q));
  EXPECT_TRUE(q->producer().broken());  // /healthz fails: only a restart cures it
  EXPECT_FALSE(q->healthy());           // /readyz fails
  EXPECT_NE(q->producer().produce(topics_.leads, "after", "x", 5s), ProduceStatus::kOk);
}

TEST_F(KafkaQueueTest, CloseRunsRevokeHandlerCommitsAndNextConsumerResumes) {
  auto q = open(options());
  ASSERT_TRUE(q);
  for (int i = 0; i < 6; ++i)
    ASSERT_EQ(q->producer().produce(topics_.leads, "same-key", std::to_string(i), 5s),
              ProduceStatus::kOk);

  auto first = q->make_consumer("resume", {topics_.leads});
  std::vector<QueueRecord> taken;
  int revokes = 0;
  std::uint64_t generation_in_handler = 99;
  // Closing gives the partitions up: the handler finishes the in-flight record 3 and commits it.
  first->set_revoke_handler([&] {
    ++revokes;
    generation_in_handler = first->generation();
    first->commit(taken[3].topic, taken[3].partition, taken[3].offset + 1);
  });
  taken = poll_records(*first, 6, kGroupJoin);
  ASSERT_EQ(taken.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(taken[i].payload, std::to_string(i));
    EXPECT_EQ(taken[i].generation, 0u);
  }
  // Records 0-2 processed and committed; 3 in flight; 4 and 5 handed out but never processed.
  first->commit(taken[2].topic, taken[2].partition, taken[2].offset + 1);
  first->close();
  EXPECT_EQ(revokes, 1);
  EXPECT_EQ(generation_in_handler, 0u) << "the handler must run before the generation moves";
  EXPECT_EQ(first->generation(), 1u);
  first->close();  // idempotent
  EXPECT_EQ(revokes, 1);

  auto second = q->make_consumer("resume", {topics_.leads});
  const auto again = poll_records(*second, 2, kGroupJoin);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].payload, "4");
  EXPECT_EQ(again[1].payload, "5");
  EXPECT_FALSE(second->poll(500ms)) << "records below the commit came back";
  second->close();
}

// The mock (librdkafka 2.0.2) refuses OffsetCommit while a rebalance is in progress
// (REBALANCE_IN_PROGRESS), where a real broker accepts it from a member of the current
// generation: here the handler's commit does not reach the group, so records the first member
// finished may be read again by their next owner. What this checks is the order (handler, then
// generation) and the split; the commit's effect is checked on the close path above.
TEST_F(KafkaQueueTest, SecondMemberRevokesFirstAndSplitsPartitions) {
  auto q = open(options());
  ASSERT_TRUE(q);
  for (int i = 0; i < 16; ++i)
    ASSERT_EQ(q->producer().produce(topics_.leads, "before-" + std::to_string(i), "before", 5s),
              ProduceStatus::kOk);

  std::vector<QueueRecord> in_flight;
  int revokes = 0;
  std::uint64_t generation_in_handler = 99;
  auto a = q->make_consumer("split", {topics_.leads});
  a->set_revoke_handler([&] {
    ++revokes;
    generation_in_handler = a->generation();
    for (const auto& r : in_flight) a->commit(r.topic, r.partition, r.offset + 1);
    in_flight.clear();
  });
  in_flight = poll_records(*a, 16, kGroupJoin);
  ASSERT_EQ(in_flight.size(), 16u);
  const std::uint64_t before = a->generation();
  for (const auto& r : in_flight) EXPECT_EQ(r.generation, before);

  auto b = q->make_consumer("split", {topics_.leads});
  std::vector<QueueRecord> got_a, got_b;
  auto poll_both = [&] {
    if (auto r = a->poll(100ms)) got_a.push_back(*r);
    if (auto r = b->poll(100ms)) got_b.push_back(*r);
  };
  const auto deadline = Clock::now() + 20s;
  while (revokes == 0 && Clock::now() < deadline) poll_both();
  ASSERT_EQ(revokes, 1);
  EXPECT_EQ(generation_in_handler, before) << "the handler must run before the generation moves";
  EXPECT_GT(a->generation(), before);

  // Until both members have read something: the mock hands out a generation's assignments to
  // all members at once, so from then on the group is stable. Until then a second rebalance
  // (a member rejoining late) may move partitions and, as nothing here commits, deliver a record
  // again: at-least-once allows that.
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(q->producer().produce(topics_.leads, "after-" + std::to_string(i), "after", 5s),
              ProduceStatus::kOk);
  auto count = [](const std::vector<QueueRecord>& got, const std::string& payload) {
    return std::count_if(got.begin(), got.end(),
                         [&](const auto& r) { return r.payload == payload; });
  };
  while ((count(got_a, "after") == 0 || count(got_b, "after") == 0) &&
         Clock::now() < deadline + 10s)
    poll_both();
  for (const auto& r : got_a) EXPECT_GT(r.generation, before);
  ASSERT_GT(count(got_a, "after"), 0);
  ASSERT_GT(count(got_b, "after"), 0);

  // Stable now: every record goes to exactly one member, each partition to one of them.
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(q->producer().produce(topics_.leads, "final-" + std::to_string(i), "final", 5s),
              ProduceStatus::kOk);
  while (count(got_a, "final") + count(got_b, "final") < 32 && Clock::now() < deadline + 20s)
    poll_both();
  std::set<int> parts_a, parts_b;
  std::set<std::string> keys;
  for (const auto* got : {&got_a, &got_b}) {
    for (const auto& r : *got) {
      if (r.payload != "final") continue;
      (got == &got_a ? parts_a : parts_b).insert(r.partition);
      EXPECT_TRUE(keys.insert(r.key).second) << r.key << " twice";
    }
  }
  EXPECT_EQ(keys.size(), 32u);
  EXPECT_FALSE(parts_a.empty());
  EXPECT_FALSE(parts_b.empty());
  for (int p : parts_a) EXPECT_EQ(parts_b.count(p), 0u) << "partition " << p << " read by both";
  b->close();
  a->close();
}

TEST_F(KafkaQueueTest, TailConsumerSeesOnlyNewRecordsOfEveryPartition) {
  auto q = open(options());
  ASSERT_TRUE(q);
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(q->producer().produce(topics_.results, "old-" + std::to_string(i), "old", 5s),
              ProduceStatus::kOk);

  auto tail = q->make_tail_consumer({topics_.results});
  ASSERT_TRUE(tail);
  // Produced at once, before the first poll: the start offsets were fixed when the tail was made.
  for (int i = 0; i < 40; ++i)
    ASSERT_EQ(q->producer().produce(topics_.results, "new-" + std::to_string(i), "new", 5s),
              ProduceStatus::kOk);
  const auto records = poll_records(*tail, 40, 10s);
  ASSERT_EQ(records.size(), 40u);
  std::set<int> partitions;
  for (const auto& r : records) {
    EXPECT_EQ(r.payload, "new");
    partitions.insert(r.partition);
  }
  EXPECT_GE(partitions.size(), 4u);
  EXPECT_FALSE(tail->poll(300ms));
  tail->commit(topics_.results, 0, 1);  // nothing to do
  EXPECT_EQ(tail->generation(), 0u);
  q.reset();
  EXPECT_FALSE(tail->poll(50ms));
  tail->close();
}

TEST_F(KafkaQueueTest, AllBrokersDownTimesOutFillsUpAndRecovers) {
  KafkaQueueOptions o = options();
  o.message_timeout_ms = 1500;
  o.max_buffered_messages = 2;
  auto q = open(o);
  ASSERT_TRUE(q);
  ASSERT_EQ(q->producer().produce(topics_.leads, "k", "warm-up", 5s), ProduceStatus::kOk);
  ASSERT_TRUE(q->healthy());

  ASSERT_TRUE(cluster_->all_brokers("down"));
  EXPECT_TRUE(wait_until([&] { return !q->healthy(); }, 10s));

  // message.timeout.ms passes without an acknowledgement.
  auto t0 = Clock::now();
  EXPECT_EQ(q->producer().produce(topics_.leads, "k", "lost", 10s), ProduceStatus::kTimedOut);
  EXPECT_LT(since(t0), 5s);
  // The caller's own timeout passes first; the record stays queued (one of two slots).
  t0 = Clock::now();
  EXPECT_EQ(q->producer().produce(topics_.leads, "k", "gave-up", 200ms), ProduceStatus::kTimedOut);
  EXPECT_LT(since(t0), 1s);
  // The second slot, then a full queue answers at once.
  EXPECT_EQ(q->producer().send(topics_.leads, "k", "queued"), ProduceStatus::kOk);
  t0 = Clock::now();
  EXPECT_EQ(q->producer().produce(topics_.leads, "k", "refused", 10s), ProduceStatus::kQueueFull);
  EXPECT_LT(since(t0), 100ms);
  t0 = Clock::now();
  EXPECT_FALSE(q->healthy());
  EXPECT_LT(since(t0), 100ms) << "healthy() must not wait for the cluster";

  ASSERT_TRUE(cluster_->all_brokers("up"));
  EXPECT_TRUE(wait_until([&] { return q->healthy(); }, 15s));
  ProduceStatus s = ProduceStatus::kUnavailable;
  wait_until(
      [&] {
        return (s = q->producer().produce(topics_.leads, "k", "back", 5s)) == ProduceStatus::kOk;
      },
      20s);
  EXPECT_EQ(s, ProduceStatus::kOk);
}

TEST_F(KafkaQueueTest, BacklogCountsWhatTheGroupHasNotCommitted) {
  auto q = open(options());
  ASSERT_TRUE(q);
  EXPECT_EQ(q->backlog("backlog"), 0);
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(q->producer().produce(topics_.leads, "k" + std::to_string(i % 3), "x", 5s),
              ProduceStatus::kOk);
  EXPECT_TRUE(wait_until([&] { return q->backlog("backlog") == 10; }, 5s)) << q->backlog("backlog");

  auto c = q->make_consumer("backlog", {topics_.leads});
  const auto records = poll_records(*c, 10, kGroupJoin);
  ASSERT_EQ(records.size(), 10u);
  // Commit the first record of every partition seen, and all of one partition.
  std::map<int, std::vector<const QueueRecord*>> by_partition;
  for (const auto& r : records) by_partition[r.partition].push_back(&r);
  std::int64_t committed = 0;
  bool whole = true;
  for (const auto& [p, rs] : by_partition) {
    const std::size_t n = whole ? rs.size() : 1;
    whole = false;
    c->commit(rs[n - 1]->topic, p, rs[n - 1]->offset + 1);
    committed += static_cast<std::int64_t>(n);
  }
  c->close();  // commits what was stored
  EXPECT_TRUE(wait_until([&] { return q->backlog("backlog") == 10 - committed; }, 5s))
      << q->backlog("backlog") << " != " << 10 - committed;
  EXPECT_EQ(q->backlog("nobody-yet"), 10);
}

TEST_F(KafkaQueueTest, BacklogTellsWhenTheOldestRecordNotCommittedWasProduced) {
  auto q = open(options());
  ASSERT_TRUE(q);
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  EXPECT_FALSE(q->group_backlog("aged").value_or(GroupBacklog{}).oldest_produced_ms.has_value())
      << "nothing waits: no oldest";
  const std::int64_t first = now_ms();
  ASSERT_EQ(q->producer().produce(topics_.leads, "old", "x", 5s), ProduceStatus::kOk);
  std::this_thread::sleep_for(1500ms);  // so that the two produce times lie apart
  const std::int64_t second = now_ms();
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(q->producer().produce(topics_.leads, "new" + std::to_string(i), "x", 5s),
              ProduceStatus::kOk);
  std::optional<GroupBacklog> b;
  ASSERT_TRUE(wait_until([&] { return (b = q->group_backlog("aged")) && b->records == 6; }, 5s));
  ASSERT_TRUE(b->oldest_produced_ms);
  EXPECT_GE(*b->oldest_produced_ms, first - 50);
  EXPECT_LT(*b->oldest_produced_ms, second) << "the oldest is the first record, not a later one";

  // The group takes and commits the first record: the oldest is now one of the later ones.
  auto c = q->make_consumer("aged", {topics_.leads});
  const auto records = poll_records(*c, 6, kGroupJoin);
  ASSERT_EQ(records.size(), 6u);
  for (const auto& r : records)
    if (r.key == "old") c->commit(r.topic, r.partition, r.offset + 1);
  c->close();
  ASSERT_TRUE(wait_until([&] { return (b = q->group_backlog("aged")) && b->records == 5; }, 10s));
  ASSERT_TRUE(b->oldest_produced_ms);
  EXPECT_GE(*b->oldest_produced_ms, second - 50);
  // Its records are read again by a probe that joined no group: the group's own offsets hold.
  EXPECT_EQ(q->backlog("aged"), 5);
}

TEST(KafkaQueueOpenTest, FailsClearlyWhenNoBrokerAnswers) {
  KafkaQueueOptions o;
  o.brokers = "127.0.0.1:1";  // nothing listens there
  std::string error;
  const auto t0 = Clock::now();
  EXPECT_FALSE(open_kafka_queue(o, error));
  EXPECT_LT(since(t0), 15s);
  EXPECT_NE(error.find("not reachable"), std::string::npos) << error;
}

}  // namespace
}  // namespace leadflow
