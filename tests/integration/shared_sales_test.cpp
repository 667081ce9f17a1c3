// Shared sales over real HTTPS with simulated buyers: a vertical that allows max_sales buyers
// sells a lead to the best shared bidders when together they pay more, every buyer gets its own
// post and Idempotency-Key, each buyer sees and returns only its own share, and the seller is
// paid by its rule on the total.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

ServiceOptions shared_vertical() {
  ServiceOptions o;
  o.verticals_json = R"({"verticals": [{"name": "auto_insurance", "max_sales": 2}]})";
  return o;
}

class SharedSales : public ::testing::Test {
 protected:
  SharedSales() : svc(shared_vertical()) {}

  void SetUp() override {
    // Alone, a pays the most; together, b and c pay more (8.00 + 7.50 > 14.00).
    a = start_buyer("a", 14.00);
    b = start_buyer("b", 12.00);
    c = start_buyer("c", 11.00);
    b->set_shared_bid(8.00);
    c->set_shared_bid(7.50);
    a_id = svc.add_buyer(*a);
    b_id = svc.add_buyer(*b);
    c_id = svc.add_buyer(*c);
    b_key = svc.add_api_key({{"name", "b's key"}, {"buyer_id", b_id}});
    c_key = svc.add_api_key({{"name", "c's key"}, {"buyer_id", c_id}});
    seller_id = svc.add_seller("Shared Seller");
    seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller_id}});
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> a, b, c;
  std::string a_id, b_id, c_id, b_key, c_key, seller_id, seller_key;
};

TEST_F(SharedSales, TheBestSharesBuyTheLeadEachWithItsOwnPostAndKey) {
  auto r = svc.post("/v1/leads", sample_lead(1), seller_key);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = body_of(r)["lead_id"];
  // The seller reads what the lead earned it: its 70% of the 15.50 the two buyers paid, no buyer.
  EXPECT_DOUBLE_EQ(body_of(r)["distribution"]["price"].get<double>(), 10.85) << r->body;
  EXPECT_TRUE(body_of(r)["distribution"]["buyer_id"].is_null()) << r->body;  // withheld

  ASSERT_EQ(a->posts().size(), 0u);
  ASSERT_EQ(b->posts().size(), 1u);
  ASSERT_EQ(c->posts().size(), 1u);
  EXPECT_EQ(b->posts()[0].header("Idempotency-Key"), id + ":" + b_id);
  EXPECT_EQ(c->posts()[0].header("Idempotency-Key"), id + ":" + c_id);
  EXPECT_EQ(json::parse(b->posts()[0].body)["price"], 8.0);
  EXPECT_EQ(json::parse(c->posts()[0].body)["price"], 7.5);

  const json lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(lead["status"], "delivered");
  const json& sales = lead["distribution"]["sales"];
  ASSERT_EQ(sales.size(), 2u) << lead.dump();
  std::set<std::string> buyers{sales[0]["buyer_id"], sales[1]["buyer_id"]};
  EXPECT_EQ(buyers, (std::set<std::string>{b_id, c_id}));
  // The seller's 70% of the total, in two ledger entries that add up to it.
  double revenue = 0, payout = 0;
  for (const auto& e : lead["ledger"]) {
    revenue += e["revenue"].get<double>();
    payout += e["payout"].get<double>();
  }
  EXPECT_DOUBLE_EQ(revenue, 15.5);
  EXPECT_DOUBLE_EQ(payout, 10.85);
}

TEST_F(SharedSales, EachBuyerSeesAndReturnsOnlyItsOwnShare) {
  auto r = svc.post("/v1/leads", sample_lead(2), seller_key);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = body_of(r)["lead_id"];

  const json mine = body_of(svc.get("/v1/leads/" + id, c_key))["data"];
  EXPECT_EQ(mine["distribution"]["buyer_id"], c_id);
  EXPECT_EQ(mine["distribution"]["price"], 7.5);  // its own price, not the total
  EXPECT_FALSE(mine["distribution"].contains("sales")) << "another buyer's purchase was shown";
  const json listed = body_of(svc.get("/v1/leads", c_key))["data"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["distribution"]["price"], 7.5);

  // The operator names which buyer returns a shared lead.
  auto unnamed = svc.post("/v1/leads/" + id + "/return", {{"reason", "fraud"}}, svc.operator_key());
  EXPECT_EQ(unnamed->status, 400) << unnamed->body;
  auto back = svc.post("/v1/leads/" + id + "/return", {{"reason", "invalid_phone"}}, c_key);
  ASSERT_EQ(back->status, 201) << back->body;
  EXPECT_EQ(body_of(back)["data"]["price"], 7.5);
  json lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(lead["status"], "delivered");  // b's share still stands
  auto other = svc.post("/v1/leads/" + id + "/return", {{"reason", "duplicate"}}, b_key);
  ASSERT_EQ(other->status, 201) << other->body;
  lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(lead["status"], "returned");
  double revenue = 0, payout = 0;
  for (const auto& e : lead["ledger"]) {
    revenue += e["revenue"].get<double>();
    payout += e["payout"].get<double>();
  }
  EXPECT_NEAR(revenue, 0.0, 1e-9);
  EXPECT_NEAR(payout, 0.0, 1e-9);
}

TEST_F(SharedSales, WhenOneBidAlonePaysMoreTheLeadIsSoldExclusively) {
  a->set_bid(20.00);  // 20.00 > 8.00 + 7.50
  auto r = svc.post("/v1/leads", sample_lead(3), seller_key);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = body_of(r)["lead_id"];
  // The seller is not told who bought it; the operator is.
  EXPECT_TRUE(body_of(r)["distribution"]["buyer_id"].is_null()) << r->body;  // withheld
  EXPECT_EQ(
      body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"]["distribution"]["buyer_id"],
      a_id);
  ASSERT_EQ(a->posts().size(), 1u);
  EXPECT_EQ(a->posts()[0].header("Idempotency-Key"), id);
  EXPECT_EQ(b->posts().size() + c->posts().size(), 0u);
}

}  // namespace
}  // namespace leadflow::testing
