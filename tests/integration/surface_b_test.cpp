// Surface B (/api/v1) and the legacy form POST /{seller_campaign_key}, over real HTTPS.
#include <gtest/gtest.h>

#include <thread>

#include "leadflow/base/time_format.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

class SurfaceB : public ::testing::Test {
 protected:
  void SetUp() override {
    buyer = start_buyer("acme", 15.00);
    svc.add_buyer(*buyer);
    seller = svc.add_seller();
    std::tie(campaign_id, key) = svc.add_campaign(seller);
  }

  httplib::Result post_json(const json& body, httplib::Headers h = {}) {
    return svc.https()->Post("/api/v1/lead", h, body.dump(), "application/json");
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> buyer;
  std::string seller, campaign_id, key;
};

TEST_F(SurfaceB, SyncPostAnswers200WithThePayout) {
  auto r = post_json(sample_campaign_lead(1, key));
  ASSERT_EQ(r->status, 200) << r->body;
  const json b = body_of(r);
  EXPECT_EQ(b["status"], "sold");
  EXPECT_EQ(b["sold"], true);
  EXPECT_EQ(b["price"], 10.5);  // 70% of the 15.00 sale
  EXPECT_EQ(b["currency"], "USD");
  EXPECT_TRUE(b["lead_id"].is_string());
}

TEST_F(SurfaceB, AsyncCampaignAnswers202WithAJobToPoll) {
  auto [async_id, async_key] = svc.add_campaign(seller, {{"mode", "async"}});
  auto r = post_json(sample_campaign_lead(2, async_key));
  ASSERT_EQ(r->status, 202) << r->body;
  const std::string job = body_of(r)["job_id"];
  EXPECT_EQ(body_of(r)["status"], "queued");
  json answer;
  for (int i = 0; i < 200; ++i) {
    auto j = svc.https()->Get(("/api/v1/jobs/" + job).c_str(), {{"X-Campaign-Key", async_key}});
    ASSERT_EQ(j->status, 200);
    answer = body_of(j);
    if (answer["status"] != "queued") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(answer["status"], "sold");
  EXPECT_EQ(answer["price"], 10.5);
  // Another campaign's key does not see the job.
  EXPECT_EQ(svc.https()->Get(("/api/v1/jobs/" + job).c_str(), {{"X-Campaign-Key", key}})->status,
            404);
}

TEST_F(SurfaceB, PreferRespondAsyncAlsoQueues) {
  auto r = post_json(sample_campaign_lead(3, key), {{"Prefer", "respond-async"}});
  EXPECT_EQ(r->status, 202);
}

TEST_F(SurfaceB, InvalidPostsListEveryOffendingField) {
  json lead = sample_campaign_lead(4, key);
  lead.erase("last_name");
  lead["email_address"] = "nope";
  lead["phone_home"] = "0000000000";
  auto r = post_json(lead);
  ASSERT_EQ(r->status, 400);
  const json b = body_of(r);
  EXPECT_EQ(b["status"], "invalid");
  std::set<std::string> fields;
  for (const auto& e : b["errors"]) fields.insert(e["field"]);
  for (const char* f : {"last_name", "email_address", "phone_home"})
    EXPECT_TRUE(fields.count(f)) << r->body;
}

TEST_F(SurfaceB, UnknownAndInactiveKeysAre401) {
  EXPECT_EQ(post_json(sample_campaign_lead(5, "lfc_unknown"))->status, 401);
  auto [paused_id, paused_key] = svc.add_campaign(seller, {{"status", "paused"}});
  EXPECT_EQ(post_json(sample_campaign_lead(5, paused_key))->status, 401);
  EXPECT_EQ(svc.https()->Get("/api/v1/stats/lfc_unknown")->status, 401);
}

TEST_F(SurfaceB, WrongContentTypeIs415) {
  auto r = svc.https()->Post("/api/v1/lead", sample_campaign_lead(6, key).dump(), "text/plain");
  EXPECT_EQ(r->status, 415);
}

TEST_F(SurfaceB, TheCampaignCeilingIsEnforced) {
  auto [limited_id, limited_key] =
      svc.add_campaign(seller, {{"rate_limit_per_minute", 3}, {"mode", "async"}});
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(post_json(sample_campaign_lead(10 + i, limited_key))->status, 202);
  auto r = post_json(sample_campaign_lead(20, limited_key));
  EXPECT_EQ(r->status, 429);
  EXPECT_FALSE(r->get_header_value("Retry-After").empty());
}

TEST_F(SurfaceB, LegacyUrlencodedFormWorksTheSameWay) {
  httplib::Params form = {{"first_name", "Grace"},
                          {"last_name", "Hopper"},
                          {"email_address", "legacy@example.com"},
                          {"phone_home", "2125550143"},
                          {"zip_code", "10001"}};
  auto r = svc.https()->Post(("/" + key).c_str(), form);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["status"], "sold");
  EXPECT_EQ(body_of(r)["price"], 10.5);
  // Bad form: each field named.
  auto bad = svc.https()->Post(("/" + key).c_str(), httplib::Params{{"first_name", "G"}});
  ASSERT_EQ(bad->status, 400);
  EXPECT_GE(body_of(bad)["errors"].size(), 4u);
  EXPECT_EQ(svc.https()->Post("/lfc_not_a_key", form)->status, 401);
}

TEST_F(SurfaceB, LegacyPathAcceptsJsonWithoutTheKeyInTheBody) {
  json lead = sample_campaign_lead(40, key);
  lead.erase("SELLER_CAMPAIGN_KEY");
  auto r = svc.https()->Post(("/" + key).c_str(), lead.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["status"], "sold");
  lead["SELLER_CAMPAIGN_KEY"] = "lfc_someone_else";
  EXPECT_EQ(svc.https()->Post(("/" + key).c_str(), lead.dump(), "application/json")->status, 400);
}

TEST_F(SurfaceB, LegacyMultipartFormWorks) {
  httplib::MultipartFormDataItems items = {{"first_name", "Grace", "", ""},
                                           {"last_name", "Hopper", "", ""},
                                           {"email_address", "multi@example.com", "", ""},
                                           {"phone_home", "2125550144", "", ""},
                                           {"zip_code", "10001", "", ""}};
  auto r = svc.https()->Post(("/" + key).c_str(), items);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["status"], "sold");
}

TEST_F(SurfaceB, StatsCountTheCampaign) {
  ASSERT_EQ(post_json(sample_campaign_lead(30, key))->status, 200);
  ASSERT_EQ(post_json(sample_campaign_lead(30, key))->status, 200);  // the same person: duplicate
  json bad = sample_campaign_lead(31, key);
  bad["email_address"] = "x";
  ASSERT_EQ(post_json(bad)->status, 400);
  buyer->set_reject_next(1);
  ASSERT_EQ(post_json(sample_campaign_lead(32, key))->status, 200);  // unsold

  auto r = svc.https()->Get(("/api/v1/stats/" + key).c_str());
  ASSERT_EQ(r->status, 200) << r->body;
  const json s = body_of(r);
  EXPECT_EQ(s["received"], 3);
  EXPECT_EQ(s["sold"], 1);
  EXPECT_EQ(s["duplicates"], 1);
  EXPECT_EQ(s["unsold"], 1);
  EXPECT_EQ(s["invalid"], 1);
  EXPECT_DOUBLE_EQ(s["acceptance_rate"].get<double>(), 0.5);
  EXPECT_EQ(s["payout"], 10.5);
  EXPECT_EQ(s["queued"], 0);
  EXPECT_EQ(svc.https()->Get(("/api/v1/stats/" + key + "?period=forever").c_str())->status, 400);

  // The same numbers as the reports', over the same quarter hours.
  const auto from = parse_rfc3339_ms(s["from"].get<std::string>());
  ASSERT_TRUE(from.has_value()) << s.dump();
  const std::string query = "?group_by=&campaign_id=" + campaign_id +
                            "&from=" + format_rfc3339_ms(*from) +
                            "&to=" + format_rfc3339_ms(*from + 2 * 86'400'000LL);
  auto perf = svc.get("/v1/reports/performance" + query, svc.operator_key());
  ASSERT_EQ(perf->status, 200) << perf->body;
  const json p = body_of(perf)["data"]["totals"];
  for (const char* figure : {"sold", "unsold", "duplicates", "invalid", "acceptance_rate"})
    EXPECT_EQ(s[figure], p[figure]) << figure;
  EXPECT_EQ(s["errors"], p["failed"]);
  EXPECT_EQ(s["received"], p["leads"]);
  auto money = svc.get("/v1/reports/revenue" + query, svc.operator_key());
  ASSERT_EQ(money->status, 200) << money->body;
  EXPECT_EQ(s["payout"], body_of(money)["data"]["totals"]["payout"]);
}

// The specification a seller hands to its developers: read with the seller's own key, its example
// request (with the real key in place of the placeholder) is sold as its example says, and its
// invalid example is refused with the errors it lists.
TEST_F(SurfaceB, TheCampaignSpecificationsExamplesAreWhatPostsGet) {
  const std::string seller_key =
      svc.add_api_key({{"name", "dev"}, {"seller_id", seller}, {"plan", "standard"}});
  auto r = svc.get("/v1/campaigns/" + campaign_id + "/specification", seller_key);
  ASSERT_EQ(r->status, 200) << r->body;
  const json spec = body_of(r)["data"];
  EXPECT_EQ(spec["campaign"]["campaign_id"], campaign_id);
  EXPECT_FALSE(spec["campaign"].contains("campaign_key_hint"));  // as GET /v1/campaigns/{id}
  json lead = spec["example_request"];
  lead["SELLER_CAMPAIGN_KEY"] = key;
  auto sold = post_json(lead);
  ASSERT_EQ(sold->status, 200) << sold->body;
  for (const auto& e : spec["examples"]) {
    if (e["status"] == 200 && e["body"]["status"] == "sold") {
      for (const auto& [name, value] : e["body"].items())
        EXPECT_TRUE(body_of(sold).contains(name)) << name;
      EXPECT_EQ(body_of(sold)["price"], 10.5);  // the payout rule the example shows, at $15.00
    }
    if (e["status"] == 400) {
      json bad = lead;
      bad.erase("last_name");
      bad["email_address"] = "ada.lovelace@";
      bad["phone_home"] = "555-01";
      auto refused = post_json(bad);
      ASSERT_EQ(refused->status, 400);
      EXPECT_EQ(body_of(refused), e["body"]);
    }
  }
  // Another seller's campaign is not there for this seller; the operator reads any.
  const std::string other = svc.add_seller("Other");
  auto [other_id, other_key] = svc.add_campaign(other);
  EXPECT_EQ(svc.get("/v1/campaigns/" + other_id + "/specification", seller_key)->status, 404);
  EXPECT_EQ(svc.get("/v1/campaigns/" + other_id + "/specification", svc.operator_key())->status,
            200);
}

TEST_F(SurfaceB, VerticalFieldsArePublished) {
  auto r = svc.https()->Get("/api/v1/fields/auto_insurance");
  ASSERT_EQ(r->status, 200);
  const json published = body_of(r);
  EXPECT_TRUE(published["fields"].is_array());
  // Open to anyone: what any seller reads (how a lead is posted, when it is a duplicate, how
  // long it may be sold), never how buyers buy it.
  EXPECT_FALSE(published.contains("max_sales")) << r->body;
  EXPECT_TRUE(published.contains("consent_days"));
  EXPECT_EQ(svc.https()->Get("/api/v1/fields/spaceships")->status, 404);
}

}  // namespace
}  // namespace leadflow::testing
