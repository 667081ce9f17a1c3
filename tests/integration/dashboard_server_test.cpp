// What the dashboard needs of the server, over real HTTPS: campaigns read by their seller and
// changed by the operator, buyers' health from the performance rollup.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

std::set<std::string> fields_of(const httplib::Result& r) {
  const json body = body_of(r);
  std::set<std::string> out;
  for (const auto& e : body["errors"]) out.insert(e["field"].get<std::string>());
  return out;
}

httplib::Result put(const ServiceFixture& svc, const std::string& path, const json& body,
                    const std::string& key) {
  return svc.https()->Put(path.c_str(), httplib::Headers{{"Authorization", "Bearer " + key}},
                          body.dump(), "application/json");
}

// --- campaigns --------------------------------------------------------------------------------

class CampaignApiTest : public ::testing::Test {
 protected:
  ServiceFixture svc{[] {
    ServiceOptions o;
    o.workers = 0;
    return o;
  }()};
};

TEST_F(CampaignApiTest, PutReplacesTheNamedFieldsAndKeepsTheRest) {
  const std::string seller = svc.add_seller("Owner");
  const auto [id, key] = svc.add_campaign(seller);
  const std::string path = "/v1/campaigns/" + id;
  auto before = svc.get(path, svc.operator_key());
  ASSERT_EQ(before->status, 200) << before->body;
  const json read = body_of(before)["data"];
  EXPECT_EQ(read["campaign_id"], id);
  EXPECT_EQ(read["campaign_key_hint"].get<std::string>().rfind("lfc_", 0), 0u);

  auto changed = put(svc, path,
                     {{"name", "Renamed"},
                      {"status", "paused"},
                      {"mode", "async"},
                      {"sync_timeout_ms", 900},
                      {"rate_limit_per_minute", 50},
                      {"payout", {{"model", "fixed"}, {"value", 2.5}}}},
                     svc.operator_key());
  ASSERT_EQ(changed->status, 200) << changed->body;
  json expected = read;
  expected["name"] = "Renamed";
  expected["status"] = "paused";
  expected["mode"] = "async";
  expected["sync_timeout_ms"] = 900;
  expected["rate_limit_per_minute"] = 50;
  expected["payout"] = {{"model", "fixed"}, {"value", 2.5}};
  EXPECT_EQ(body_of(changed)["data"], expected);
  EXPECT_EQ(body_of(svc.get(path, svc.operator_key()))["data"], expected);

  // The view may be sent back as read; only the fields it names change.
  json back = expected;
  back["name"] = "Renamed again";
  auto again = put(svc, path, back, svc.operator_key());
  ASSERT_EQ(again->status, 200) << again->body;
  expected["name"] = "Renamed again";
  EXPECT_EQ(body_of(again)["data"], expected);
  auto name_only = put(svc, path, {{"name", "Third"}}, svc.operator_key());
  ASSERT_EQ(name_only->status, 200) << name_only->body;
  EXPECT_EQ(body_of(name_only)["data"]["mode"], "async");
  EXPECT_EQ(body_of(name_only)["data"]["payout"], expected["payout"]);
}

TEST_F(CampaignApiTest, PutRefusesTheSellerTheVerticalTheKeyAndBadValues) {
  const std::string seller = svc.add_seller("Owner");
  const std::string other = svc.add_seller("Other");
  const auto [id, key] = svc.add_campaign(seller);
  const std::string path = "/v1/campaigns/" + id;
  auto fixed =
      put(svc, path, {{"seller_id", other}, {"vertical", "mortgage"}, {"campaign_key", key}},
          svc.operator_key());
  ASSERT_EQ(fixed->status, 400) << fixed->body;
  EXPECT_EQ(fields_of(fixed), (std::set<std::string>{"seller_id", "vertical", "campaign_key"}));
  const json refused = body_of(fixed);
  for (const auto& e : refused["errors"]) {
    EXPECT_EQ(e["code"], "read_only");
  }

  auto bad = put(svc, path,
                 {{"name", 5},
                  {"status", "gone"},
                  {"mode", "later"},
                  {"sync_timeout_ms", 5},
                  {"rate_limit_per_minute", "many"},
                  {"payout", {{"model", "percent"}, {"value", 10}}},
                  {"colour", "red"}},
                 svc.operator_key());
  ASSERT_EQ(bad->status, 400) << bad->body;
  EXPECT_EQ(fields_of(bad),
            (std::set<std::string>{"name", "status", "mode", "sync_timeout_ms",
                                   "rate_limit_per_minute", "payout.model", "colour"}));
  EXPECT_EQ(put(svc, path, json::array(), svc.operator_key())->status, 400);
  // Nothing changed.
  const json now = body_of(svc.get(path, svc.operator_key()))["data"];
  EXPECT_EQ(now["name"], "Spring promo");
  EXPECT_EQ(now["seller_id"], seller);
  EXPECT_EQ(now["vertical"], "auto_insurance");

  EXPECT_EQ(put(svc, "/v1/campaigns/cp_nothing", {{"name", "X"}}, svc.operator_key())->status, 404);
  EXPECT_EQ(svc.get("/v1/campaigns/cp_nothing", svc.operator_key())->status, 404);
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller}});
  EXPECT_EQ(put(svc, path, {{"name", "Mine now"}}, seller_key)->status, 403);
}

TEST_F(CampaignApiTest, APausedCampaignStopsTakingLeadsWithinItsCacheTime) {
  const std::string seller = svc.add_seller("Owner");
  const auto [id, key] = svc.add_campaign(seller, {{"mode", "async"}});
  auto first = svc.post("/api/v1/lead", sample_campaign_lead(1, key), "");
  ASSERT_EQ(first->status, 202) << first->body;
  ASSERT_EQ(put(svc, "/v1/campaigns/" + id, {{"status", "paused"}}, svc.operator_key())->status,
            200);
  // The front caches campaigns for a second.
  int status = 0;
  for (int i = 0; i < 40 && status != 401; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = svc.post("/api/v1/lead", sample_campaign_lead(2 + i, key), "")->status;
  }
  EXPECT_EQ(status, 401);
  ASSERT_EQ(put(svc, "/v1/campaigns/" + id, {{"status", "active"}}, svc.operator_key())->status,
            200);
  for (int i = 0; i < 40 && status != 202; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = svc.post("/api/v1/lead", sample_campaign_lead(100 + i, key), "")->status;
  }
  EXPECT_EQ(status, 202);
}

TEST_F(CampaignApiTest, ASellerListsOnlyItsOwnCampaignsWithoutKeys) {
  const std::string mine = svc.add_seller("Mine");
  const std::string theirs = svc.add_seller("Theirs");
  const auto [my_id, my_key] = svc.add_campaign(mine);
  const auto [their_id, their_key] = svc.add_campaign(theirs);
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", mine}});

  auto list = svc.get("/v1/campaigns", seller_key);
  ASSERT_EQ(list->status, 200) << list->body;
  const json data = body_of(list)["data"];
  ASSERT_EQ(data.size(), 1u) << list->body;
  EXPECT_EQ(data[0]["campaign_id"], my_id);
  EXPECT_FALSE(data[0].contains("campaign_key_hint"));
  EXPECT_EQ(list->body.find(my_key), std::string::npos);
  EXPECT_EQ(list->body.find(my_key.substr(0, 8)), std::string::npos);
  auto own = svc.get("/v1/campaigns/" + my_id, seller_key);
  ASSERT_EQ(own->status, 200) << own->body;
  EXPECT_FALSE(body_of(own)["data"].contains("campaign_key_hint"));
  EXPECT_EQ(svc.get("/v1/campaigns/" + their_id, seller_key)->status, 404);
  EXPECT_EQ(svc.get("/v1/campaigns?seller_id=" + theirs, seller_key)->status, 400);
  EXPECT_EQ(svc.get("/v1/campaigns?seller_id=" + mine, seller_key)->status, 200);
  EXPECT_EQ(svc.get("/v1/campaigns?colour=red", seller_key)->status, 400);

  // A seller user's session reads the same list.
  ASSERT_EQ(svc.post("/v1/users",
                     {{"email", "mine@example.com"},
                      {"name", "Mine"},
                      {"password", kPassword},
                      {"account", "seller"},
                      {"seller_id", mine}},
                     svc.operator_key())
                ->status,
            201);
  auto signed_in = svc.https()->Post(
      "/v1/session", json{{"email", "mine@example.com"}, {"password", kPassword}}.dump(),
      "application/json");
  ASSERT_EQ(signed_in->status, 201) << signed_in->body;
  const std::string set = signed_in->get_header_value("Set-Cookie");
  auto by_session =
      svc.https()->Get("/v1/campaigns", httplib::Headers{{"Cookie", set.substr(0, set.find(';'))}});
  ASSERT_EQ(by_session->status, 200) << by_session->body;
  EXPECT_EQ(body_of(by_session)["data"], data);

  // The operator sees every campaign, hints included; a buyer none.
  auto all = svc.get("/v1/campaigns", svc.operator_key());
  ASSERT_EQ(all->status, 200);
  ASSERT_EQ(body_of(all)["data"].size(), 2u);
  EXPECT_TRUE(body_of(all)["data"][0].contains("campaign_key_hint"));
  EXPECT_EQ(body_of(svc.get("/v1/campaigns?seller_id=" + theirs,
                            svc.operator_key()))["data"][0]["campaign_id"],
            their_id);
  auto sim = start_buyer("b", 5.0);
  const std::string buyer = svc.add_buyer(*sim);
  const std::string buyer_key = svc.add_api_key({{"name", "b"}, {"buyer_id", buyer}});
  EXPECT_EQ(svc.get("/v1/campaigns", buyer_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/campaigns/" + my_id, buyer_key)->status, 403);
  const std::string write_only =
      svc.add_api_key({{"name", "w"}, {"seller_id", mine}, {"scopes", {"leads:write"}}});
  EXPECT_EQ(svc.get("/v1/campaigns", write_only)->status, 403);
}

// --- buyer health -----------------------------------------------------------------------------

TEST(BuyerHealthTest, ListAndViewCarryTheLast24HoursOfTheRollup) {
  ServiceFixture svc;
  auto good = start_buyer("good", 12.0);
  auto bad = start_buyer("bad", 12.0);
  bad->set_error_rate(1.0);
  auto idle = start_buyer("idle", 12.0);
  const std::string good_id = svc.add_buyer(*good);
  const std::string bad_id = svc.add_buyer(*bad);
  const std::string idle_id = svc.add_buyer(*idle, "solar");
  for (int i = 0; i < 3; ++i) {
    auto r = svc.post("/v1/leads", sample_lead(i), svc.operator_key());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  json health;
  for (int i = 0; i < 100; ++i) {
    auto r = svc.get("/v1/buyers/" + bad_id, svc.operator_key());
    ASSERT_EQ(r->status, 200) << r->body;
    health = body_of(r)["data"]["health"];
    if (health["pings_24h"] == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(health, (json{{"status", "failing"},
                          {"pings_24h", 3},
                          {"posts_24h", 0},
                          {"errors_24h", 3},
                          {"timeouts_24h", 0},
                          {"error_rate_24h", 1.0},
                          {"return_rate", 0.0},
                          {"flagged", false}}));

  auto list = svc.get("/v1/buyers", svc.operator_key());
  ASSERT_EQ(list->status, 200) << list->body;
  std::map<std::string, json> by_id;
  const json listed = body_of(list);
  for (const auto& b : listed["data"]) by_id[b["buyer_id"]] = b["health"];
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id[bad_id], health);
  const json& g = by_id[good_id];
  EXPECT_EQ(g["status"], "healthy");
  EXPECT_EQ(g["pings_24h"], 3);
  EXPECT_EQ(g["posts_24h"], 3);
  EXPECT_EQ(g["errors_24h"], 0);
  EXPECT_EQ(g["error_rate_24h"], 0.0);
  EXPECT_EQ(by_id[idle_id], (json{{"status", "idle"},
                                  {"pings_24h", 0},
                                  {"posts_24h", 0},
                                  {"errors_24h", 0},
                                  {"timeouts_24h", 0},
                                  {"error_rate_24h", nullptr},
                                  {"return_rate", 0.0},
                                  {"flagged", false}}));

  // Read-only: sent back in a PUT, it is ignored.
  json view = body_of(svc.get("/v1/buyers/" + good_id, svc.operator_key()))["data"];
  view["health"]["status"] = "failing";
  auto same = put(svc, "/v1/buyers/" + good_id, {{"name", "good two"}, {"health", view["health"]}},
                  svc.operator_key());
  ASSERT_EQ(same->status, 200) << same->body;
  EXPECT_EQ(
      body_of(svc.get("/v1/buyers/" + good_id, svc.operator_key()))["data"]["health"]["status"],
      "healthy");
}

}  // namespace
}  // namespace leadflow::testing
