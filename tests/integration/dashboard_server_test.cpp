// What the dashboard needs of the server, over real HTTPS: campaigns read by their seller and
// changed by the operator.
#include <gtest/gtest.h>

#include <chrono>
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

}  // namespace
}  // namespace leadflow::testing
