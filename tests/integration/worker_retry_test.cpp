// A lead whose auction throws: the worker sends it to the retry topic, and after its last attempt
// records it failed and copies it to the dead-letter topic; the partition is never stalled. Real
// embedded queue and SQLite store; a decider that throws on purpose stands in for the auction.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core_samples.hpp"
#include "leadflow/auction/distributor.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/embedded_queue.hpp"
#include "leadflow/runtime/worker.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;

/// Fails the auctions of the leads it is told to, a given number of times each; decides the rest
/// unsold.
class ThrowingDecider final : public LeadDecider {
 public:
  void fail(const std::string& lead_id, int times) {
    std::lock_guard lock(mu_);
    failures_left_[lead_id] = times;
  }
  int calls(const std::string& lead_id) {
    std::lock_guard lock(mu_);
    return calls_[lead_id];
  }
  void decide(const Lead& lead, std::function<void(Decision)> done) override {
    Decision d;
    {
      std::lock_guard lock(mu_);
      ++calls_[lead.id];
      auto it = failures_left_.find(lead.id);
      if (it != failures_left_.end() && it->second > 0) {
        --it->second;
        d.kind = Decision::Kind::kFailed;
        d.error = "buyer configuration exploded";
      }
    }
    if (d.kind == Decision::Kind::kDecided) {
      d.distribution.status = DeliveryStatus::kUnsold;
      d.distribution.reason = "no bids";
      d.distribution.decided_at_ms = 1'700'000'000'000;
    }
    done(std::move(d));
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> failures_left_, calls_;
};

TEST(WorkerRetry, AThrowingAuctionIsRetriedThenRecordedFailedAndDeadLettered) {
  TempDir dir;
  std::string error;
  auto store = open_store("sqlite:" + dir.path() + "/leadflow.db", error);
  ASSERT_NE(store, nullptr) << error;
  ASSERT_EQ(store->migrate(), StoreStatus::kOk);
  EmbeddedQueueOptions qo;
  qo.dir = dir.path() + "/queue";
  qo.partitions = 2;
  auto queue = open_embedded_queue(qo, error);
  ASSERT_NE(queue, nullptr) << error;

  ThrowingDecider decider;
  OutcomeWaiters waiters;
  LocalOutcomePublisher publisher(waiters);
  WorkerOptions wo;
  wo.concurrency = 4;
  wo.max_attempts = 3;
  Worker worker(*queue, *store, decider, publisher, SystemClock::instance(), wo);

  const Lead poison = sample_core_lead(1), flaky = sample_core_lead(2), fine = sample_core_lead(3);
  decider.fail(poison.id, 1000);  // throws every time
  decider.fail(flaky.id, 1);      // throws once
  for (const Lead* l : {&poison, &flaky, &fine})
    ASSERT_EQ(queue->producer().produce(wo.topics.leads, l->id, encode_lead(*l), 5s),
              ProduceStatus::kOk);
  worker.start();

  auto final_status = [&](const std::string& id) -> std::optional<LeadRecord> {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = store->get_lead(id).value;
      if (r && is_final(r->distribution.status)) return r;
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  };
  const auto p = final_status(poison.id);
  const auto f = final_status(flaky.id);
  const auto ok = final_status(fine.id);
  worker.stop();

  ASSERT_TRUE(p && f && ok) << "a lead never reached a final status";
  EXPECT_EQ(p->distribution.status, DeliveryStatus::kFailed);
  EXPECT_NE(p->distribution.reason.find("processing failed: buyer configuration exploded"),
            std::string::npos)
      << p->distribution.reason;
  EXPECT_EQ(decider.calls(poison.id), 3);  // max_attempts, no more
  EXPECT_EQ(f->distribution.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(decider.calls(flaky.id), 2);
  EXPECT_EQ(ok->distribution.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(decider.calls(fine.id), 1);

  // The dead-letter topic holds the poison lead, once.
  auto dead = queue->make_consumer("inspect", {wo.topics.dead});
  std::vector<std::string> dead_ids;
  while (auto r = dead->poll(500ms)) dead_ids.push_back(r->key);
  EXPECT_EQ(dead_ids, std::vector<std::string>{poison.id});
  // The retry topic carried three attempts (its records are gone once the group committed them).
  const std::string metrics = render_metrics();
  EXPECT_NE(metrics.find("leadflow_worker_retried_total 3"), std::string::npos);
  EXPECT_NE(metrics.find("leadflow_worker_dead_lettered_total 1"), std::string::npos);
}

}  // namespace
}  // namespace leadflow::testing
