// Seller payouts on both surfaces over real HTTPS: a seller's own rule prices its Surface A
// leads, a campaign's rule its Surface B leads, and every sale's payout and margin is in the
// ledger.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

class Payouts : public ::testing::Test {
 protected:
  void SetUp() override {
    buyer = start_buyer("buyer", 15.00);
    svc.add_buyer(*buyer);
  }

  std::string seller_with(const json& payout) {
    json body = {{"name", "Seller"}};
    if (!payout.is_null()) body["payout"] = payout;
    auto r = svc.post("/v1/sellers", body, svc.operator_key());
    EXPECT_EQ(r->status, 201) << r->body;
    return body_of(r)["data"]["seller_id"];
  }

  // Posts a Surface A lead with a key of `seller` and returns the sale's ledger entry.
  json sale_of(const std::string& seller, int salt) {
    const std::string key = svc.add_api_key({{"name", "k"}, {"seller_id", seller}});
    auto r = svc.post("/v1/leads", sample_lead(salt), key);
    EXPECT_EQ(r->status, 201) << r->body;
    const std::string id = body_of(r)["lead_id"];
    const json lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
    EXPECT_EQ(lead["ledger"].size(), 1u) << lead.dump();
    return lead["ledger"][0];
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> buyer;
};

TEST_F(Payouts, ASellersOwnRulePricesItsSurfaceALeads) {
  const std::string fixed = seller_with({{"model", "fixed"}, {"value", 4.5}});
  const std::string half = seller_with({{"model", "revshare"}, {"value", 50}});
  const std::string plain = seller_with(nullptr);
  const json shown = body_of(svc.get("/v1/sellers", svc.operator_key()))["data"];
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0]["payout"], json({{"model", "fixed"}, {"value", 4.5}}));
  EXPECT_EQ(shown[2]["payout"], json({{"model", "revshare"}, {"value", 70.0}}));  // the default

  const json a = sale_of(fixed, 1);
  EXPECT_EQ(a["revenue"], 15.0);
  EXPECT_EQ(a["payout"], 4.5);
  EXPECT_EQ(a["margin"], 10.5);
  EXPECT_EQ(a["seller_id"], fixed);
  EXPECT_EQ(sale_of(half, 2)["payout"], 7.5);
  EXPECT_EQ(sale_of(plain, 3)["payout"], 10.5);

  // The operator's own leads belong to no seller: nothing is paid out.
  auto r = svc.post("/v1/leads", sample_lead(4), svc.operator_key());
  const std::string id = body_of(r)["lead_id"];
  const json own = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"]["ledger"][0];
  EXPECT_EQ(own["payout"], 0.0);
  EXPECT_EQ(own["margin"], 15.0);
}

TEST_F(Payouts, ANewRuleForASellerPricesTheSalesAfterIt) {
  const std::string seller = seller_with({{"model", "revshare"}, {"value", 50}});
  EXPECT_EQ(sale_of(seller, 11)["payout"], 7.5);
  const auto put = [&](const std::string& id, const json& body) {
    return svc.https()->Put("/v1/sellers/" + id,
                            {{"Authorization", "Bearer " + svc.operator_key()}}, body.dump(),
                            "application/json");
  };
  auto r = put(seller, {{"payout", {{"model", "fixed"}, {"value", 1.25}}}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["data"]["payout"]["value"], 1.25);
  EXPECT_EQ(body_of(r)["data"]["name"], "Seller");  // fields not named are kept
  // The seller's directory in the worker caches a rule for up to 5 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(5200));
  EXPECT_EQ(sale_of(seller, 12)["payout"], 1.25);
  // The view read back is a valid PUT; a bad rule or an unknown seller is refused.
  const json view = body_of(svc.get("/v1/sellers", svc.operator_key()))["data"][0];
  EXPECT_EQ(put(seller, view)->status, 200);
  EXPECT_EQ(put(seller, {{"payout", {{"model", "fixed"}, {"value", -2}}}})->status, 400);
  EXPECT_EQ(put("sl_nobody", {{"name", "x"}})->status, 404);
}

TEST_F(Payouts, ACampaignKeepsItsOwnRuleOnSurfaceB) {
  const std::string seller = seller_with({{"model", "revshare"}, {"value", 50}});
  const auto [campaign, key] = svc.add_campaign(
      seller, {{"mode", "sync"}, {"payout", {{"model", "fixed"}, {"value", 2.0}}}});
  auto r =
      svc.https()->Post("/api/v1/lead", sample_campaign_lead(5, key).dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["price"], 2.0);  // the seller's payout under the campaign's rule
}

TEST_F(Payouts, ABadPayoutRuleIsA400NamingTheField) {
  for (const json& payout :
       {json({{"model", "fixed"}, {"value", -1}}), json({{"model", "revshare"}, {"value", 101}}),
        json({{"model", "barter"}, {"value", 1}}), json("70%")}) {
    auto r = svc.post("/v1/sellers", {{"name", "x"}, {"payout", payout}}, svc.operator_key());
    ASSERT_EQ(r->status, 400) << payout.dump() << ": " << r->body;
    EXPECT_EQ(body_of(r)["errors"][0]["field"].get<std::string>().rfind("payout", 0), 0u)
        << r->body;
  }
}

}  // namespace
}  // namespace leadflow::testing
