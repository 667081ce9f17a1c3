// Settlement over real HTTPS: a lead whose post never got an answer, through every attempt,
// ends failed with its post intent; the operator records the buyer's answer, once.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

ServiceOptions short_auctions() {
  ServiceOptions o;
  o.auction_timeout_ms = 600;
  o.wait_ms = 100;  // answer 202 at once: the lead is decided (failed) seconds later
  return o;
}

class Settlement : public ::testing::Test {
 protected:
  Settlement() : svc(short_auctions()) {}

  void SetUp() override {
    BuyerSimOptions o;
    o.name = "silent";
    o.hang_ms = 5000;
    silent = std::make_unique<BuyerSimulator>(o);
    silent->start();
    // A fixed-price buyer is posted without a ping: every request it gets is a post.
    silent_id =
        svc.add_buyer(*silent, "auto_insurance",
                      {{"delivery", {{"timeout_ms", 150}}},
                       {"pricing", {{"model", "fixed"}, {"price", 20.0}, {"min_bid", nullptr}}}});
    silent->set_hang_next(1'000'000);
  }

  // Posts a lead whose posts all go unanswered and waits until it is recorded failed.
  std::string failed_lead(int salt) {
    auto r = svc.post("/v1/leads", sample_lead(salt), svc.operator_key());
    EXPECT_TRUE(r->status == 201 || r->status == 202) << r->body;
    const std::string id = body_of(r)["lead_id"];
    for (int i = 0; i < 600; ++i) {
      auto got = svc.get("/v1/leads/" + id, svc.operator_key());
      if (got->status == 200 && body_of(got)["data"]["status"] == "failed") return id;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ADD_FAILURE() << "lead " << id << " was not recorded failed";
    return id;
  }

  httplib::Result settle(const std::string& id, const json& body, const std::string& key) {
    return svc.post("/v1/leads/" + id + "/settle", body, key);
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> silent;
  std::string silent_id;
};

TEST_F(Settlement, TheOperatorSettlesAnUnknownPostAsSoldOnceAndItEntersTheLedger) {
  const std::string id = failed_lead(1);
  // Only the operator settles.
  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller}});
  EXPECT_EQ(settle(id, {{"sold", true}}, seller_key)->status, 403);
  const std::string buyer_key = svc.add_api_key({{"name", "b"}, {"buyer_id", silent_id}});
  EXPECT_EQ(settle(id, {{"sold", true}}, buyer_key)->status, 403);
  // Bad bodies are 400s naming the field, and change nothing.
  EXPECT_EQ(settle(id, json::object(), svc.operator_key())->status, 400);
  EXPECT_EQ(settle(id, {{"sold", "yes"}}, svc.operator_key())->status, 400);
  EXPECT_EQ(settle(id, {{"sold", false}, {"price", 3}}, svc.operator_key())->status, 400);
  EXPECT_EQ(settle(id, {{"sold", true}, {"price", -3}}, svc.operator_key())->status, 400);
  EXPECT_EQ(settle(id, {{"sold", true}, {"refund", 1}}, svc.operator_key())->status, 400);
  EXPECT_EQ(settle("ld_nonsense", {{"sold", true}}, svc.operator_key())->status, 404);

  auto r = settle(id, {{"sold", true}, {"buyer_lead_id", "SILENT-1"}, {"note", "phoned them"}},
                  svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  const json s = body_of(r)["data"];
  EXPECT_EQ(s["buyer_id"], silent_id);
  EXPECT_EQ(s["sold"], true);
  EXPECT_EQ(s["price"], 20.0);  // the price it was posted at
  EXPECT_EQ(s["buyer_lead_id"], "SILENT-1");

  const json lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(lead["status"], "delivered");
  EXPECT_EQ(lead["distribution"]["buyer_id"], silent_id);
  EXPECT_EQ(lead["settlement"]["note"], "phoned them");
  ASSERT_EQ(lead["ledger"].size(), 1u);
  EXPECT_EQ(lead["ledger"][0]["kind"], "sale");
  EXPECT_EQ(lead["ledger"][0]["revenue"], 20.0);
  // The buyer now sees the lead it bought.
  EXPECT_EQ(svc.get("/v1/leads/" + id, buyer_key)->status, 200);

  auto again = settle(id, {{"sold", false}}, svc.operator_key());
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_EQ(body_of(again)["settlement"]["sold"], true);
}

TEST_F(Settlement, ALeadTheBuyerDidNotTakeIsSettledUnsoldAndALeadThatSoldCannotBe) {
  const std::string id = failed_lead(2);
  auto r = settle(id, {{"sold", false}}, svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["data"]["price"], nullptr);
  const json lead = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(lead["status"], "unsold");
  EXPECT_FALSE(lead.contains("ledger"));

  // A lead whose buyer answered needs no settlement.
  silent->set_hang_next(0);
  auto sold = svc.post("/v1/leads", sample_lead(3), svc.operator_key());
  const std::string sold_id = body_of(sold)["lead_id"];
  for (int i = 0; i < 200; ++i) {
    if (body_of(svc.get("/v1/leads/" + sold_id, svc.operator_key()))["data"]["status"] ==
        "delivered")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(settle(sold_id, {{"sold", true}}, svc.operator_key())->status, 409);
}

}  // namespace
}  // namespace leadflow::testing
