#include "scaleout_fixture.hpp"
#include "pg_test_database.hpp"

#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "leadflow/base/ids.hpp"
#include "leadflow/domain/accounts.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string with_database(const std::string& admin_url, const std::string& db) {
  const auto slash = admin_url.rfind('/');
  return admin_url.substr(0, slash + 1) + db;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void Node::start() {
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

std::string ScaleOut::pg_script(const std::string& verb) const {
  return std::string(LEADFLOW_SOURCE_DIR) + "/scripts/pg_server.sh " + verb + " " + dir_.path() +
         "/pg";
}

std::vector<std::string> ScaleOut::topics() const {
  return {topic(".leads"), topic(".results"), topic(".leads.retry"), topic(".leads.dead")};
}

void ScaleOut::SetUp() {
  ASSERT_FALSE(kafka_.bootstrap().empty())
      << "no Kafka cluster in " << kafka_.dir()
      << ": run through ctest (the kafka_start fixture starts one) or start one with "
         "scripts/kafka_cluster.sh start DIR and set LEADFLOW_TEST_KAFKA_DIR=DIR";
  // A test before this one may have left the cluster hurt (a failed heal): start whole.
  ASSERT_TRUE(kafka_.heal({}, 90s)) << "the Kafka cluster is not whole";
  std::string admin = pg_admin_url();
  if (own_postgres()) {
    // The server runs as the postgres user when the tests run as root: it must pass through.
    ::chmod(dir_.path().c_str(), 0711);
    ASSERT_EQ(std::system((pg_script("start") + " >/dev/null").c_str()), 0);
    std::ifstream in(dir_.path() + "/pg/url");
    std::getline(in, admin);
  }
  ASSERT_FALSE(admin.empty()) << kNoPostgres;
  database_ = "lf_scaleout_" + new_id("t").substr(2);
  for (auto& ch : database_) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  ASSERT_TRUE(psql(admin, "CREATE DATABASE " + database_))
      << "cannot create a database at " << admin;
  admin_url_ = admin;
  store_url_ = with_database(admin, database_) + "?pool_size=4";
  // The cluster outlives the test: its topics and group are the test's own.
  prefix_ = database_;

  key_ = new_api_key_secret();
  sims_.push_back(start_buyer("high", 14.0, 5));
  sims_.push_back(start_buyer("mid", 11.0, 5));
  sims_.push_back(start_buyer("low", 9.0, 5));

  common_env_ = {
      {"LEADFLOW_STORE", store_url_},     {"LEADFLOW_QUEUE", "kafka://" + kafka_.bootstrap()},
      {"LEADFLOW_TOPIC_PREFIX", prefix_}, {"LEADFLOW_WORKER_GROUP", prefix_ + "-workers"},
      {"LEADFLOW_QUEUE_PARTITIONS", "4"}, {"LEADFLOW_KAFKA_REPLICATION", "3"},
      {"LEADFLOW_BOOTSTRAP_KEY", key_},   {"LEADFLOW_ALLOW_PRIVATE_BUYERS", "1"},
      {"LEADFLOW_LOG_LEVEL", "warn"},     {"LEADFLOW_BACKLOG_INTERVAL_MS", "1000"}};
  more_env(common_env_);
  for (int i = 0; i < 2; ++i) {
    Node n;
    n.binary = binary_path("leadflow-ingest");
    n.env = common_env_;
    n.env["LEADFLOW_DATA_DIR"] = dir_.path() + "/ingest" + std::to_string(i);
    n.env["LEADFLOW_LISTEN"] = "127.0.0.1:0";
    n.env["LEADFLOW_HTTP_THREADS"] = "16";
    ingest_.push_back(std::move(n));
  }
  // The first ingest migrates, creates the topics and makes the certificate the second reuses.
  ingest_[0].start();
  const std::string tls = dir_.path() + "/ingest0/tls/";
  ingest_[1].env["LEADFLOW_TLS_CERT"] = tls + "cert.pem";
  ingest_[1].env["LEADFLOW_TLS_KEY"] = tls + "key.pem";
  ingest_[1].start();
  for (std::size_t i = 0; i < 2; ++i) start_worker(i);

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
  const auto deadline = Clock::now() + 90s;
  for (int n = 1; worker_metric(0, "leadflow_leads_decided_total") <= 0 ||
                  worker_metric(1, "leadflow_leads_decided_total") <= 0;
       ++n) {
    ASSERT_LT(Clock::now(), deadline) << "the workers' group did not form";
    auto r = client(0)->Post("/v1/leads",
                             {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                             sample_lead(900'000 + n).dump(), "application/json");
    ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
    std::this_thread::sleep_for(200ms);
  }
}

void ScaleOut::TearDown() {
  for (auto& n : ingest_) n.process.reset();
  for (auto& n : workers_) n.process.reset();
  store_.reset();
  // Whatever the test did to the cluster, the next test starts on a whole one.
  if (!kafka_.bootstrap().empty()) {
    EXPECT_TRUE(kafka_.heal(topics(), 90s)) << "the Kafka cluster did not heal";
  }
  if (own_postgres()) {
    std::system((pg_script("stop") + " >/dev/null 2>&1").c_str());
  } else if (!admin_url_.empty()) {
    psql(admin_url_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }
}

void ScaleOut::start_worker(std::size_t i) {
  if (i == workers_.size()) {
    Node n;
    n.binary = binary_path("leadflow-worker");
    n.env = common_env_;
    n.env["LEADFLOW_METRICS_LISTEN"] = "127.0.0.1:0";
    n.env["LEADFLOW_WORKER_CONCURRENCY"] = "16";
    workers_.push_back(std::move(n));
  }
  workers_[i].start();
}

httplib::Headers ScaleOut::auth(const std::string& key) const {
  return {{"Authorization", "Bearer " + (key.empty() ? key_ : key)}};
}

std::unique_ptr<httplib::SSLClient> ScaleOut::client(int i) const {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", ingest_[i].port);
  c->set_ca_cert_path((dir_.path() + "/ingest0/tls/cert.pem").c_str());
  c->enable_server_certificate_verification(true);
  c->set_connection_timeout(2, 0);
  c->set_read_timeout(15, 0);
  return c;
}

double ScaleOut::worker_metric(int i, const std::string& name) const {
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

std::vector<std::string> ScaleOut::not_final_after(const std::set<std::string>& ids,
                                                   std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  std::vector<std::string> missing;
  do {
    missing.clear();
    for (const auto& id : ids) {
      auto r = store_->get_lead(id).value;
      if (!r || !is_final(r->distribution.status)) missing.push_back(id);
    }
    if (missing.empty()) break;
    std::this_thread::sleep_for(500ms);
  } while (Clock::now() < deadline);
  return missing;
}

std::vector<std::string> ScaleOut::sold_twice() const {
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

std::vector<std::string> ScaleOut::not_delivered(const std::set<std::string>& ids) const {
  std::vector<std::string> out;
  for (const auto& id : ids) {
    auto r = store_->get_lead(id).value;
    if (r && is_final(r->distribution.status) &&
        r->distribution.status != DeliveryStatus::kDelivered)
      out.push_back(id + " (" + std::string(to_string(r->distribution.status)) + ": " +
                    r->distribution.reason + ")");
  }
  return out;
}

StreamReport ScaleOut::stream_through(const std::function<void()>& fault,
                                      std::chrono::seconds after) {
  StreamReport report;
  // Surface A (blocking handlers) and Surface B's async campaign (answered from the event loop
  // by the producer's delivery report) side by side.
  auto seller =
      client(0)->Post("/v1/sellers", auth(), json{{"name", "Acme"}}.dump(), "application/json");
  EXPECT_TRUE(seller && seller->status == 201);
  if (!seller || seller->status != 201) return report;
  json campaign = {{"seller_id", json::parse(seller->body)["data"]["seller_id"]},
                   {"name", "async"},
                   {"vertical", "auto_insurance"},
                   {"mode", "async"},
                   {"payout", {{"model", "revshare"}, {"value", 70}}}};
  auto made = client(0)->Post("/v1/campaigns", auth(), campaign.dump(), "application/json");
  EXPECT_TRUE(made && made->status == 201) << (made ? made->body : "no answer");
  if (!made || made->status != 201) return report;
  const std::string campaign_key = json::parse(made->body)["data"]["campaign_key"];

  std::mutex mu;
  std::set<std::string> acked;
  std::vector<double> latencies_ms;
  std::vector<Clock::time_point> acked_at;
  std::atomic<bool> stop{false};
  std::atomic<int> salt{1000};
  std::atomic<int> refused{0}, acked_b{0}, refused_503{0}, no_answer{0};
  double slowest_refused_ms = 0;
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
        const auto t0 = Clock::now();
        auto r = surface_b
                     ? c.Post("/api/v1/lead", sample_campaign_lead(salt++, campaign_key).dump(),
                              "application/json")
                     : c.Post("/v1/leads",
                              {{"Authorization", "Bearer " + key_}, {"Prefer", "respond-async"}},
                              sample_lead(salt++).dump(), "application/json");
        const auto t1 = Clock::now();
        if (r && r->status == 202) {
          std::lock_guard lock(mu);
          acked.insert(json::parse(r->body)["lead_id"].get<std::string>());
          latencies_ms.push_back(ms_between(t0, t1));
          acked_at.push_back(t1);
          if (surface_b) ++acked_b;
        } else {
          ++refused;  // no answer or a 503: not acknowledged, so the seller retries
          if (!r) ++no_answer;
          if (r && r->status == 503) ++refused_503;
          {
            std::lock_guard lock(mu);
            slowest_refused_ms = std::max(slowest_refused_ms, ms_between(t0, t1));
          }
          std::this_thread::sleep_for(50ms);
        }
        std::this_thread::sleep_for(100ms);  // ~15 leads/s in all: under the key's 1000/min
      }
    });
  }
  std::this_thread::sleep_for(3s);
  const auto fault_at = Clock::now();
  fault();
  std::this_thread::sleep_for(after);
  stop = true;
  for (auto& p : posters) p.join();

  report.acknowledged = acked.size();
  report.acknowledged_b = static_cast<std::size_t>(acked_b.load());
  report.refused = static_cast<std::size_t>(refused.load());
  report.refused_503 = static_cast<std::size_t>(refused_503.load());
  report.refused_no_answer = static_cast<std::size_t>(no_answer.load());
  report.slowest_refused_ms = slowest_refused_ms;
  if (!latencies_ms.empty()) {
    std::sort(latencies_ms.begin(), latencies_ms.end());
    report.slowest_ms = latencies_ms.back();
    report.median_ms = latencies_ms[latencies_ms.size() / 2];
  }
  std::sort(acked_at.begin(), acked_at.end());
  auto last = fault_at;
  for (const auto& at : acked_at) {
    if (at < fault_at) continue;
    report.longest_gap_ms = std::max(report.longest_gap_ms, ms_between(last, at));
    last = at;
  }

  EXPECT_GT(acked.size(), 50u) << "too few leads were acknowledged to prove anything";
  EXPECT_GT(acked_b.load(), 10) << "too few Surface B leads to prove its path";
  const auto missing = not_final_after(acked, 90s);
  EXPECT_TRUE(missing.empty()) << missing.size() << " of " << acked.size()
                               << " acknowledged leads never reached a final status, e.g. "
                               << missing.front();
  const auto twice = sold_twice();
  EXPECT_TRUE(twice.empty()) << twice.size() << " leads were posted to two buyers, e.g. "
                             << twice.front();
  const auto undelivered = not_delivered(acked);
  EXPECT_TRUE(undelivered.empty()) << undelivered.size()
                                   << " acknowledged leads were not sold though every buyer "
                                      "bids and accepts, e.g. "
                                   << undelivered.front();
  for (int i = 0; i < static_cast<int>(workers_.size()); ++i)
    report.redeliveries += std::max(0.0, worker_metric(i, "leadflow_worker_redeliveries_total"));
  std::cout << "acknowledged " << report.acknowledged << " (" << report.acknowledged_b
            << " on Surface B), not acknowledged " << report.refused << " (" << report.refused_503
            << " answered 503, " << report.refused_no_answer << " no answer; slowest "
            << report.slowest_refused_ms << " ms), duplicates delivered to workers "
            << report.redeliveries << "; acknowledged posts: median " << report.median_ms
            << " ms, slowest " << report.slowest_ms
            << " ms; longest stretch without an acknowledgement after the "
            << "fault " << report.longest_gap_ms << " ms\n";
  return report;
}

}  // namespace leadflow::testing
