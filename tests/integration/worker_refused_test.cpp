// A lead the store refuses for good (a constraint no retry gets past) is set aside on the
// dead-letter topic, counted, and its partition moves on; written without the person's fields
// it is recorded failed; refused even so, it has no row. Either way its waiting seller is
// answered failed. A store outage only delays leads and never dead-letters one. The real Kafka
// adapter over librdkafka's mock cluster, a real SQLite store (the refusal: a trigger added
// behind the adapter's back), a decider that decides unsold.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "core_samples.hpp"
#include "fake_store.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/kafka_queue.hpp"
#include "leadflow/runtime/worker.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kPartitions = 2;

/// Decides every lead unsold at once.
class UnsoldDecider final : public LeadDecider {
 public:
  void decide(const Lead&, std::function<void(Decision)> done) override {
    Decision d;
    d.distribution.status = DeliveryStatus::kUnsold;
    d.distribution.reason = "no bids";
    d.distribution.decided_at_ms = 1'700'000'000'000;
    done(std::move(d));
  }
};

double metric(const std::string& series) {
  std::istringstream lines(render_metrics());
  for (std::string l; std::getline(lines, l);)
    if (l.rfind(series + " ", 0) == 0) return std::stod(l.substr(series.size() + 1));
  return 0;
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

/// Adds a trigger behind the adapter's back that refuses a lead whose row meets `when`.
void refuse_inserts_where(const std::string& path, const std::string& when) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  const std::string sql = "CREATE TRIGGER refuse_probe BEFORE INSERT ON leads WHEN " + when +
                          " BEGIN SELECT RAISE(ABORT, 'refused by the probe'); END";
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK);
}

class WorkerRefused : public ::testing::Test {
 protected:
  void SetUp() override {
    topics_ = {"r.leads", "r.results", "r.leads.retry", "r.leads.dead"};
    std::vector<std::string> args = {"--brokers", "1"};
    for (const std::string* t : {&topics_.leads, &topics_.results, &topics_.retry, &topics_.dead})
      args.insert(args.end(), {"--topic", *t + ":" + std::to_string(kPartitions)});
    args.push_back("--exit-on-stdin-eof");
    mock_ = std::make_unique<ChildProcess>(binary_path("leadflow-kafka-mock"), args,
                                           std::map<std::string, std::string>{});
    const std::string line = mock_->read_line(10s);
    ASSERT_EQ(line.rfind("BOOTSTRAP ", 0), 0u) << "leadflow-kafka-mock did not start";
    KafkaQueueOptions o;
    o.brokers = line.substr(10);
    o.client_id = "worker-refused-test";
    o.topics = topics_;
    o.partitions = kPartitions;
    o.replication_factor = 1;
    o.fetch_wait_ms = 5;  // the mock holds an idle fetch for all of it
    std::string error;
    queue_ = open_kafka_queue(o, error);
    ASSERT_NE(queue_, nullptr) << error;
    options_.topics = topics_;
    options_.group = "refused-workers";
    options_.concurrency = 8;
  }
  void TearDown() override {
    queue_.reset();
    if (mock_) mock_->terminate(5s);
  }

  void produce(const Lead& l) {
    ASSERT_EQ(queue_->producer().produce(topics_.leads, l.id, encode_lead(l), 5s),
              ProduceStatus::kOk);
  }
  // The keys of every record of the dead-letter topic, read from its start.
  std::vector<std::string> dead_letters() {
    auto c = queue_->make_consumer("inspect-dead", {topics_.dead});
    std::vector<std::string> keys;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline)
      if (auto r = c->poll(200ms)) keys.push_back(r->key);
    c->close();
    return keys;
  }
  bool decided(IntakeStore& store, const std::vector<Lead>& leads) {
    for (const Lead& l : leads) {
      auto r = store.get_lead(l.id).value;
      if (!r || !is_final(r->distribution.status)) return false;
    }
    return true;
  }

  Topics topics_;
  std::unique_ptr<ChildProcess> mock_;
  std::unique_ptr<LeadQueue> queue_;
  WorkerOptions options_;
  UnsoldDecider decider_;
  OutcomeWaiters waiters_;
  LocalOutcomePublisher publisher_{waiters_};
};

TEST_F(WorkerRefused, ALeadTheStoreRefusesForGoodIsDeadLetteredAndItsPartitionMovesOn) {
  TempDir dir;
  std::string error;
  const std::string path = dir.path() + "/leadflow.db";
  auto store = open_store("sqlite:" + path, error);
  ASSERT_NE(store, nullptr) << error;
  ASSERT_EQ(store->migrate(), StoreStatus::kOk);
  // Its source is refused, and the lead written without the person's fields keeps its source.
  refuse_inserts_where(path, "NEW.source = 'refuse-me'");
  std::vector<Lead> fine;
  for (int i = 0; i < 6; ++i) fine.push_back(sample_core_lead(100 + i));
  Lead bad = sample_core_lead(99);
  bad.source = "refuse-me";
  bad.sync_wait_ms = 30'000;  // its seller waits for the answer
  auto ticket = waiters_.expect(bad.id);
  // The refused lead between others of every partition: the batch around it is written.
  for (int i = 0; i < 3; ++i) produce(fine[i]);
  produce(bad);
  for (int i = 3; i < 6; ++i) produce(fine[i]);

  const double refused_before = metric("leadflow_worker_leads_refused_total");
  const double dead_before = metric("leadflow_worker_dead_lettered_total");
  Worker worker(*queue_, *store, decider_, publisher_, SystemClock::instance(), options_);
  worker.start();
  const auto answer = ticket->wait_until(std::chrono::steady_clock::now() + 30s);
  EXPECT_TRUE(wait_until([&] { return decided(*store, fine); }, 30s))
      << "the leads beside the refused one were not decided";
  // Committed past it on every partition: nothing of the group's is left.
  EXPECT_TRUE(wait_until([&] { return queue_->backlog(options_.group) == 0; }, 20s))
      << queue_->backlog(options_.group);
  worker.stop();

  // No row, yet its waiting seller is answered rather than left to time out.
  EXPECT_EQ(store->get_lead(bad.id).status, StoreStatus::kNotFound);
  ASSERT_TRUE(answer) << "the waiting seller was not answered";
  EXPECT_EQ(answer->status, DeliveryStatus::kFailed);
  EXPECT_EQ(answer->buyer_id, "");
  EXPECT_EQ(dead_letters(), std::vector<std::string>{bad.id}) << "set aside once, as posted";
  EXPECT_EQ(metric("leadflow_worker_leads_refused_total") - refused_before, 1);
  EXPECT_EQ(metric("leadflow_worker_dead_lettered_total") - dead_before, 1);
}

TEST_F(WorkerRefused, ALeadRefusedForThePersonsFieldsIsRecordedFailedWithoutThemAndAnswered) {
  TempDir dir;
  std::string error;
  const std::string path = dir.path() + "/leadflow.db";
  auto store = open_store("sqlite:" + path, error);
  ASSERT_NE(store, nullptr) << error;
  ASSERT_EQ(store->migrate(), StoreStatus::kOk);
  refuse_inserts_where(path, "NEW.email = 'refuse-me@example.com'");
  std::vector<Lead> fine;
  for (int i = 0; i < 4; ++i) fine.push_back(sample_core_lead(300 + i));
  Lead bad = sample_core_lead(299);
  bad.email = "refuse-me@example.com";
  bad.sync_wait_ms = 30'000;  // its seller waits for the answer
  auto ticket = waiters_.expect(bad.id);
  for (int i = 0; i < 2; ++i) produce(fine[i]);
  produce(bad);
  for (int i = 2; i < 4; ++i) produce(fine[i]);

  const double refused_before = metric("leadflow_worker_leads_refused_total");
  Worker worker(*queue_, *store, decider_, publisher_, SystemClock::instance(), options_);
  worker.start();
  const auto answer = ticket->wait_until(std::chrono::steady_clock::now() + 30s);
  EXPECT_TRUE(wait_until([&] { return decided(*store, fine); }, 30s));
  EXPECT_TRUE(wait_until([&] { return queue_->backlog(options_.group) == 0; }, 20s))
      << queue_->backlog(options_.group);
  worker.stop();

  ASSERT_TRUE(answer) << "the waiting seller was not answered";
  EXPECT_EQ(answer->status, DeliveryStatus::kFailed);
  const auto row = store->get_lead(bad.id);
  ASSERT_EQ(row.status, StoreStatus::kOk);
  EXPECT_EQ(row.value->distribution.status, DeliveryStatus::kFailed);
  EXPECT_EQ(row.value->distribution.reason, "refused by the store");
  // Its seller, vertical and source stay; none of the person's fields does.
  EXPECT_EQ(row.value->lead.seller_id, bad.seller_id);
  EXPECT_EQ(row.value->lead.vertical, bad.vertical);
  EXPECT_EQ(row.value->lead.source, bad.source);
  EXPECT_EQ(row.value->lead.email, "");
  EXPECT_EQ(row.value->lead.phone, "");
  EXPECT_EQ(row.value->lead.first_name, "");
  // The lead as posted is the operator's, on the dead-letter topic, once.
  EXPECT_EQ(dead_letters(), std::vector<std::string>{bad.id});
  EXPECT_EQ(metric("leadflow_worker_leads_refused_total") - refused_before, 1);
}

TEST_F(WorkerRefused, AStoreOutageDelaysLeadsAndNeverDeadLettersOne) {
  FakeStore store(SystemClock::instance());
  std::vector<Lead> leads;
  for (int i = 0; i < 4; ++i) leads.push_back(sample_core_lead(200 + i));
  for (const Lead& l : leads) produce(l);
  const double refused_before = metric("leadflow_worker_leads_refused_total");
  const double errors_before = metric("leadflow_worker_store_errors_total");
  store.unavailable_for(10s);  // longer than the group's first assignment takes

  Worker worker(*queue_, store, decider_, publisher_, SystemClock::instance(), options_);
  worker.start();
  EXPECT_TRUE(wait_until([&] { return decided(store, leads); }, 45s))
      << "the leads were not decided once the store was back";
  EXPECT_TRUE(wait_until([&] { return queue_->backlog(options_.group) == 0; }, 20s));
  worker.stop();

  EXPECT_GT(metric("leadflow_worker_store_errors_total"), errors_before) << "no outage was seen";
  EXPECT_EQ(metric("leadflow_worker_leads_refused_total"), refused_before);
  EXPECT_TRUE(dead_letters().empty());
}

}  // namespace
}  // namespace leadflow::testing
