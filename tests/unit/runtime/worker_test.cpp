// The worker loop on fakes: an in-memory queue whose rebalances the test triggers, the real
// SQLite store behind FakeStore, buyers from a script, and simulated time for every pause.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core_samples.hpp"
#include "fake_http_client.hpp"
#include "fake_queue.hpp"
#include "fake_store.hpp"
#include "leadflow/auction/distributor.hpp"
#include "leadflow/auction/worker_metrics.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/runtime/worker.hpp"
#include "simulated_clock.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;

/// Waits (in real time: the worker's threads are real) until `done` holds, or 10 s.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

class RecordingPublisher final : public OutcomePublisher {
 public:
  void publish(const OutcomeMessage& m) override {
    std::lock_guard lock(mu_);
    published_.push_back(m);
  }
  std::vector<OutcomeMessage> published() const {
    std::lock_guard lock(mu_);
    return published_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<OutcomeMessage> published_;
};

/// Decides every lead unsold, counting calls per lead; holds each auction until opened when
/// gated (an auction in flight, waiting for its buyers), and fails the leads it is told to.
class ScriptedDecider final : public LeadDecider {
 public:
  explicit ScriptedDecider(bool gated = false) : open_(!gated) {}
  void decide(const Lead& lead, std::function<void(Decision)> done) override {
    std::unique_lock lock(mu_);
    ++calls_[lead.id];
    if (!open_) {
      held_.push_back({lead.id, std::move(done)});
      return;
    }
    lock.unlock();
    done(decision_for(lead.id));
  }
  void open() {
    std::vector<std::pair<std::string, std::function<void(Decision)>>> held;
    {
      std::lock_guard lock(mu_);
      open_ = true;
      held.swap(held_);
    }
    for (auto& [id, done] : held) done(decision_for(id));
  }
  void poison(const std::string& lead_id) {
    std::lock_guard lock(mu_);
    poison_[lead_id] = true;
  }
  int calls(const std::string& lead_id) {
    std::lock_guard lock(mu_);
    return calls_[lead_id];
  }
  /// Auctions started and not yet answered.
  int running() {
    std::lock_guard lock(mu_);
    return static_cast<int>(held_.size());
  }
  std::chrono::milliseconds own_backlog() const override {
    return std::chrono::milliseconds{backlog_ms_.load()};
  }
  void set_own_backlog(std::chrono::milliseconds d) { backlog_ms_.store(d.count()); }
  std::uint64_t times_behind() const override { return times_behind_.load(); }
  void fall_behind() { ++times_behind_; }
  /// Answers the first `n` auctions held.
  void release(std::size_t n) {
    std::vector<std::pair<std::string, std::function<void(Decision)>>> released;
    {
      std::lock_guard lock(mu_);
      n = std::min(n, held_.size());
      released.assign(std::make_move_iterator(held_.begin()),
                      std::make_move_iterator(held_.begin() + static_cast<std::ptrdiff_t>(n)));
      held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(n));
    }
    for (auto& [id, done] : released) done(decision_for(id));
  }

 private:
  Decision decision_for(const std::string& lead_id) {
    Decision d;
    {
      std::lock_guard lock(mu_);
      if (poison_.count(lead_id)) {
        d.kind = Decision::Kind::kFailed;
        d.error = "buyer configuration exploded";
        Attempt post;  // what the failed auction did before it failed
        post.buyer_id = "by_late";
        post.kind = AttemptKind::kPost;
        post.started_at_ms = 1'700'000'000'000;
        post.outcome = AttemptOutcome::kTimeout;
        post.bid = 2000;
        d.distribution.attempts.push_back(post);
        return d;
      }
    }
    d.distribution.status = DeliveryStatus::kUnsold;
    d.distribution.reason = "no bids";
    d.distribution.decided_at_ms = 1'700'000'000'000;
    return d;
  }

  std::mutex mu_;
  bool open_;
  std::vector<std::pair<std::string, std::function<void(Decision)>>> held_;
  std::map<std::string, int> calls_;
  std::map<std::string, bool> poison_;
  std::atomic<std::int64_t> backlog_ms_{0};
  std::atomic<std::uint64_t> times_behind_{0};
};

class WorkerTest : public ::testing::Test {
 protected:
  WorkerTest() { options_.concurrency = 1; }

  Lead produce_lead(int n) {
    Lead l = sample_core_lead(n, clock_.now_ms());
    EXPECT_EQ(queue_.producer().produce(options_.topics.leads, l.id, encode_lead(l), 1s),
              ProduceStatus::kOk);
    return l;
  }

  std::unique_ptr<Worker> make_worker(LeadDecider& decider) {
    return std::make_unique<Worker>(queue_, store_, decider, publisher_, clock_, options_);
  }

  bool decided(const std::string& lead_id) {
    auto r = store_.get_lead(lead_id).value;
    return r && is_final(r->distribution.status);
  }
  bool all_decided(const std::vector<Lead>& leads) {
    for (const Lead& l : leads)
      if (!decided(l.id)) return false;
    return true;
  }

  SimulatedClock clock_;
  FakeStore store_{clock_};
  FakeQueue queue_{2};
  RecordingPublisher publisher_;
  WorkerOptions options_;
};

TEST_F(WorkerTest, RecordsDecidesPublishesAndCommitsEveryLead) {
  FakeHttpClient http(clock_);
  VerticalRegistry verticals = VerticalRegistry::defaults();
  BuyerDirectory buyers(store_, clock_);
  CampaignDirectory campaigns(store_, clock_);
  Distributor distributor(store_, http, buyers, campaigns, verticals, clock_, {});
  const Buyer b = sample_core_buyer("acme");
  ASSERT_EQ(store_.insert_buyer(b), StoreStatus::kOk);
  http.answer(b.ping_url, FakeAnswer::bid(12.00, 30ms));
  http.answer(b.post_url, FakeAnswer::accept("acme-1", 20ms));
  auto& metrics = worker_metrics();
  auto& delivered = metrics.leads_decided.Add({{"status", "delivered"}});
  const double delivered_before = delivered.Value();
  auto& revenue = metrics.revenue_cents.Add({{"buyer_id", b.id}});
  const double revenue_before = revenue.Value();
  const double payout_before = metrics.payout_cents.Value();
  const double margin_before = metrics.margin_cents.Value();

  std::vector<Lead> leads;
  for (int i = 0; i < 3; ++i) leads.push_back(produce_lead(i));
  auto worker = make_worker(distributor);
  worker->start();
  ASSERT_TRUE(eventually(
      [&] { return decided(leads[0].id) && decided(leads[1].id) && decided(leads[2].id); }));
  ASSERT_TRUE(eventually([&] { return publisher_.published().size() == 3; }));
  worker->stop();

  for (const Lead& l : leads) {
    const auto r = store_.get_lead(l.id).value;
    EXPECT_EQ(r->distribution.status, DeliveryStatus::kDelivered);
    EXPECT_EQ(r->distribution.buyer_id, b.id);
    EXPECT_EQ(r->distribution.attempts.size(), 2u);  // the ping and the post, recorded with it
  }
  Cents payouts = 0;
  for (const auto& m : publisher_.published()) {
    EXPECT_EQ(m.status, DeliveryStatus::kDelivered);
    EXPECT_EQ(m.price, 1200);
    payouts += m.payout;
  }
  EXPECT_EQ(delivered.Value(), delivered_before + 3);
  // Once per sale, by the buyer who paid.
  EXPECT_EQ(revenue.Value(), revenue_before + 3600);
  EXPECT_EQ(metrics.payout_cents.Value(), payout_before + static_cast<double>(payouts));
  EXPECT_EQ(metrics.margin_cents.Value(), margin_before + 3600 - static_cast<double>(payouts));
  EXPECT_EQ(queue_.backlog(options_.group), 0);  // every offset committed
  EXPECT_EQ(clock_.elapsed(), 150ms);            // three auctions of 50 ms, one after the other
}

TEST_F(WorkerTest, RetriesAStoreItCannotReachUntilItComesBack) {
  ScriptedDecider decider;
  const Lead lead = produce_lead(1);
  auto& metrics = worker_metrics();
  const double errors_before = metrics.store_errors.Value();
  store_.unavailable_for(1s);

  auto worker = make_worker(decider);
  worker->start();
  // Watched through the publisher: a look at the store would count against it while it is down.
  ASSERT_TRUE(eventually([&] { return publisher_.published().size() == 1; }));
  EXPECT_TRUE(worker->healthy());
  worker->stop();

  // Tried at 0, 200, ... 800 ms of simulated time; recorded at 1 s.
  EXPECT_EQ(store_.unavailable_calls(), 5);
  EXPECT_EQ(metrics.store_errors.Value(), errors_before + 5);
  EXPECT_TRUE(decided(lead.id));
  EXPECT_EQ(clock_.elapsed(), 1s);
  EXPECT_EQ(decider.calls(lead.id), 1);
  EXPECT_EQ(queue_.backlog(options_.group), 0);
}

TEST_F(WorkerTest, ARebalanceWaitsForTheAuctionInFlightThenCommitsBeforeThePartitionsGo) {
  ScriptedDecider decider(/*gated=*/true);
  const Lead lead = produce_lead(1);
  const int partition = queue_.partition_of(lead.id);
  auto worker = make_worker(decider);
  worker->start();
  ASSERT_TRUE(eventually([&] { return decider.running() == 1; }));

  queue_.rebalance(options_.group);
  ASSERT_TRUE(eventually([&] { return queue_.revoking() == 1; }));
  // The partitions are held while the auction runs: nobody else can read the lead yet.
  EXPECT_TRUE(queue_.revokes().empty());
  EXPECT_FALSE(decided(lead.id));

  decider.open();
  ASSERT_TRUE(eventually([&] { return queue_.revokes().size() == 1; }));
  const auto committed_at_revoke = queue_.revokes()[0].committed;
  const auto it = committed_at_revoke.find({options_.topics.leads, partition});
  ASSERT_NE(it, committed_at_revoke.end());
  EXPECT_EQ(it->second, 1) << "the lead's offset was not committed before its partition went";
  EXPECT_TRUE(decided(lead.id));
  worker->stop();

  EXPECT_EQ(decider.calls(lead.id), 1);  // not delivered again after the rebalance
  EXPECT_EQ(queue_.backlog(options_.group), 0);
}

TEST_F(WorkerTest, RecordsHandedOutBeforeARevokeAreDroppedForTheNextOwner) {
  ScriptedDecider decider;
  options_.concurrency = 4;
  std::vector<Lead> leads;
  for (int i = 0; i < 3; ++i) leads.push_back(produce_lead(i));
  // The revoke comes inside the worker's third poll, after two records of its first batch.
  queue_.rebalance_after(options_.group, 2);
  auto& stale = worker_metrics().stale_records;
  const double stale_before = stale.Value();

  auto worker = make_worker(decider);
  worker->start();
  ASSERT_TRUE(eventually(
      [&] { return decided(leads[0].id) && decided(leads[1].id) && decided(leads[2].id); }));
  worker->stop();

  EXPECT_EQ(stale.Value(), stale_before + 2);
  for (const Lead& l : leads) EXPECT_EQ(decider.calls(l.id), 1) << l.id;
  EXPECT_EQ(queue_.revokes().size(), 1u);
  EXPECT_EQ(queue_.backlog(options_.group), 0);
}

TEST_F(WorkerTest, AWorkerJoiningTheGroupTakesPartitionsOverWithoutALeadHandledTwice) {
  ScriptedDecider decider;
  options_.concurrency = 4;
  std::vector<Lead> leads;
  for (int i = 0; i < 20; ++i) leads.push_back(produce_lead(i));
  auto& redeliveries = worker_metrics().redeliveries;
  const double redeliveries_before = redeliveries.Value();
  auto all_decided = [&] {
    for (const Lead& l : leads)
      if (!decided(l.id)) return false;
    return true;
  };

  auto first = make_worker(decider);
  first->start();
  ASSERT_TRUE(eventually([&] { return decided(leads[0].id) || decided(leads[1].id); }));
  auto second = make_worker(decider);  // joins: the first drains, commits and gives up half
  second->start();
  for (int i = 20; i < 40; ++i) leads.push_back(produce_lead(i));
  ASSERT_TRUE(eventually(all_decided));
  second->stop();
  first->stop();

  for (const Lead& l : leads) EXPECT_EQ(decider.calls(l.id), 1) << l.id;
  EXPECT_EQ(redeliveries.Value(), redeliveries_before);  // no record was handled twice
  EXPECT_GE(queue_.revokes().size(), 1u);
  EXPECT_EQ(queue_.backlog(options_.group), 0);
}

TEST_F(WorkerTest, AnAuctionThatKeepsThrowingIsRetriedThenRecordedFailedAndDeadLettered) {
  ScriptedDecider decider;
  options_.max_attempts = 3;
  const Lead poison = produce_lead(1), fine = produce_lead(2);
  decider.poison(poison.id);

  auto worker = make_worker(decider);
  worker->start();
  ASSERT_TRUE(eventually([&] { return decided(poison.id) && decided(fine.id); }));
  worker->stop();

  EXPECT_EQ(store_.get_lead(poison.id).value->distribution.status, DeliveryStatus::kFailed);
  // Its last try's posts are kept for the operator who must settle it.
  const auto attempts = store_.get_lead(poison.id).value->distribution.attempts;
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].buyer_id, "by_late");
  EXPECT_EQ(attempts[0].kind, AttemptKind::kPost);
  EXPECT_EQ(attempts[0].bid, Cents{2000});
  EXPECT_EQ(attempts[0].started_at_ms, 1'700'000'000'000);
  EXPECT_EQ(store_.get_lead(fine.id).value->distribution.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(decider.calls(poison.id), 3);
  std::vector<std::string> retry_keys;
  for (const auto& r : queue_.records(options_.topics.retry)) retry_keys.push_back(r.key);
  EXPECT_EQ(retry_keys, (std::vector<std::string>{poison.id + ":2", poison.id + ":3"}));
  const auto dead = queue_.records(options_.topics.dead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].key, poison.id);
  EXPECT_EQ(queue_.backlog(options_.group), 0);
}

TEST_F(WorkerTest, HoldsThousandsOfAuctionsInFlightWithoutAThreadEach) {
  ScriptedDecider decider(/*gated=*/true);
  options_.concurrency = 2000;
  options_.first_window = 2000;
  std::vector<Lead> leads;
  for (int i = 0; i < 2000; ++i) leads.push_back(produce_lead(i));

  auto worker = make_worker(decider);
  worker->start();
  // Every lead is in flight at once: each waits for its buyers, none holds a thread.
  ASSERT_TRUE(eventually([&] { return decider.running() == 2000; }));
  EXPECT_EQ(worker->held(), 2000);
  decider.open();
  ASSERT_TRUE(eventually([&] { return queue_.backlog(options_.group) == 0; }));
  worker->stop();
  for (const Lead& l : leads) EXPECT_EQ(decider.calls(l.id), 1) << l.id;
}

TEST_F(WorkerTest, ReadsAheadNoFurtherThanItsConcurrency) {
  ScriptedDecider decider(/*gated=*/true);
  options_.concurrency = 8;
  std::vector<Lead> leads;
  for (int i = 0; i < 50; ++i) leads.push_back(produce_lead(i));

  auto worker = make_worker(decider);
  worker->start();
  ASSERT_TRUE(eventually([&] { return decider.running() == 8; }));
  // Backpressure: with 8 auctions in flight and one batch read ahead, nothing more is read; the
  // queue holds the rest.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(decider.running(), 8);
  EXPECT_EQ(worker->held(), 16);  // 8 in flight and 8 read ahead, waiting for a slot

  decider.open();
  ASSERT_TRUE(eventually([&] { return all_decided(leads); }));
  worker->stop();
  EXPECT_EQ(queue_.backlog(options_.group), 0);
}

// A store behind (its calls waiting past the limit) holds new auctions back: only one runs, so
// that one can finish and a lead is never stranded; the rest start once the store catches up.
TEST_F(WorkerTest, StartsNoNewAuctionWhileItsStoreWorkWaitsPastTheLimit) {
  ScriptedDecider decider(/*gated=*/true);
  options_.concurrency = 100;
  options_.own_backlog_limit = 500ms;
  std::vector<Lead> leads;
  for (int i = 0; i < 20; ++i) leads.push_back(produce_lead(i));
  decider.set_own_backlog(2s);

  auto worker = make_worker(decider);
  worker->start();
  // (EXPECT, not ASSERT: the decider must be opened below, or stopping the worker would wait.)
  EXPECT_TRUE(eventually([&] { return worker->held() == 20 && decider.running() >= 1; }));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(decider.running(), 1);  // not one more while the store is behind
  EXPECT_TRUE(worker->leads_waiting());

  decider.set_own_backlog(100ms);  // caught up: under the limit
  decider.open();
  ASSERT_TRUE(eventually([&] { return all_decided(leads); }));
  worker->stop();
  EXPECT_EQ(queue_.backlog(options_.group), 0);
  for (const Lead& l : leads) EXPECT_EQ(decider.calls(l.id), 1) << l.id;
}

// The auction window: few auctions at first, twice as many each time they all finish in time.
TEST_F(WorkerTest, LetsFewAuctionsRunAtFirstAndMoreAsTheyFinishInTime) {
  ScriptedDecider decider(/*gated=*/true);
  options_.concurrency = 1000;
  options_.first_window = 16;
  std::vector<Lead> leads;
  for (int i = 0; i < 60; ++i) leads.push_back(produce_lead(i));

  auto worker = make_worker(decider);
  worker->start();
  EXPECT_TRUE(eventually([&] { return decider.running() == 16; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(decider.running(), 16);  // 60 read, 16 let run
  EXPECT_EQ(worker->window(), 16);

  decider.release(16);
  EXPECT_TRUE(eventually([&] { return decider.running() == 32; }));
  EXPECT_EQ(worker->window(), 32);

  decider.open();
  ASSERT_TRUE(eventually([&] { return all_decided(leads); }));
  worker->stop();
  for (const Lead& l : leads) EXPECT_EQ(decider.calls(l.id), 1) << l.id;
}

// A ping held up in the process (the decider's own work late) halves the window: the auctions
// already running go on, and no new one starts until fewer than half of them run.
TEST_F(WorkerTest, LetsHalfAsManyAuctionsRunOnceItsOwnWorkFallsBehind) {
  ScriptedDecider decider(/*gated=*/true);
  options_.concurrency = 100;
  options_.first_window = 32;
  std::vector<Lead> leads;
  for (int i = 0; i < 80; ++i) leads.push_back(produce_lead(i));

  auto worker = make_worker(decider);
  worker->start();
  EXPECT_TRUE(eventually([&] { return decider.running() == 32; }));

  decider.fall_behind();
  decider.release(1);
  EXPECT_TRUE(eventually([&] { return worker->window() == 16; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(decider.running(), 31);  // none started in its place

  decider.release(15);  // 16 running: the window's size, which 15 ends in time do not grow
  EXPECT_TRUE(eventually([&] { return decider.running() == 16; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(decider.running(), 16);
  EXPECT_EQ(worker->window(), 16);

  decider.open();
  ASSERT_TRUE(eventually([&] { return all_decided(leads); }));
  worker->stop();
  for (const Lead& l : leads) EXPECT_EQ(decider.calls(l.id), 1) << l.id;
}

TEST(HeldLeads, TheOldestIsTheEarliestAcceptedStillHeld) {
  HeldLeads held;
  EXPECT_FALSE(held.oldest_received_ms().has_value());
  const auto record = [](std::string topic, int partition, std::int64_t offset) {
    QueueRecord r;
    r.topic = std::move(topic);
    r.partition = partition;
    r.offset = offset;
    return r;
  };
  const QueueRecord a = record("leads", 0, 7), b = record("leads", 1, 3),
                    c = record("leads.retry", 0, 7);
  held.add(a, 5'000);
  held.add(b, 2'000);
  held.add(c, 2'000);  // same time, another record: both count
  EXPECT_EQ(held.oldest_received_ms(), 2'000);
  held.remove(b);
  EXPECT_EQ(held.oldest_received_ms(), 2'000);
  held.remove(c);
  EXPECT_EQ(held.oldest_received_ms(), 5'000);
  held.remove(record("leads", 0, 8));  // never added: nothing moves
  EXPECT_EQ(held.oldest_received_ms(), 5'000);
  held.remove(a);
  EXPECT_FALSE(held.oldest_received_ms().has_value());
}

TEST_F(WorkerTest, ReportsTheOldestLeadItHoldsUntilItsOutcomeIsRecorded) {
  ScriptedDecider decider(/*gated=*/true);
  options_.concurrency = 4;
  const std::int64_t accepted_at = clock_.now_ms();
  produce_lead(1);
  clock_.advance(3s);
  produce_lead(2);
  clock_.advance(2s);

  auto worker = make_worker(decider);
  worker->start();
  ASSERT_TRUE(eventually([&] { return decider.running() == 2; }));
  EXPECT_EQ(worker->running(), 2);
  // Both auctions wait for their buyers: the first lead, accepted 5 s ago, is the oldest.
  EXPECT_EQ(worker->oldest_held_received_ms(), accepted_at);
  decider.open();
  ASSERT_TRUE(eventually([&] { return publisher_.published().size() == 2; }));
  ASSERT_TRUE(eventually(
      [&] { return !worker->oldest_held_received_ms().has_value() && worker->running() == 0; }));
  worker->stop();
}

}  // namespace
}  // namespace leadflow::testing
