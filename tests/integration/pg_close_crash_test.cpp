// kill -9 around the close of a period while returns are made, on SQLite and on PostgreSQL: a
// month of sales seeded into the store, then the service killed a little later each round after
// asking to close a week of it or the month. Read back from the store, a close is all or
// nothing, and a close that is there froze exactly the statements the ledger gives.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "ingest_process.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/money/statements.hpp"
#include "leadflow/store/store.hpp"
#include "pg_test_database.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

using Service = IngestProcess;

// The embedded service on `dir`, its store at `store_url`.
Service start_service(const TempDir& dir, const std::string& store_url, const std::string& key) {
  return start_ingest_process(dir, {{"LEADFLOW_STORE", store_url},
                                    {"LEADFLOW_VERTICALS", dir.path() + "/verticals.json"},
                                    {"LEADFLOW_BOOTSTRAP_KEY", key},
                                    {"LEADFLOW_HTTP_THREADS", "16"},
                                    {"LEADFLOW_LOG_LEVEL", "warn"}});
}

std::unique_ptr<httplib::SSLClient> client(const TempDir& dir, int port) {
  return ingest_client(dir, port);
}

// Seeds October 2026 into the store before the service opens it: `n` leads of one seller, each
// sold to the buyer `buyer_id` (every tenth to a second one) at a time spread over the month.
std::vector<std::string> seed_october(const std::string& store_url, const std::string& buyer_id,
                                      int n) {
  std::string error;
  auto store = open_migrated_store(store_url, error);
  if (!store) throw std::runtime_error(error);
  Buyer b;
  b.id = buyer_id;
  b.name = "October buyer";
  b.verticals = {"auto_insurance"};
  b.ping_url = "https://buyer.example.com/ping";
  b.post_url = "https://buyer.example.com/post";
  b.return_window_days = 365;
  b.schedule = {{"timezone", "America/New_York"}, {"hours", nlohmann::json::object()}};
  for (const char* day : {"mon", "tue", "wed", "thu", "fri", "sat", "sun"})
    b.schedule["hours"][day] = {{"00:00", "23:59"}};
  if (store->insert_buyer(b) != StoreStatus::kOk) throw std::runtime_error("no buyer");
  const std::int64_t oct = 1'790'812'800'000;  // 2026-10-01T00:00Z
  std::vector<std::string> ids;
  std::vector<Lead> leads;
  std::vector<OutcomeRecord> outcomes;
  for (int i = 0; i < n; ++i) {
    const std::int64_t at = oct + (31LL * 86'400'000 * i) / n;
    Lead l;
    l.id = new_id(kLeadPrefix, at);
    l.seller_id = "sl_october";
    l.api_key_id = "key_seed";
    l.surface = Surface::kApi;
    l.first_name = "Oct";
    l.last_name = std::to_string(i);
    l.email = "oct" + std::to_string(i) + "@example.com";
    l.phone = "+1415" + std::to_string(5'000'000 + i);
    l.zip_code = "94107";
    l.vertical = "auto_insurance";
    l.source = "seed";
    l.received_at_ms = at;
    Distribution d;
    d.status = DeliveryStatus::kDelivered;
    d.buyer_id = i % 10 == 0 ? "by_second" : buyer_id;
    d.price = 1000 + i % 777;
    d.payout = d.price * 7 / 10;
    d.buyer_lead_id = "oct-" + std::to_string(i);
    d.decided_at_ms = at;
    ids.push_back(l.id);
    outcomes.push_back({l.id, d});
    leads.push_back(std::move(l));
    if (leads.size() == 500 || i == n - 1) {
      store->insert_leads(leads);
      for (auto st : store->record_outcomes(outcomes))
        if (st != StoreStatus::kOk) throw std::runtime_error("seed outcome not recorded");
      leads.clear();
      outcomes.clear();
    }
  }
  return ids;
}

class CloseCrash : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") {
      database_ = std::make_unique<PgTestDatabase>("lf_cc");
      ASSERT_TRUE(database_->made()) << kNoPostgres;
      store_url_ = database_->url("?pool_size=4");
    } else {
      store_url_ = "sqlite:" + dir_.path() + "/leadflow.db";
    }
  }

  TempDir dir_;
  std::unique_ptr<PgTestDatabase> database_;
  std::string store_url_;
};

TEST_P(CloseCrash, Kill9AroundACloseLeavesItWholeOrAbsent) {
  // A request written to the service as it is killed must fail, not end the test.
  std::signal(SIGPIPE, SIG_IGN);
  const TempDir& dir = dir_;
  const std::string key = new_api_key_secret();
  std::ofstream(dir.path() + "/verticals.json")
      << R"({"verticals": [{"name": "home_insurance", "max_sales": 2}]})";
  const std::string buyer_id = new_id(kBuyerPrefix, 1'790'812'800'000);
  const auto october = seed_october(store_url_, buyer_id, 20'000);
  const httplib::Headers auth = {{"Authorization", "Bearer " + key}};
  // Weeks of October first, then the month: each round kills the service around one close, a
  // little later each time, while the operator returns October's sales (November's entries).
  const std::vector<std::string> periods{"2026-W40", "2026-W41", "2026-W42", "2026-W43", "2026-10"};
  std::size_t next_return = 0;
  int whole = 0, absent = 0;
  for (std::size_t round = 0; round < periods.size(); ++round) {
    Service svc = start_service(dir, store_url_, key);
    std::atomic<bool> stop{false};
    std::thread returner([&, port = svc.port] {
      auto c = client(dir, port);
      while (!stop && next_return < october.size()) {
        const std::string& id = october[next_return++];
        c->Post(("/v1/leads/" + id + "/return").c_str(), auth, json{{"reason", "duplicate"}}.dump(),
                "application/json");
      }
    });
    std::thread closer([&, port = svc.port] {
      client(dir, port)->Post(("/v1/periods/" + periods[round] + "/close").c_str(), auth, "{}",
                              "application/json");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + 40 * static_cast<int>(round)));
    svc.process->kill_hard();
    stop = true;
    closer.join();
    returner.join();

    // Straight from the store: the close and every total it froze, or neither.
    std::string error;
    auto store = open_store(store_url_, error);
    ASSERT_NE(store, nullptr) << error;
    const auto closes = store->list_closes();
    const auto frozen = store->frozen_totals(periods[round]);
    ASSERT_TRUE(closes && frozen);
    const auto period = *money::parse_period(periods[round]);
    if (!closes->count(periods[round])) {
      EXPECT_TRUE(frozen->empty()) << periods[round] << ": totals without their close";
      ++absent;
      continue;
    }
    ++whole;
    // The buyer (New York), the second buyer and the seller (UTC) each had October sales.
    EXPECT_EQ(frozen->size(), 3u) << periods[round];
    for (const auto& f : *frozen) {
      const auto read = read_statement(*store, f.party, f.account_id, period,
                                       f.account_id == buyer_id ? "America/New_York" : "");
      ASSERT_TRUE(read && read->frozen);
      EXPECT_EQ(read->statement.totals, f.totals) << periods[round] << " " << f.account_id;
      EXPECT_GT(f.totals.sales, 0) << periods[round] << " " << f.account_id;
    }
  }
  // Every period not closed before a kill closes now, whole.
  Service svc = start_service(dir, store_url_, key);
  for (const auto& p : periods) {
    auto r = client(dir, svc.port)
                 ->Post(("/v1/periods/" + p + "/close").c_str(), auth, "{}", "application/json");
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->status == 201 || r->status == 409) << p << ": " << r->body;
  }
  EXPECT_EQ(svc.process->terminate(std::chrono::seconds(20)), 0);
  std::string error;
  auto store = open_store(store_url_, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->list_closes()->size(), periods.size());
  std::cout << GetParam() << ": closes killed: " << whole << " whole, " << absent << " absent; "
            << next_return << " returns asked\n";
}

INSTANTIATE_TEST_SUITE_P(Stores, CloseCrash, ::testing::Values("sqlite", "postgresql"));

}  // namespace
}  // namespace leadflow::testing
