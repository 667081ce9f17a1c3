// The workers' backlog as the ingest reads it from the Kafka brokers (the group's committed
// offsets against the log end), on the real three-node cluster: it shows with no worker left to
// report a lag, and drains to 0 once a worker runs again; and the workers' own lag, from
// librdkafka's statistics of their consumers, reads what the brokers say while leads wait and
// drains with it (tests/support/scaleout_fixture.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "scaleout_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class ScaleOutBacklog : public ScaleOut {
 protected:
  // The value of one series of ingest 0's /metrics (`series` is the name with its labels as
  // rendered); nullopt when it has no sample.
  std::optional<double> ingest_series(const std::string& series) const {
    auto r = client(0)->Get("/metrics", auth());
    if (!r || r->status != 200) return std::nullopt;
    std::istringstream lines(r->body);
    for (std::string l; std::getline(lines, l);)
      if (l.rfind(series + " ", 0) == 0) return std::stod(l.substr(series.size() + 1));
    return std::nullopt;
  }
  // Worker i's leadflow_queue_* series as its /metrics renders them, for a failure's message.
  std::string queue_series(int i) const {
    httplib::Client c("127.0.0.1", workers_[i].metrics_port);
    auto r = c.Get("/metrics");
    std::string out;
    std::istringstream lines(r ? r->body : "");
    for (std::string l; std::getline(lines, l);)
      if (l.rfind("leadflow_queue_", 0) == 0) out += l + "\n";
    return out;
  }
  std::string backlog(const std::string& name) const {
    return name + "{source=\"broker\",group=\"" + prefix_ + "-workers\"}";
  }
  // Waits until `done(value)` holds for the series; returns the last value read.
  std::optional<double> await(const std::string& series, const std::function<bool(double)>& done,
                              std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::optional<double> v;
    while (std::chrono::steady_clock::now() < deadline) {
      v = ingest_series(series);
      if (v && done(*v)) break;
      std::this_thread::sleep_for(250ms);
    }
    return v;
  }
};

TEST_F(ScaleOutBacklog, TheIngestShowsABacklogNoWorkerTakesAndItDrainsOnceOneRuns) {
  // Every worker gone (each finishes and commits what it holds): the workers' own lag series
  // go with them.
  for (auto& w : workers_) ASSERT_EQ(w.process->terminate(40s), 0);
  auto settled = await(
      backlog("leadflow_queue_backlog"), [](double v) { return v == 0; }, 30s);
  ASSERT_EQ(settled, 0.0) << "the setup's leads were all decided and committed";

  std::set<std::string> ids;
  const auto first_post = std::chrono::steady_clock::now();
  for (int n = 0; n < 20; ++n) {
    auto r = client(n % 2)->Post("/v1/leads",
                                 {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                                 sample_lead(5000 + n).dump(), "application/json");
    ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
    ids.insert(json::parse(r->body)["lead_id"].get<std::string>());
  }
  auto waiting = await(
      backlog("leadflow_queue_backlog"), [](double v) { return v == 20; }, 30s);
  EXPECT_EQ(waiting, 20.0) << "20 leads accepted with no worker running";
  EXPECT_EQ(ingest_series(backlog("leadflow_queue_backlog_known")), 1.0);
  // Nobody commits: the stall grows.
  auto stalled = await(
      backlog("leadflow_queue_backlog_stalled_seconds"), [](double v) { return v >= 3; }, 30s);
  EXPECT_GE(stalled.value_or(0), 3.0);
  // The oldest lead's age is counted from its post, not from the group's last move: it has
  // waited at least since the first post, and no longer than the test has run since.
  const auto lower = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_post);
  auto oldest = await(
      backlog("leadflow_queue_backlog_oldest_age_seconds"),
      [&](double v) { return v >= lower.count() - 1.5; }, 30s);
  ASSERT_TRUE(oldest) << "no age of the oldest lead";
  const auto upper = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_post);
  EXPECT_GE(*oldest, lower.count() - 1.5);  // a reading each second, a scrape between
  EXPECT_LE(*oldest, upper.count() + 1.0);  // the records' timestamps are the ingests' clock's

  start_worker(0);
  auto drained = await(
      backlog("leadflow_queue_backlog"), [](double v) { return v == 0; }, 90s);
  EXPECT_EQ(drained, 0.0) << "a worker ran and the backlog did not drain";
  EXPECT_EQ(ingest_series(backlog("leadflow_queue_backlog_stalled_seconds")), 0.0);
  EXPECT_EQ(ingest_series(backlog("leadflow_queue_backlog_oldest_age_seconds")), 0.0);
  EXPECT_TRUE(not_final_after(ids, 30s).empty());
}

// The workers' own lag on the real cluster (leadflow_queue_consumer_lag, what the Grafana lag
// panels sum): buyers answering in 800 ms hold the two workers' 16 auctions each to about 20
// leads a second, 600 leads are posted faster than that, and while they wait the workers' lag,
// summed over both, reads the backlog the ingest reads from the brokers (the workers' statistics
// are up to 5 s old and the ingest's reading up to 1 s, so within what the workers decide in
// 6 s); both are back at 0 once every lead is decided.
TEST_F(ScaleOutBacklog, TheWorkersOwnLagReadsWhatTheBrokersSayAndDrainsWithIt) {
  for (auto& sim : sims_) sim->set_latency(800ms);
  const auto lag = [&] {
    return worker_metric(0, "leadflow_queue_consumer_lag") +
           worker_metric(1, "leadflow_queue_consumer_lag");
  };
  // Four sellers' connections at once, so that the leads arrive well ahead of the workers even
  // on a loaded machine.
  std::set<std::string> ids;
  std::mutex ids_mu;
  std::atomic<int> refused{0};
  std::vector<std::thread> posters;
  for (int t = 0; t < 4; ++t)
    posters.emplace_back([&, t] {
      auto c = client(t % 2);
      for (int n = t; n < 600; n += 4) {
        auto r =
            c->Post("/v1/leads", {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                    sample_lead(7000 + n).dump(), "application/json");
        if (!r || r->status != 202) {
          ++refused;
          continue;
        }
        std::lock_guard lock(ids_mu);
        ids.insert(json::parse(r->body)["lead_id"].get<std::string>());
      }
    });
  for (auto& p : posters) p.join();
  ASSERT_EQ(refused.load(), 0);
  ASSERT_EQ(ids.size(), 600u);
  // Read side by side while leads wait, once the workers' statistics were taken after the last
  // post (before, they may still show fewer leads than were posted).
  std::this_thread::sleep_for(5500ms);
  double workers = 0, brokers = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    workers = lag();
    brokers = ingest_series(backlog("leadflow_queue_backlog")).value_or(-1);
    if (workers >= 100 && brokers >= 100) break;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_GE(workers, 100) << "the workers' lag never showed the waiting leads; worker 0 says:\n"
                          << queue_series(0) << "worker 1:\n"
                          << queue_series(1);
  ASSERT_GE(brokers, 100) << "the brokers' backlog never showed them";
  EXPECT_LE(workers, 600) << "more than was posted: not a lag";
  const auto decided = [&] {
    return worker_metric(0, "leadflow_leads_decided_total") +
           worker_metric(1, "leadflow_leads_decided_total");
  };
  const double before = decided();
  std::this_thread::sleep_for(6s);
  const double in_six_seconds = decided() - before;
  EXPECT_NEAR(workers, brokers, in_six_seconds + 10);

  for (auto& sim : sims_) sim->set_latency(0ms);
  EXPECT_TRUE(not_final_after(ids, 120s).empty());
  auto drained = await(
      backlog("leadflow_queue_backlog"), [](double v) { return v == 0; }, 60s);
  EXPECT_EQ(drained, 0.0);
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (lag() != 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(250ms);
  EXPECT_EQ(lag(), 0) << "the workers' lag stayed up after every lead was decided";
}

}  // namespace
}  // namespace leadflow::testing
