// Test mode over real HTTPS against a buyer simulator (leadflow/domain/test_mode.hpp): a test
// lead, whether the post, its seller or its campaign says so, is validated as a real one, stored
// and shown as a test, and never offered to a buyer; it writes no ledger entry, moves no report,
// cap or budget, and makes no later real lead of the person a duplicate. The answer says what
// would have happened, in the seller's words.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

class TestMode : public ::testing::Test {
 protected:
  void SetUp() override {
    buyer = start_buyer("buyer", 15.00);
    // One sale a day at most, and $20 a day: a test lead must take neither.
    buyer_id =
        svc.add_buyer(*buyer, "auto_insurance", {{"caps", {{"daily", 1}, {"daily_budget", 20.0}}}});
    seller = svc.add_seller("Onboarding Co");
    key = svc.add_api_key({{"name", "dev"}, {"seller_id", seller}});
  }

  json performance_totals() {
    auto r = svc.get("/v1/reports/performance", svc.operator_key());
    EXPECT_EQ(r->status, 200) << r->body;
    return body_of(r)["data"]["totals"];
  }
  json revenue_totals() {
    auto r = svc.get("/v1/reports/revenue", svc.operator_key());
    EXPECT_EQ(r->status, 200) << r->body;
    return body_of(r)["data"]["totals"];
  }
  httplib::Result put(const std::string& path, const json& body) {
    return svc.https()->Put(path, {{"Authorization", "Bearer " + svc.operator_key()}}, body.dump(),
                            "application/json");
  }
  // The would_have every test answer carries, with whether the vertical has buyers.
  static json would_have(bool vertical_has_buyers) {
    return {{"valid", true},
            {"stored_as_test", true},
            {"offered_to_buyers", false},
            {"vertical_has_active_buyers", vertical_has_buyers}};
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> buyer;
  std::string buyer_id, seller, key;
};

TEST_F(TestMode, ATestLeadIsStoredAndShownAsATestAndNeverOfferedToABuyer) {
  const json performance = performance_totals();
  const json revenue = revenue_totals();
  json lead = sample_lead(1);
  lead["test"] = true;
  auto r = svc.post("/v1/leads", lead, key);
  ASSERT_EQ(r->status, 201) << r->body;
  const json answer = body_of(r);
  EXPECT_EQ(answer["test"], true);
  EXPECT_EQ(answer["would_have"], would_have(true));
  EXPECT_EQ(answer["distribution"]["delivery_status"], "test");
  EXPECT_EQ(answer["distribution"]["accepted"], false);
  EXPECT_TRUE(answer["distribution"]["buyer_id"].is_null());
  EXPECT_TRUE(answer["distribution"]["price"].is_null());
  const std::string id = answer["lead_id"];

  // The buyer never heard of it.
  EXPECT_TRUE(buyer->pings().empty());
  EXPECT_TRUE(buyer->posts().empty());

  // Read back as a test, by the seller and by the operator; no ledger, no attempt.
  const json mine = body_of(svc.get("/v1/leads/" + id, key))["data"];
  EXPECT_EQ(mine["test"], true);
  EXPECT_EQ(mine["status"], "test");
  const json full = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(full["test"], true);
  EXPECT_FALSE(full.contains("ledger")) << full.dump();
  EXPECT_TRUE(full["attempts"].empty()) << full.dump();

  // The list shows it, and its filter tells tests from real leads.
  auto ids = [&](const std::string& query) {
    std::vector<std::string> out;
    auto r = svc.get("/v1/leads" + query, key);
    EXPECT_EQ(r->status, 200) << query << ": " << r->body;
    const json page = body_of(r);  // kept: the loop reads inside it
    for (const auto& l : page["data"]) out.push_back(l["lead_id"]);
    return out;
  };
  EXPECT_EQ(ids(""), std::vector<std::string>{id});
  EXPECT_EQ(ids("?test=true"), std::vector<std::string>{id});
  EXPECT_TRUE(ids("?test=false").empty());
  EXPECT_EQ(body_of(svc.get("/v1/leads?test=maybe", key))["errors"][0]["field"], "test");

  // Reports unchanged: no lead, no money.
  EXPECT_EQ(performance_totals(), performance);
  EXPECT_EQ(revenue_totals(), revenue);

  // The cap of one sale and the budget are still whole, and the person is no duplicate: the
  // same person's real lead sells.
  r = svc.post("/v1/leads", sample_lead(1), key);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["delivery_status"], "delivered") << r->body;
  EXPECT_FALSE(body_of(r).contains("test"));
  EXPECT_EQ(buyer->posts().size(), 1u);
  // And the cap counts real sales: the next real lead finds it reached.
  r = svc.post("/v1/leads", sample_lead(2), key);
  EXPECT_EQ(body_of(r)["distribution"]["delivery_status"], "unsold") << r->body;
}

TEST_F(TestMode, AnInvalidTestLeadIsRefusedAsARealOneIs) {
  json bad = sample_lead(3);
  bad["email"] = "not-an-email";
  auto real = svc.post("/v1/leads", bad, key);
  bad["test"] = true;
  auto test = svc.post("/v1/leads", bad, key);
  ASSERT_EQ(real->status, 400);
  ASSERT_EQ(test->status, 400);
  EXPECT_EQ(body_of(test)["errors"], body_of(real)["errors"]);
  // A test mark that is not a boolean is refused, naming it.
  json odd = sample_lead(4);
  odd["test"] = "yes";
  auto r = svc.post("/v1/leads", odd, key);
  ASSERT_EQ(r->status, 400);
  EXPECT_EQ(body_of(r)["errors"][0]["field"], "test");
}

TEST_F(TestMode, EveryLeadOfASellerInTestModeIsATest) {
  auto r = put("/v1/sellers/" + seller, {{"test_mode", true}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["data"]["test_mode"], true);
  EXPECT_EQ(body_of(svc.get("/v1/sellers/" + seller, svc.operator_key()))["data"]["test_mode"],
            true);
  // The change log has it.
  const json log = body_of(svc.get("/v1/audit?object_kind=seller", svc.operator_key()))["data"];
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0]["changes"],
            json::parse(R"([{"field":"test_mode","before":false,"after":true}])"));

  // A new key reads its seller's mode at once (an older one within the key cache's second).
  const std::string fresh = svc.add_api_key({{"name", "dev2"}, {"seller_id", seller}});
  r = svc.post("/v1/leads", sample_lead(5), fresh);  // no test mark of its own
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["delivery_status"], "test");
  EXPECT_EQ(body_of(r)["would_have"], would_have(true));
  EXPECT_TRUE(buyer->pings().empty());
  // A campaign of the seller's too, though the campaign itself is not in test mode.
  const auto [campaign_id, campaign_key] = svc.add_campaign(seller);
  r = svc.post("/api/v1/lead", sample_campaign_lead(6, campaign_key), "");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["status"], "test");
  EXPECT_TRUE(buyer->pings().empty());
  EXPECT_EQ(put("/v1/sellers/" + seller, {{"test_mode", "on"}})->status, 400);
}

TEST_F(TestMode, ACampaignInTestModeAnswersWhatWouldHaveHappenedAtOnce) {
  const auto [campaign_id, campaign_key] =
      svc.add_campaign(seller, {{"test_mode", true}, {"vertical", "auto_insurance"}});
  const json campaign = body_of(svc.get("/v1/campaigns/" + campaign_id, key))["data"];
  EXPECT_EQ(campaign["test_mode"], true);  // the seller sees its campaign's mode

  auto r = svc.post("/api/v1/lead", sample_campaign_lead(7, campaign_key), "");
  ASSERT_EQ(r->status, 200) << r->body;
  json answer = body_of(r);
  EXPECT_EQ(answer["status"], "test");
  EXPECT_EQ(answer["sold"], false);
  EXPECT_EQ(answer["price"], 0.0);
  EXPECT_EQ(answer["test"], true);
  EXPECT_EQ(answer["would_have"], would_have(true));
  EXPECT_TRUE(buyer->pings().empty());
  EXPECT_TRUE(buyer->posts().empty());
  const std::string id = answer["lead_id"];
  EXPECT_EQ(body_of(svc.get("/v1/leads/" + id, key))["data"]["test"], true);

  // A vertical no buyer takes says so, and nothing more.
  const auto [solar_id, solar_key] = svc.add_campaign(seller, {{"vertical", "solar"}});
  json form = sample_campaign_lead(8, solar_key);
  form["test"] = "true";  // Surface B's words, as its form post takes them
  r = svc.post("/api/v1/lead", form, "");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["status"], "test");
  EXPECT_EQ(body_of(r)["would_have"], would_have(false));

  // The legacy form post with test=1: the same.
  auto https = svc.https();
  const auto [real_id, real_key] = svc.add_campaign(seller);
  auto legacy = https->Post("/" + real_key,
                            "first_name=Grace&last_name=Hopper&email_address=g9%40example.com"
                            "&phone_home=2125550199&zip_code=10001&test=1",
                            "application/x-www-form-urlencoded");
  ASSERT_TRUE(legacy);
  ASSERT_EQ(legacy->status, 200) << legacy->body;
  EXPECT_EQ(body_of(legacy)["status"], "test");
  EXPECT_TRUE(buyer->pings().empty());

  // Performance holds none of them; the stats page neither.
  const json totals = performance_totals();
  EXPECT_EQ(totals["leads"], 0) << totals.dump();
}

TEST_F(TestMode, AnAsyncTestLeadsJobPollSaysWhatItWouldHaveComeTo) {
  const auto [campaign_id, campaign_key] = svc.add_campaign(seller, {{"mode", "async"}});
  json form = sample_campaign_lead(9, campaign_key);
  form["test"] = true;
  auto r = svc.post("/api/v1/lead", form, "");
  ASSERT_EQ(r->status, 202) << r->body;
  const std::string job = body_of(r)["job_id"];
  EXPECT_EQ(body_of(r)["would_have"], would_have(true));
  // Polled until decided: the decided answer is the test's, with its would_have.
  json answer;
  for (int i = 0; i < 200; ++i) {
    auto j = svc.https()->Get(("/api/v1/jobs/" + job).c_str(), {{"X-Campaign-Key", campaign_key}});
    ASSERT_EQ(j->status, 200) << j->body;
    answer = body_of(j);
    if (answer["status"] != "queued") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(answer["status"], "test");
  EXPECT_EQ(answer["test"], true) << answer.dump();
  EXPECT_EQ(answer["would_have"], would_have(true)) << answer.dump();
  EXPECT_EQ(answer["sold"], false);
  EXPECT_TRUE(buyer->pings().empty());
}

}  // namespace
}  // namespace leadflow::testing
