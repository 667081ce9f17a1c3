// The scale-out shape for real: two leadflow-ingest and two leadflow-worker processes sharing the
// real Apache Kafka cluster of the `kafka` fixture (three KRaft nodes) and a real PostgreSQL
// server, with buyer simulators on loopback (tests/support/scaleout_fixture.hpp). Then faults
// under a steady stream of posts, each checked by comparing every lead a seller got an
// acknowledgement for with what the store recorded. The faults aimed at particular brokers are in
// scaleout_kafka_faults_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "scaleout_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(ScaleOut, SyncAnswersComeBackThroughEitherIngestWhicheverWorkerDecides) {
  for (int n = 0; n < 16; ++n) {
    auto r = client(n % 2)->Post("/v1/leads", auth(), sample_lead(n).dump(), "application/json");
    ASSERT_TRUE(r) << "no answer";
    ASSERT_EQ(r->status, 201) << r->body;
    const json body = json::parse(r->body);
    EXPECT_EQ(body["distribution"]["delivery_status"], "delivered");
    EXPECT_DOUBLE_EQ(body["distribution"]["price"].get<double>(), 14.0);  // the highest bidder
  }

  // Async on Surface A: 202, then the lead reads as delivered from the other ingest.
  auto r = client(0)->Post("/v1/leads",
                           {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                           sample_lead(100).dump(), "application/json");
  ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
  const std::string id = json::parse(r->body)["lead_id"];
  EXPECT_TRUE(not_final_after({id}, 30s).empty());
  auto got = client(1)->Get(("/v1/leads/" + id).c_str(), auth());
  ASSERT_TRUE(got && got->status == 200);
  EXPECT_EQ(json::parse(got->body)["data"]["distribution"]["delivery_status"], "delivered");
  // Found by its e-mail through either ingest: the worker process that recorded it keyed it
  // with the installation's secret both ingest processes read from the store.
  const std::string email = sample_lead(100)["email"];
  for (int i = 0; i < 2; ++i) {
    auto found = client(i)->Get(("/v1/leads?q=" + email).c_str(), auth());
    ASSERT_TRUE(found && found->status == 200) << (found ? found->body : "no answer");
    const json page = json::parse(found->body);
    ASSERT_EQ(page["data"].size(), 1u) << found->body;
    EXPECT_EQ(page["data"][0]["lead_id"], id);
  }

  // Surface B, sync and async campaigns.
  auto seller =
      client(0)->Post("/v1/sellers", auth(), json{{"name", "Acme"}}.dump(), "application/json");
  ASSERT_TRUE(seller && seller->status == 201);
  const std::string seller_id = json::parse(seller->body)["data"]["seller_id"];
  for (const std::string mode : {"sync", "async"}) {
    json body = {{"seller_id", seller_id},
                 {"name", mode},
                 {"vertical", "auto_insurance"},
                 {"mode", mode},
                 {"payout", {{"model", "revshare"}, {"value", 70}}}};
    auto c = client(1)->Post("/v1/campaigns", auth(), body.dump(), "application/json");
    ASSERT_TRUE(c && c->status == 201) << (c ? c->body : "no answer");
    const std::string campaign_key = json::parse(c->body)["data"]["campaign_key"];
    auto p = client(0)->Post("/api/v1/lead",
                             sample_campaign_lead(mode == "sync" ? 200 : 201, campaign_key).dump(),
                             "application/json");
    ASSERT_TRUE(p) << "no answer";
    EXPECT_EQ(p->status, mode == "sync" ? 200 : 202) << p->body;
  }

  // SIGTERM drains cleanly: each process finishes what it holds and exits 0.
  EXPECT_EQ(workers_[1].process->terminate(40s), 0);
  EXPECT_EQ(ingest_[1].process->terminate(40s), 0);
}

TEST_F(ScaleOut, SyncAnswersFollowTheBuyersWithinMilliseconds) {
  // The buyers answer pings and posts in 5 ms, so a sync lead is decided about 10 ms after a
  // worker reads it. The lead crosses Kafka to a worker, and its outcome comes back to the
  // ingest announced through PostgreSQL; the crossing may not wait out a consumer's idle fetch,
  // which once made every sync answer take hundreds of milliseconds. The bound is far above
  // what a healthy run takes and far below what a waited-out fetch costs.
  std::vector<double> ms;
  for (int n = 0; n < 15; ++n) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r =
        client(n % 2)->Post("/v1/leads", auth(), sample_lead(300 + n).dump(), "application/json");
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(r) << "no answer";
    ASSERT_EQ(r->status, 201) << r->body;
  }
  // Judged by the fastest answer, which a machine busy with other tests delays least (on a
  // shared 2-core CI machine the median once reached 218 ms while the fastest was 103 ms), and
  // by a median far below a fetch waited out at every crossing.
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms.front(), 150.0) << "fastest sync answer in ms; median " << ms[ms.size() / 2]
                               << ", slowest " << ms.back();
  EXPECT_LT(ms[ms.size() / 2], 400.0)
      << "median sync answer in ms; fastest " << ms.front() << ", slowest " << ms.back();
}

TEST_F(ScaleOut, ReadinessFollowsKafkaReachability) {
  auto ingest_ready = [&] {
    auto r = client(0)->Get("/readyz");
    return r ? r->status : 0;
  };
  auto worker_ready = [&] {
    httplib::Client c("127.0.0.1", workers_[0].metrics_port);
    auto r = c.Get("/readyz");
    return r ? r->status : 0;
  };
  auto eventually = [](const std::function<int()>& probe, int status) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (probe() == status) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  };
  EXPECT_EQ(ingest_ready(), 200);
  EXPECT_EQ(worker_ready(), 200);
  for (int n = 1; n <= KafkaCluster::kNodes; ++n) kafka_.kill9(n);  // every broker
  EXPECT_TRUE(eventually(ingest_ready, 503)) << "ingest still ready with every broker down";
  EXPECT_TRUE(eventually(worker_ready, 503)) << "worker still ready with every broker down";
  ASSERT_TRUE(kafka_.heal(topics(), 90s)) << "the cluster did not come back";
  EXPECT_TRUE(eventually(ingest_ready, 200));
  EXPECT_TRUE(eventually(worker_ready, 200));
}

TEST_F(ScaleOut, PerKeyRateLimitsHoldAcrossIngestReplicas) {
  auto k = client(0)->Post(
      "/v1/api-keys", auth(),
      json{{"name", "standard"}, {"plan", "standard"}, {"scopes", {"leads:write"}}}.dump(),
      "application/json");
  ASSERT_TRUE(k && k->status == 201) << (k ? k->body : "no answer");
  const std::string standard = json::parse(k->body)["data"]["key"];
  int accepted = 0, limited = 0;
  auto c0 = client(0), c1 = client(1);
  const auto started = std::chrono::steady_clock::now();
  for (int n = 0; n < 130; ++n) {
    auto r = (n % 2 == 0 ? c0 : c1)
                 ->Post("/v1/leads",
                        {{"Authorization", "Bearer " + standard}, {"Prefer", "respond-async"}},
                        sample_lead(5000 + n).dump(), "application/json");
    ASSERT_TRUE(r) << "no answer";
    if (r->status == 202)
      ++accepted;
    else if (r->status == 429)
      ++limited;
    else
      FAIL() << r->status << " " << r->body;
  }
  // One bucket of 100 across both replicas, not one each: 100 at once, plus what the bucket
  // refilled meanwhile (100/min), plus at most one second's refill per replica (the lease life).
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LE(accepted, 100 + static_cast<int>(elapsed_s * 100 / 60) + 1 + 2 * 2)
      << elapsed_s << " s";
  EXPECT_GE(accepted, 90);
  EXPECT_EQ(accepted + limited, 130);
}

TEST_F(ScaleOut, Kill9OfAWorkerMidStreamLosesNothingAndSellsNothingTwice) {
  stream_through([&] {
    workers_[0].process->kill_hard();
    std::this_thread::sleep_for(1s);
    workers_[0].start();
  });
}

TEST_F(ScaleOut, Kill9OfAnIngestProcessLosesNoAcknowledgedLead) {
  stream_through([&] {
    ingest_[0].process->kill_hard();
    std::this_thread::sleep_for(1s);
    ingest_[0].start();
  });
}

class ScaleOutOwnPostgres : public ScaleOut {
 protected:
  bool own_postgres() const override { return true; }
};

TEST_F(ScaleOutOwnPostgres, ReadinessFollowsPostgresqlAndKeysAreNot401sDuringAnOutage) {
  auto ready = [&](int i) {
    httplib::Client c("127.0.0.1", workers_[i].metrics_port);
    auto w = c.Get("/readyz");
    auto r = client(i)->Get("/readyz");
    return std::pair{r ? r->status : 0, w ? w->status : 0};
  };
  auto eventually = [&](int status) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (ready(0) == std::pair{status, status}) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  };
  ASSERT_TRUE(eventually(200));
  ASSERT_EQ(std::system((pg_script("halt") + " >/dev/null").c_str()), 0);
  EXPECT_TRUE(eventually(503)) << "ingest or worker still ready with PostgreSQL down";
  // A valid key the store cannot check is "try again", not "unauthorized". A key found in the
  // last second is still believed (the front keeps it that long, docs/security.md), so the post
  // waits out that second: then the front must ask the store, which cannot answer.
  std::this_thread::sleep_for(1100ms);
  auto r = client(0)->Post("/v1/leads", auth(), sample_lead(42).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  ASSERT_EQ(std::system((pg_script("resume") + " >/dev/null").c_str()), 0);
  EXPECT_TRUE(eventually(200)) << "not ready again after PostgreSQL came back";
  r = client(0)->Post("/v1/leads", auth(), sample_lead(43).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201) << r->body;
}

TEST_F(ScaleOutOwnPostgres, APostgresqlRestartLosesNoAcknowledgedLead) {
  stream_through(
      [&] { ASSERT_EQ(std::system((pg_script("restart") + " >/dev/null").c_str()), 0); });
}

}  // namespace
}  // namespace leadflow::testing
