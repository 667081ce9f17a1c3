// Returns and buyer accounts over real HTTPS: a buyer's key sees and returns only the leads it
// bought; every refusal is a clear 4xx; a return reverses the sale in the ledger.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// The real clock's calendar time, moved ahead on demand: a return window can close in a test.
// Steady time stays real, so timeouts and deadlines behave as in production.
class CalendarAhead final : public Clock {
 public:
  SystemTime now() const override {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ahead_ms_.load());
  }
  SteadyTime steady_now() const override { return std::chrono::steady_clock::now(); }
  void advance(std::chrono::milliseconds d) { ahead_ms_ += d.count(); }

 private:
  std::atomic<std::int64_t> ahead_ms_{0};
};

class Returns : public ::testing::Test {
 protected:
  Returns() : svc(options()) {}

  ServiceOptions options() {
    ServiceOptions o;
    o.clock = &clock;
    return o;
  }

  void SetUp() override {
    high = start_buyer("high", 15.00);
    low = start_buyer("low", 10.00);
    high_id = svc.add_buyer(*high, "auto_insurance", {{"max_return_rate", 0.4}});
    low_id = svc.add_buyer(*low);
    high_key = svc.add_api_key({{"name", "high's key"}, {"buyer_id", high_id}});
    low_key = svc.add_api_key({{"name", "low's key"}, {"buyer_id", low_id}});
  }

  // Posts a lead with the operator key and waits for its sale (sync); returns its id.
  std::string sold_lead(int salt) {
    auto r = svc.post("/v1/leads", sample_lead(salt), svc.operator_key());
    EXPECT_EQ(r->status, 201) << r->body;
    const json b = body_of(r);
    EXPECT_EQ(b["distribution"]["buyer_id"], high_id);
    return b["lead_id"];
  }

  httplib::Result give_back(const std::string& lead_id, const json& body, const std::string& key) {
    return svc.post("/v1/leads/" + lead_id + "/return", body, key);
  }

  CalendarAhead clock;
  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> high, low;
  std::string high_id, low_id, high_key, low_key;
};

TEST_F(Returns, ABuyerReturnsALeadItBoughtAndTheSaleIsReversedInTheLedger) {
  const std::string id = sold_lead(1);
  auto r = give_back(id, {{"reason", "invalid_phone"}, {"note", "number disconnected"}}, high_key);
  ASSERT_EQ(r->status, 201) << r->body;
  const json ret = body_of(r)["data"];
  EXPECT_EQ(ret["lead_id"], id);
  EXPECT_EQ(ret["buyer_id"], high_id);
  EXPECT_EQ(ret["reason"], "invalid_phone");
  EXPECT_EQ(ret["note"], "number disconnected");
  EXPECT_EQ(ret["price"], 15.0);
  EXPECT_FALSE(ret.contains("payout")) << "the buyer was shown the seller's payout";

  const json lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(lead["status"], "returned");
  EXPECT_EQ(lead["distribution"]["price"], 15.0);  // the sale is kept as it was
  ASSERT_EQ(lead["returns"].size(), 1u);
  const json& ledger = lead["ledger"];
  ASSERT_EQ(ledger.size(), 2u) << lead.dump();
  EXPECT_EQ(ledger[0]["kind"], "sale");
  EXPECT_EQ(ledger[0]["revenue"], 15.0);
  EXPECT_EQ(ledger[1]["kind"], "return");
  EXPECT_EQ(ledger[1]["revenue"], -15.0);
  EXPECT_EQ(ledger[0]["payout"].get<double>() + ledger[1]["payout"].get<double>(), 0.0);
  EXPECT_EQ(ledger[0]["margin"].get<double>() + ledger[1]["margin"].get<double>(), 0.0);

  // Once is enough: the second try is a conflict that names the first return.
  auto again = give_back(id, {{"reason", "fraud"}}, high_key);
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_EQ(body_of(again)["return"]["reason"], "invalid_phone");
}

TEST_F(Returns, ABuyerSeesOnlyWhatItBoughtAndNoOneElsesBids) {
  const std::string id = sold_lead(2);
  auto mine = svc.get("/v1/leads/" + id, high_key);
  ASSERT_EQ(mine->status, 200) << mine->body;
  const json lead = body_of(mine)["data"];
  EXPECT_EQ(lead["email"], "ada2@example.com");  // it paid for the person
  EXPECT_FALSE(lead.contains("seller_id"));
  EXPECT_TRUE(lead.contains("source_code"));  // in the seller's place
  // Its own attempts only, and its own side of the ledger: its price, no payout or margin.
  for (const auto& a : lead["attempts"]) EXPECT_EQ(a["buyer_id"], high_id) << lead.dump();
  ASSERT_EQ(lead["ledger"].size(), 1u) << lead.dump();
  EXPECT_EQ(lead["ledger"][0]["price"], 15.0);
  for (const char* absent : {"payout", "margin", "revenue", "seller_id"})
    EXPECT_FALSE(lead["ledger"][0].contains(absent)) << absent;

  auto list = svc.get("/v1/leads", high_key);
  ASSERT_EQ(list->status, 200) << list->body;
  ASSERT_EQ(body_of(list)["data"].size(), 1u);
  EXPECT_EQ(body_of(list)["data"][0]["lead_id"], id);
  EXPECT_EQ(body_of(svc.get("/v1/leads", low_key))["data"].size(), 0u);
  EXPECT_EQ(svc.get("/v1/leads?buyer_id=" + high_id, low_key)->status, 400);
  EXPECT_EQ(svc.get("/v1/leads?seller_id=sl_x", high_key)->status, 400);

  // Another buyer's lead does not exist for it, to read or to return.
  EXPECT_EQ(svc.get("/v1/leads/" + id, low_key)->status, 404);
  EXPECT_EQ(give_back(id, {{"reason", "duplicate"}}, low_key)->status, 404);
  // Nor can a buyer key post leads, or read or change buyers.
  EXPECT_EQ(svc.post("/v1/leads", sample_lead(3), high_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/buyers", high_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/api-keys", high_key)->status, 403);
}

TEST_F(Returns, EveryBadReturnIsAClear4xx) {
  const std::string id = sold_lead(4);
  const auto field_of = [](const httplib::Result& r) {
    return body_of(r)["errors"][0]["field"].get<std::string>();
  };
  auto missing = give_back(id, json::object(), high_key);
  EXPECT_EQ(missing->status, 400);
  EXPECT_EQ(field_of(missing), "reason");
  auto unknown = give_back(id, {{"reason", "changed_my_mind"}}, high_key);
  EXPECT_EQ(unknown->status, 400);
  EXPECT_EQ(field_of(unknown), "reason");
  auto other = give_back(id, {{"reason", "other"}}, high_key);
  EXPECT_EQ(other->status, 400);
  EXPECT_EQ(field_of(other), "note");
  auto long_note = give_back(id, {{"reason", "other"}, {"note", std::string(1001, 'x')}}, high_key);
  EXPECT_EQ(long_note->status, 400);
  auto stray = give_back(id, {{"reason", "fraud"}, {"refund", 100}}, high_key);
  EXPECT_EQ(stray->status, 400);
  EXPECT_EQ(field_of(stray), "refund");
  auto not_object = give_back(id, json::array(), high_key);
  EXPECT_EQ(not_object->status, 400);
  EXPECT_EQ(give_back("ld_nonsense", {{"reason", "fraud"}}, high_key)->status, 404);

  // A seller's key cannot return anything.
  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller}});
  EXPECT_EQ(give_back(id, {{"reason", "fraud"}}, seller_key)->status, 403);
  // Buyer keys hold buyer scopes only.
  auto scoped = svc.post("/v1/api-keys", {{"buyer_id", high_id}, {"scopes", {"leads:write"}}},
                         svc.operator_key());
  EXPECT_EQ(scoped->status, 400) << scoped->body;
  auto both =
      svc.post("/v1/api-keys", {{"buyer_id", high_id}, {"seller_id", seller}}, svc.operator_key());
  EXPECT_EQ(both->status, 400) << both->body;
  auto nobody = svc.post("/v1/api-keys", {{"buyer_id", "by_nobody"}}, svc.operator_key());
  EXPECT_EQ(nobody->status, 400) << nobody->body;

  // An unsold lead has nothing to return.
  high->set_no_bid_rate(1.0);
  low->set_no_bid_rate(1.0);
  auto unsold = svc.post("/v1/leads", sample_lead(5), svc.operator_key());
  ASSERT_EQ(unsold->status, 201) << unsold->body;
  const std::string unsold_id = body_of(unsold)["lead_id"];
  EXPECT_EQ(give_back(unsold_id, {{"reason", "fraud"}}, svc.operator_key())->status, 409);
  EXPECT_EQ(give_back(unsold_id, {{"reason", "fraud"}}, high_key)->status, 404);

  // After the window: 422, and nothing changed.
  clock.advance(std::chrono::hours(24 * 7) + std::chrono::minutes(1));
  auto late = give_back(id, {{"reason", "fraud"}}, high_key);
  EXPECT_EQ(late->status, 422) << late->body;
  EXPECT_NE(body_of(late)["detail"].get<std::string>().find("7 days"), std::string::npos);
  EXPECT_EQ(body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"]["status"], "delivered");
}

TEST_F(Returns, TheOperatorReturnsForTheBuyerAndAHighReturnRateFlagsIt) {
  const std::string a = sold_lead(6), b = sold_lead(7);
  auto r = give_back(a, {{"reason", "duplicate"}}, svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["data"]["buyer_id"], high_id);
  // The operator may not name a buyer the lead was not sold to.
  EXPECT_EQ(give_back(b, {{"reason", "fraud"}, {"buyer_id", low_id}}, svc.operator_key())->status,
            409);
  // One of two sales returned: 0.5 > max_return_rate 0.4.
  const json buyer = body_of(svc.get("/v1/buyers/" + high_id, svc.operator_key()))["data"];
  EXPECT_EQ(buyer["returns"]["sales"], 2);
  EXPECT_EQ(buyer["returns"]["returned"], 1);
  EXPECT_EQ(buyer["returns"]["rate"], 0.5);
  EXPECT_EQ(buyer["returns"]["flagged"], true);
  EXPECT_EQ(buyer["return_window_days"], 7);
  // The view read back is a valid update (the summary is read-only).
  auto put =
      svc.https()->Put("/v1/buyers/" + high_id, {{"Authorization", "Bearer " + svc.operator_key()}},
                       buyer.dump(), "application/json");
  EXPECT_EQ(put->status, 200) << put->body;
  const json low_view = body_of(svc.get("/v1/buyers/" + low_id, svc.operator_key()))["data"];
  EXPECT_EQ(low_view["returns"]["flagged"], false);
}

}  // namespace
}  // namespace leadflow::testing
