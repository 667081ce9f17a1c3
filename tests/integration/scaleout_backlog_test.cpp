// The workers' backlog as the ingest reads it from the Kafka brokers (the group's committed
// offsets against the log end), on the real three-node cluster: it shows with no worker left to
// report a lag, and drains to 0 once a worker runs again (tests/support/scaleout_fixture.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace leadflow::testing
