// The verticals' settings over real HTTPS (GET /v1/verticals, /v1/verticals/{name};
// docs/visibility.md, "Verticals"): the operator reads every setting of every vertical, a seller
// what it posts and whether its unsold leads are offered again, never how buyers buy; a buyer
// only the verticals it buys, never the intake's lookback; with a key or a dashboard session
// alike. An unknown vertical (or one a buyer does not buy) is 404, a missing key 401.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

ServiceOptions with_solar_policy() {
  ServiceOptions o;
  o.verticals_json = R"({"verticals": [{"name": "solar", "max_sales": 2,
      "duplicate_lookback_days": 45, "consent_days": 10,
      "fields": [{"name": "home_owner", "required": true}],
      "reoffer": {"delays_seconds": [900, 7200, 86400], "window_hours": 168}}]})";
  return o;
}

class Verticals : public ::testing::Test {
 protected:
  void SetUp() override {
    sim = start_buyer("solar buyer", 10.0);
    buyer = svc.add_buyer(*sim, "solar", {{"verticals", {"solar", "home_services"}}});
    seller = svc.add_seller("Sunny Leads");
    seller_key = svc.add_api_key({{"name", "reads"}, {"seller_id", seller}});
    buyer_key = svc.add_api_key({{"name", "buys"}, {"buyer_id", buyer}});
  }

  // A dashboard user of `account` signed in: its session cookie.
  std::string session_of(const std::string& email, const json& account) {
    json body = {{"email", email}, {"name", email}, {"password", kPassword}};
    body.merge_patch(account);
    auto made = svc.post("/v1/users", body, svc.operator_key());
    EXPECT_EQ(made->status, 201) << made->body;
    auto r = svc.https()->Post(
        "/v1/session", json{{"email", email}, {"password", kPassword}}.dump(), "application/json");
    EXPECT_EQ(r->status, 201) << r->body;
    const std::string set = r->get_header_value("Set-Cookie");
    return set.substr(0, set.find(';'));
  }

  json read(const std::string& path, const std::string& key, int status = 200) {
    auto r = svc.get(path, key);
    EXPECT_EQ(r->status, status) << path << ": " << r->body;
    return body_of(r);
  }

  ServiceFixture svc{with_solar_policy()};
  std::unique_ptr<BuyerSimulator> sim;
  std::string buyer, seller, seller_key, buyer_key;
};

json named(const json& list, const std::string& name) {
  for (const json& v : list)
    if (v["vertical"] == name) return v;
  return nullptr;
}

TEST_F(Verticals, TheOperatorReadsEverySettingOfEveryVertical) {
  const json list = read("/v1/verticals", svc.operator_key())["data"];
  ASSERT_EQ(list.size(), 11u) << list.dump();
  EXPECT_EQ(list.front()["vertical"], "auto_insurance");  // by name
  const json solar = named(list, "solar");
  EXPECT_EQ(keys(solar),
            (std::set<std::string>{"vertical", "fields", "duplicate_lookback_days", "max_sales",
                                   "consent_days", "reoffer", "reoffer_source",
                                   "configured_reoffer", "reoffer_set_at", "reoffer_version"}));
  EXPECT_EQ(solar["reoffer_source"], "configured");  // none set by the operator
  EXPECT_EQ(solar["reoffer_version"], 0);
  EXPECT_EQ(solar["configured_reoffer"], solar["reoffer"]);
  EXPECT_TRUE(solar["reoffer_set_at"].is_null());
  EXPECT_EQ(solar["max_sales"], 2);
  EXPECT_EQ(solar["duplicate_lookback_days"], 45);
  EXPECT_EQ(solar["consent_days"], 10);
  EXPECT_EQ(solar["reoffer"],
            (json{{"delays_seconds", {900, 7200, 86400}}, {"window_hours", 168}}));
  bool required = false;
  for (const json& f : solar["fields"])
    required |= f["name"] == "home_owner" && f["required"] == true;
  EXPECT_TRUE(required) << solar["fields"].dump();
  EXPECT_TRUE(named(list, "legal")["reoffer"].is_null());
  // One vertical reads as it does in the list, and as Surface B publishes its fields.
  EXPECT_EQ(read("/v1/verticals/solar", svc.operator_key())["data"], solar);
  auto published = svc.https()->Get("/api/v1/fields/solar");
  EXPECT_EQ(body_of(published)["fields"], solar["fields"]);
}

TEST_F(Verticals, ASellerReadsWhatItPostsAndWhetherLeadsAreOfferedAgainNeverHowBuyersBuy) {
  auto r = svc.get("/v1/verticals", seller_key);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body.find("max_sales"), std::string::npos);
  const json list = body_of(r)["data"];
  EXPECT_EQ(list.size(), 11u);  // a seller may post to any
  const json solar = named(list, "solar");
  EXPECT_EQ(keys(solar), (std::set<std::string>{"vertical", "fields", "duplicate_lookback_days",
                                                "consent_days", "reoffer"}));
  EXPECT_EQ(solar["reoffer"]["delays_seconds"], json({900, 7200, 86400}));
  EXPECT_EQ(read("/v1/verticals/solar", seller_key)["data"], solar);
  // A posting key alone reads them too: the fields are what it posts.
  const std::string poster =
      svc.add_api_key({{"name", "posts"}, {"seller_id", seller}, {"scopes", {"leads:write"}}});
  EXPECT_EQ(read("/v1/verticals/solar", poster)["data"], solar);
  // And a seller's dashboard user, as its keys.
  const std::string cookie =
      session_of("seller@example.com", {{"account", "seller"}, {"seller_id", seller}});
  auto s = svc.https()->Get("/v1/verticals/solar", {{"Cookie", cookie}});
  ASSERT_EQ(s->status, 200) << s->body;
  EXPECT_EQ(body_of(s)["data"], solar);
}

TEST_F(Verticals, ABuyerReadsOnlyTheVerticalsItBuysNeverTheIntakesLookback) {
  auto r = svc.get("/v1/verticals", buyer_key);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body.find("duplicate_lookback_days"), std::string::npos);
  const json list = body_of(r)["data"];
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["vertical"], "home_services");
  const json solar = list[1];
  EXPECT_EQ(keys(solar),
            (std::set<std::string>{"vertical", "fields", "max_sales", "consent_days", "reoffer"}));
  EXPECT_EQ(solar["max_sales"], 2);
  EXPECT_EQ(solar["reoffer"]["window_hours"], 168);
  // A vertical it does not buy answers as one that does not exist.
  auto other = svc.get("/v1/verticals/auto_insurance", buyer_key);
  auto none = svc.get("/v1/verticals/no_such", buyer_key);
  EXPECT_EQ(other->status, 404);
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(body_of(other)["detail"], body_of(none)["detail"]);
  const std::string cookie =
      session_of("buyer@example.com", {{"account", "buyer"}, {"buyer_id", buyer}});
  auto s = svc.https()->Get("/v1/verticals", {{"Cookie", cookie}});
  ASSERT_EQ(s->status, 200) << s->body;
  EXPECT_EQ(body_of(s)["data"], list);
}

TEST_F(Verticals, AreRefusedWithoutAKeyAndAnswer404ForNoSuchVertical) {
  EXPECT_EQ(svc.https()->Get("/v1/verticals")->status, 401);
  EXPECT_EQ(svc.https()->Get("/v1/verticals/solar")->status, 401);
  EXPECT_EQ(svc.get("/v1/verticals", "lfk_not_a_key_at_all")->status, 401);
  auto none = svc.get("/v1/verticals/no_such", svc.operator_key());
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(none->get_header_value("Content-Type"), "application/problem+json");
  EXPECT_EQ(body_of(none)["detail"], "no such vertical");
  const json bad = read("/v1/verticals?vertical=solar", seller_key, 400);
  EXPECT_EQ(bad["errors"][0]["field"], "vertical");
}

}  // namespace
}  // namespace leadflow::testing
