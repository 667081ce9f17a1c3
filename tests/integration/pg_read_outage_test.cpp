// The API's reads while its PostgreSQL store is unreachable: a lead, buyer, seller or campaign the
// store cannot read is a 503 with Retry-After (the store-outage answer of errors.cpp), never a 404
// or an empty page, on GET /v1/leads/{id}, GET /v1/leads (its search too), GET /v1/buyers/{id},
// GET /v1/buyers, GET /v1/sellers/{id}, GET /v1/campaigns/{id} and its specification; and the
// same routes answer again once the store is back. The outage is the one
// the store's own tests make (pg_store_test): the database refuses connections and its
// connections are ended. The service runs on a clock that stands still, so the operator's key,
// found once, stays believed through the outage (the front keeps a found key for a second of its
// clock, docs/security.md): what answers is the read, not the key check.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/store/store.hpp"
#include "pg_test_database.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

class PgReadOutage : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = pg_admin_url();
    ASSERT_FALSE(admin_.empty()) << kNoPostgres;
    database_ = "lf_outage_" + new_id("t").substr(2);
    for (auto& ch : database_) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    ASSERT_TRUE(psql(admin_, "CREATE DATABASE " + database_));
    ServiceOptions o;
    o.workers = 0;
    o.store_url = admin_.substr(0, admin_.rfind('/') + 1) + database_ + "?pool_size=2";
    o.shared_limits = false;  // the rate limits in the process: only the reads ask the store
    o.clock = &clock_;
    svc_ = std::make_unique<ServiceFixture>(o);

    // A lead as a worker records it, written through a store of the test's own.
    std::string error;
    auto store = open_migrated_store(o.store_url, error);
    ASSERT_NE(store, nullptr) << error;
    Lead l;
    l.id = new_id(kLeadPrefix, clock_.now_ms());
    l.seller_id = "sl_outage";
    l.vertical = "auto_insurance";
    l.source = "outage";
    l.email = "outage@example.com";
    l.received_at_ms = clock_.now_ms();
    ASSERT_EQ(store->insert_leads(std::vector<Lead>{l}).size(), 1u);
    lead_id_ = l.id;
    auto sim = start_buyer("outage", 10.0);
    buyer_id_ = svc_->add_buyer(*sim);
    seller_id_ = svc_->add_seller();
    campaign_id_ = svc_->add_campaign(seller_id_).first;
  }
  void TearDown() override {
    if (!database_.empty()) {
      set_allow_connections(true);
      svc_.reset();
      psql(admin_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
    }
  }

  bool set_allow_connections(bool allow) {
    return psql(admin_, "ALTER DATABASE " + database_ + " WITH ALLOW_CONNECTIONS " +
                            (allow ? "true" : "false"));
  }
  // The server goes away for this database: no new connection, and the open ones ended.
  void take_the_store_down() {
    ASSERT_TRUE(set_allow_connections(false));
    ASSERT_TRUE(psql(admin_,
                     "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname "
                     "= '" +
                         database_ + "' AND pid <> pg_backend_pid()"));
  }

  httplib::Result get(const std::string& path) { return svc_->get(path, svc_->operator_key()); }

  // Every read route of the test, and its answer's status.
  std::vector<std::pair<std::string, int>> statuses() {
    std::vector<std::pair<std::string, int>> out;
    const std::vector<std::string> paths{"/v1/leads/" + lead_id_,
                                         "/v1/leads",
                                         "/v1/leads?q=" + lead_id_,
                                         "/v1/buyers/" + buyer_id_,
                                         "/v1/buyers",
                                         "/v1/sellers/" + seller_id_,
                                         "/v1/campaigns/" + campaign_id_,
                                         "/v1/campaigns/" + campaign_id_ + "/specification"};
    for (const std::string& path : paths) {
      auto r = get(path);
      out.emplace_back(path, r ? r->status : 0);
    }
    return out;
  }

  ManualClock clock_;
  std::string admin_, database_, lead_id_, buyer_id_, seller_id_, campaign_id_;
  std::unique_ptr<ServiceFixture> svc_;
};

TEST_F(PgReadOutage, RecordReadsAre503WhileTheStoreIsDownNot404OrEmpty) {
  // Up: each answers, and an unknown lead or buyer is a 404.
  for (const auto& [path, status] : statuses()) EXPECT_EQ(status, 200) << path;
  EXPECT_EQ(json::parse(get("/v1/leads")->body)["data"].size(), 1u);
  EXPECT_EQ(get("/v1/leads/ld_01JQ0000000000000000000009")->status, 404);
  EXPECT_EQ(get("/v1/buyers/by_01JQ0000000000000000000009")->status, 404);
  EXPECT_EQ(get("/v1/sellers/sl_01JQ0000000000000000000009")->status, 404);
  EXPECT_EQ(get("/v1/campaigns/cp_01JQ0000000000000000000009")->status, 404);

  take_the_store_down();
  for (const std::string& path : std::vector<std::string>{
           "/v1/leads/" + lead_id_, "/v1/leads/ld_01JQ0000000000000000000009", "/v1/leads",
           "/v1/leads?q=" + lead_id_, "/v1/buyers/" + buyer_id_, "/v1/buyers",
           "/v1/sellers/" + seller_id_, "/v1/campaigns/" + campaign_id_,
           "/v1/campaigns/" + campaign_id_ + "/specification",
           "/v1/campaigns/cp_01JQ0000000000000000000009", "/v1/sellers", "/v1/campaigns",
           "/v1/api-keys", "/v1/users"}) {
    auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 503) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Retry-After"), "1") << path;
    const json body = json::parse(r->body, nullptr, false);
    EXPECT_EQ(body.value("detail", ""), "the store cannot be reached; retry") << path;
    EXPECT_FALSE(body.contains("data")) << path;
  }

  // Back: the same store answers again (the pool finds new connections by itself; a call may
  // first meet a connection it has not yet found dead).
  ASSERT_TRUE(set_allow_connections(true));
  for (int i = 0; i < 10 && get("/v1/leads/" + lead_id_)->status != 200; ++i) {
  }
  for (const auto& [path, status] : statuses()) EXPECT_EQ(status, 200) << path;
}

// The suppression list routes while the store is down: every read and write is a 503 (nothing
// changed), never a 404 or an empty list; back up, the list is as it was.
TEST_F(PgReadOutage, SuppressionListRoutesAre503WhileTheStoreIsDown) {
  auto made =
      svc_->post("/v1/suppression-lists", {{"name", "Do not contact"}}, svc_->operator_key());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = json::parse(made->body)["data"]["list_id"];
  auto cli = svc_->https();
  const httplib::Headers auth{{"Authorization", "Bearer " + svc_->operator_key()}};
  const auto upload = [&] {
    return cli->Put("/v1/suppression-lists/" + id + "/entries", auth, "a@example.com\n",
                    "text/csv");
  };
  ASSERT_EQ(upload()->status, 200);

  take_the_store_down();
  std::vector<std::pair<std::string, httplib::Result>> tries;
  tries.emplace_back("list", get("/v1/suppression-lists"));
  tries.emplace_back("read", get("/v1/suppression-lists/" + id));
  tries.emplace_back(
      "create", svc_->post("/v1/suppression-lists", {{"name", "Another"}}, svc_->operator_key()));
  tries.emplace_back("upload", upload());
  tries.emplace_back("delete", cli->Delete("/v1/suppression-lists/" + id, auth));
  for (const auto& [what, r] : tries) {
    ASSERT_TRUE(r) << what;
    EXPECT_EQ(r->status, 503) << what << ": " << r->body;
    EXPECT_FALSE(json::parse(r->body, nullptr, false).contains("data")) << what;
  }

  ASSERT_TRUE(set_allow_connections(true));
  for (int i = 0; i < 10 && get("/v1/suppression-lists/" + id)->status != 200; ++i) {
  }
  const json lists = json::parse(get("/v1/suppression-lists")->body)["data"];
  ASSERT_EQ(lists.size(), 1u) << lists.dump();
  EXPECT_EQ(lists[0]["entries"], 1);
}

}  // namespace
}  // namespace leadflow::testing
