// The scale-out shape for real: two leadflow-ingest and two leadflow-worker processes sharing the
// Kafka mock cluster (its own process, three brokers) and a real PostgreSQL server, with buyer
// simulators on loopback. Then faults under a steady stream of posts, each checked by comparing
// every lead a seller got an acknowledgement for with what the store recorded.
#include <gtest/gtest.h>

#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string pg_admin_url() {
  if (const char* v = std::getenv("LEADFLOW_TEST_PG_URL"); v && *v) return v;
  std::ifstream in(std::string(LEADFLOW_BINARY_DIR) + "/pg/url");
  std::string url;
  std::getline(in, url);
  return url;
}

// psql runs the statement: the test needs no libpq of its own.
bool psql(const std::string& url, const std::string& sql) {
  const std::string cmd =
      "psql -q -v ON_ERROR_STOP=1 '" + url + "' -c \"" + sql + "\" >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::string with_database(const std::string& admin_url, const std::string& db) {
  const auto slash = admin_url.rfind('/');
  return admin_url.substr(0, slash + 1) + db;
}

/// One process of the deployment, restartable with the same settings.
struct Node {
  std::string binary;
  std::map<std::string, std::string> env;
  std::unique_ptr<ChildProcess> process;
  int port = 0;  // TLS port (ingest) or metrics port (worker)
  int metrics_port = 0;

  void start() {
    process = std::make_unique<ChildProcess>(binary, env);
    const std::string line = process->read_line(60s);
    if (line.empty()) throw std::runtime_error(binary + " did not start");
    const json j = json::parse(line);
    if (j.contains("port")) port = j["port"];
    metrics_port = j.value("metrics_port", 0);
    // A restart keeps the ports, so clients (and the test's poster threads) need not look again.
    if (port != 0) env["LEADFLOW_LISTEN"] = "127.0.0.1:" + std::to_string(port);
    if (metrics_port != 0)
      env["LEADFLOW_METRICS_LISTEN"] = "127.0.0.1:" + std::to_string(metrics_port);
  }
};

class ScaleOut : public ::testing::Test {
 protected:
  /// A test that restarts PostgreSQL runs its own server, so tests running beside it keep theirs.
  virtual bool own_postgres() const { return false; }

  std::string pg_script(const std::string& verb) const {
    return std::string(LEADFLOW_SOURCE_DIR) + "/scripts/pg_server.sh " + verb + " " + dir_.path() +
           "/pg";
  }

  void SetUp() override {
    std::string admin = pg_admin_url();
    if (own_postgres()) {
      // The server runs as the postgres user when the tests run as root: it must pass through.
      ::chmod(dir_.path().c_str(), 0711);
      ASSERT_EQ(std::system((pg_script("start") + " >/dev/null").c_str()), 0);
      std::ifstream in(dir_.path() + "/pg/url");
      std::getline(in, admin);
    }
    ASSERT_FALSE(admin.empty())
        << "no PostgreSQL: run through ctest (the postgres_start fixture starts one) or set "
           "LEADFLOW_TEST_PG_URL to an admin URL";
    database_ = "lf_scaleout_" + new_id("t").substr(2);
    for (auto& ch : database_) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    ASSERT_TRUE(psql(admin, "CREATE DATABASE " + database_))
        << "cannot create a database at " << admin;
    admin_url_ = admin;
    store_url_ = with_database(admin, database_) + "?pool_size=4";

    kafka_ = std::make_unique<ChildProcess>(
        binary_path("leadflow-kafka-mock"),
        std::vector<std::string>{"--exit-on-stdin-eof", "--brokers", "3", "--topic",
                                 "leadflow.leads:4", "--topic", "leadflow.results:4", "--topic",
                                 "leadflow.leads.retry:4", "--topic", "leadflow.leads.dead:1"},
        std::map<std::string, std::string>{});
    const std::string line = kafka_->read_line(30s);
    ASSERT_EQ(line.rfind("BOOTSTRAP ", 0), 0u) << line;
    bootstrap_ = line.substr(10);

    key_ = new_api_key_secret();
    sims_.push_back(start_buyer("high", 14.0, 5));
    sims_.push_back(start_buyer("mid", 11.0, 5));
    sims_.push_back(start_buyer("low", 9.0, 5));

    const std::map<std::string, std::string> common = {
        {"LEADFLOW_STORE", store_url_},     {"LEADFLOW_QUEUE", "kafka://" + bootstrap_},
        {"LEADFLOW_QUEUE_PARTITIONS", "4"}, {"LEADFLOW_KAFKA_REPLICATION", "3"},
        {"LEADFLOW_BOOTSTRAP_KEY", key_},   {"LEADFLOW_ALLOW_PRIVATE_BUYERS", "1"},
        {"LEADFLOW_LOG_LEVEL", "warn"}};
    for (int i = 0; i < 2; ++i) {
      Node n;
      n.binary = binary_path("leadflow-ingest");
      n.env = common;
      n.env["LEADFLOW_DATA_DIR"] = dir_.path() + "/ingest" + std::to_string(i);
      n.env["LEADFLOW_LISTEN"] = "127.0.0.1:0";
      n.env["LEADFLOW_HTTP_THREADS"] = "16";
      ingest_.push_back(std::move(n));
    }
    for (int i = 0; i < 2; ++i) {
      Node n;
      n.binary = binary_path("leadflow-worker");
      n.env = common;
      n.env["LEADFLOW_METRICS_LISTEN"] = "127.0.0.1:0";
      n.env["LEADFLOW_WORKER_CONCURRENCY"] = "16";
      workers_.push_back(std::move(n));
    }
    // The first ingest migrates and makes the certificate the second one reuses.
    ingest_[0].start();
    const std::string tls = dir_.path() + "/ingest0/tls/";
    ingest_[1].env["LEADFLOW_TLS_CERT"] = tls + "cert.pem";
    ingest_[1].env["LEADFLOW_TLS_KEY"] = tls + "key.pem";
    ingest_[1].start();
    for (auto& w : workers_) w.start();

    for (auto& sim : sims_) {
      json buyer = {
          {"name", sim->name()},
          {"verticals", {"auto_insurance"}},
          {"delivery",
           {{"mode", "ping_post"}, {"ping_url", sim->ping_url()}, {"post_url", sim->post_url()}}},
          {"duplicate_lookback_days", 0}};
      auto r = client(0)->Post("/v1/buyers", auth(), buyer.dump(), "application/json");
      ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    }
    std::string error;
    store_ = open_store(store_url_, error);
    ASSERT_NE(store_, nullptr) << error;

    // The workers' group forms in a few seconds; once each worker has decided a lead, both hold
    // partitions and no rebalance is pending.
    const auto deadline = std::chrono::steady_clock::now() + 90s;
    for (int n = 1; worker_metric(0, "leadflow_leads_decided_total") <= 0 ||
                    worker_metric(1, "leadflow_leads_decided_total") <= 0;
         ++n) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the workers' group did not form";
      auto r = client(0)->Post("/v1/leads",
                               {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                               sample_lead(900'000 + n).dump(), "application/json");
      ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
      std::this_thread::sleep_for(200ms);
    }
  }

  void TearDown() override {
    for (auto& n : ingest_) n.process.reset();
    for (auto& n : workers_) n.process.reset();
    store_.reset();
    kafka_.reset();
    if (own_postgres()) {
      std::system((pg_script("stop") + " >/dev/null 2>&1").c_str());
    } else if (!admin_url_.empty()) {
      psql(admin_url_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
    }
  }

  httplib::Headers auth(const std::string& key = "") const {
    return {{"Authorization", "Bearer " + (key.empty() ? key_ : key)}};
  }

  std::unique_ptr<httplib::SSLClient> client(int i) const {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", ingest_[i].port);
    c->set_ca_cert_path((dir_.path() + "/ingest0/tls/cert.pem").c_str());
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(2, 0);
    c->set_read_timeout(15, 0);
    return c;
  }

  /// A worker metric's value (the sum of its series), read from its /metrics.
  double worker_metric(int i, const std::string& name) const {
    httplib::Client c("127.0.0.1", workers_[i].metrics_port);
    auto r = c.Get("/metrics");
    if (!r || r->status != 200) return -1;
    double sum = 0;
    std::istringstream lines(r->body);
    for (std::string l; std::getline(lines, l);) {
      if (l.rfind(name, 0) != 0) continue;
      const char next = l[name.size()];
      if (next != ' ' && next != '{') continue;
      sum += std::stod(l.substr(l.rfind(' ') + 1));
    }
    return sum;
  }

  /// Waits until every lead in `ids` has a final status in the store; returns the ones that
  /// have none.
  std::vector<std::string> not_final_after(const std::set<std::string>& ids,
                                           std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<std::string> missing;
    do {
      missing.clear();
      for (const auto& id : ids) {
        auto r = store_->get_lead(id);
        if (!r || !is_final(r->distribution.status)) missing.push_back(id);
      }
      if (missing.empty()) break;
      std::this_thread::sleep_for(500ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return missing;
  }

  /// Lead ids posted (and accepted) by more than one buyer: a lead sold twice.
  std::vector<std::string> sold_twice() const {
    std::map<std::string, std::set<std::string>> buyers_of;
    for (const auto& sim : sims_)
      for (const auto& post : sim->posts()) {
        const json body = json::parse(post.body, nullptr, false);
        if (body.is_object() && body.contains("lead_id"))
          buyers_of[body["lead_id"].get<std::string>()].insert(sim->name());
      }
    std::vector<std::string> twice;
    for (const auto& [lead, buyers] : buyers_of)
      if (buyers.size() > 1) twice.push_back(lead);
    return twice;
  }

  /// Streams async Surface A posts over both ingest processes while `fault` runs, then checks
  /// that every acknowledged lead reached a final status and none was sold twice.
  void stream_through(const std::function<void()>& fault) {
    // Surface A (blocking handlers) and Surface B's async campaign (answered from the event loop
    // by the producer's delivery report) side by side.
    auto seller =
        client(0)->Post("/v1/sellers", auth(), json{{"name", "Acme"}}.dump(), "application/json");
    ASSERT_TRUE(seller && seller->status == 201);
    json campaign = {{"seller_id", json::parse(seller->body)["data"]["seller_id"]},
                     {"name", "async"},
                     {"vertical", "auto_insurance"},
                     {"mode", "async"},
                     {"payout", {{"model", "revshare"}, {"value", 70}}}};
    auto made = client(0)->Post("/v1/campaigns", auth(), campaign.dump(), "application/json");
    ASSERT_TRUE(made && made->status == 201) << (made ? made->body : "no answer");
    const std::string campaign_key = json::parse(made->body)["data"]["campaign_key"];

    std::mutex mu;
    std::set<std::string> acked;
    std::atomic<bool> stop{false};
    std::atomic<int> salt{1000};
    std::atomic<int> answered{0}, refused{0}, acked_b{0};
    std::vector<std::thread> posters;
    for (int t = 0; t < 2; ++t) {
      posters.emplace_back([&, t] {
        int turn = t;
        while (!stop) {
          const int i = turn++ % 2;
          const bool surface_b = (turn / 2) % 2 == 1;
          httplib::SSLClient c("127.0.0.1", ingest_[i].port);
          c.set_ca_cert_path((dir_.path() + "/ingest0/tls/cert.pem").c_str());
          c.enable_server_certificate_verification(true);
          c.set_connection_timeout(1, 0);
          c.set_read_timeout(15, 0);
          auto r = surface_b
                       ? c.Post("/api/v1/lead", sample_campaign_lead(salt++, campaign_key).dump(),
                                "application/json")
                       : c.Post("/v1/leads",
                                {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                                sample_lead(salt++).dump(), "application/json");
          if (r && r->status == 202) {
            std::lock_guard lock(mu);
            acked.insert(json::parse(r->body)["lead_id"].get<std::string>());
            ++answered;
            if (surface_b) ++acked_b;
          } else {
            ++refused;  // no answer or a 503: not acknowledged, so the seller retries
            std::this_thread::sleep_for(50ms);
          }
          std::this_thread::sleep_for(100ms);  // ~15 leads/s in all: under the key's 1000/min
        }
      });
    }
    std::this_thread::sleep_for(3s);
    fault();
    std::this_thread::sleep_for(4s);
    stop = true;
    for (auto& p : posters) p.join();

    ASSERT_GT(acked.size(), 50u) << "too few leads were acknowledged to prove anything";
    EXPECT_GT(acked_b.load(), 10) << "too few Surface B leads to prove its path";
    const auto missing = not_final_after(acked, 90s);
    EXPECT_TRUE(missing.empty()) << missing.size() << " of " << acked.size()
                                 << " acknowledged leads never reached a final status, e.g. "
                                 << missing.front();
    const auto twice = sold_twice();
    EXPECT_TRUE(twice.empty()) << twice.size() << " leads were posted to two buyers, e.g. "
                               << twice.front();
    double redeliveries = 0;
    for (int i = 0; i < 2; ++i)
      redeliveries += std::max(0.0, worker_metric(i, "leadflow_worker_redeliveries_total"));
    std::cout << "acknowledged " << acked.size() << " (" << acked_b
              << " on Surface B), not acknowledged " << refused
              << ", duplicates delivered to workers " << redeliveries << "\n";
  }

  TempDir dir_;
  std::string admin_url_, database_, store_url_, bootstrap_, key_;
  std::unique_ptr<ChildProcess> kafka_;
  std::vector<std::unique_ptr<BuyerSimulator>> sims_;
  std::vector<Node> ingest_, workers_;
  std::unique_ptr<Store> store_;
};

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
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms[ms.size() / 2], 150.0)
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
  ASSERT_TRUE(kafka_->write_line("down -1"));  // every broker
  ASSERT_EQ(kafka_->read_line(5s), "OK");
  EXPECT_TRUE(eventually(ingest_ready, 503)) << "ingest still ready with every broker down";
  EXPECT_TRUE(eventually(worker_ready, 503)) << "worker still ready with every broker down";
  ASSERT_TRUE(kafka_->write_line("up -1"));
  ASSERT_EQ(kafka_->read_line(5s), "OK");
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

TEST_F(ScaleOut, ABrokerDownAndBackLosesNoAcknowledgedLead) {
  stream_through([&] {
    ASSERT_TRUE(kafka_->write_line("down 1"));
    EXPECT_EQ(kafka_->read_line(5s), "OK");
    std::this_thread::sleep_for(3s);
    ASSERT_TRUE(kafka_->write_line("up 1"));
    EXPECT_EQ(kafka_->read_line(5s), "OK");
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
  // A valid key the store cannot check is "try again", not "unauthorized".
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
