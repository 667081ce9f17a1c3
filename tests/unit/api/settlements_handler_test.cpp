// The settlement handler without a server: a request parsed as the server would, fake store
// ports, and the answer's status and body. Which post intent a settlement is for, at what price,
// the seller's payout rule, and what each refusal answers.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_money_ports.hpp"
#include "leadflow/http/parser.hpp"
#include "settlements.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kSettlementsNow = 1'775'000'000'000;
const std::string kSettlementsFailed = "ld_01JQ0000000000000000000011";  // one post, unanswered
const std::string kSettlementsShared = "ld_01JQ0000000000000000000012";  // two shares, unanswered
const std::string kOwnLead = "ld_01JQ0000000000000000000013";  // the operator's, no intent
const std::string kSettlementsNobodys = "ld_01JQ0000000000000000000019";  // a valid id no lead has

ApiKey settlements_key_of(std::string id, std::string buyer_id = "", std::string seller_id = "") {
  ApiKey k;
  k.id = std::move(id);
  k.buyer_id = std::move(buyer_id);
  k.seller_id = std::move(seller_id);
  return k;
}

PostIntent intent(const std::string& lead_id, std::string buyer_id, Cents price) {
  PostIntent p;
  p.lead_id = lead_id;
  p.buyer_id = std::move(buyer_id);
  p.price = price;
  return p;
}

class SettleHandler : public ::testing::Test {
 protected:
  SettleHandler() {
    // The campaign pays a fixed 5.00; the seller's own rule (70%) is not the one that counts.
    Campaign campaign;
    campaign.id = "cp_1";
    campaign.payout_fixed = true;
    campaign.payout_value = 500;
    store.campaigns[campaign.id] = campaign;
    Seller seller;
    seller.id = "sl_1";
    seller.payout_value = 7000;
    store.sellers[seller.id] = seller;

    store.leads[kSettlementsFailed] = failed(kSettlementsFailed, "cp_1");
    store.leads[kSettlementsShared] = failed(kSettlementsShared, "");
    store.leads[kOwnLead] = failed(kOwnLead, "");
    store.leads[kOwnLead].lead.seller_id.clear();
    store.intents[kSettlementsFailed] = {intent(kSettlementsFailed, "by_silent", 2000)};
    store.intents[kSettlementsShared] = {intent(kSettlementsShared, "by_a", 900),
                                         intent(kSettlementsShared, "by_b", 800)};
  }

  static LeadRecord failed(const std::string& id, const std::string& campaign_id) {
    LeadRecord r;
    r.lead.id = id;
    r.lead.seller_id = "sl_1";
    r.lead.campaign_id = campaign_id;
    r.distribution.status = DeliveryStatus::kFailed;
    return r;
  }

  http::Response post_raw(const ApiKey& key, const std::string& lead_id, const std::string& body) {
    const std::string raw = "POST /v1/leads/" + lead_id +
                            "/settle HTTP/1.1\r\nHost: a.example\r\nContent-Type: "
                            "application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_settlement(ports, key, Viewer::of(key), lead_id, req, res);
    return res;
  }
  http::Response post(const std::string& lead_id, const json& body) {
    return post_raw(op, lead_id, body.dump());
  }

  static json body_of(const http::Response& res) { return json::parse(res.body); }
  static std::string field_of(const http::Response& res) {
    return body_of(res)["errors"][0]["field"].get<std::string>();
  }

  FakeMoneyPorts store;
  ManualClock clock{SystemTime{std::chrono::milliseconds{kSettlementsNow}}};
  std::vector<Audited> audited;
  SettlePorts ports{store, store,
                    store, store,
                    clock, [this](const AuditRecord& r) { audited.push_back(Audited::of(r)); }};
  const ApiKey op = settlements_key_of("key_op");
};

TEST_F(SettleHandler, TheOperatorSettlesTheOnlyPostAtItsPriceByTheCampaignsRule) {
  const auto res = post(kSettlementsFailed,
                        {{"sold", true}, {"buyer_lead_id", "SILENT-1"}, {"note", "phoned them"}});
  ASSERT_EQ(res.status, 201) << res.body;
  ASSERT_EQ(store.settlements_asked.size(), 1u);
  const Settlement& asked = store.settlements_asked[0];
  EXPECT_EQ(asked.lead_id, kSettlementsFailed);
  EXPECT_EQ(asked.buyer_id, "by_silent");
  EXPECT_TRUE(asked.sold);
  EXPECT_EQ(asked.price, 2000);  // the price it was posted at
  EXPECT_EQ(asked.payout, 500);  // the campaign's fixed payout, not the seller's 70%
  EXPECT_EQ(asked.by_key_id, "key_op");
  EXPECT_EQ(asked.at_ms, kSettlementsNow);
  const json data = body_of(res)["data"];
  EXPECT_EQ(data["buyer_id"], "by_silent");
  EXPECT_EQ(data["price"], 20.0);
  EXPECT_EQ(data["payout"], 5.0);
  EXPECT_EQ(data["buyer_lead_id"], "SILENT-1");
  EXPECT_EQ(data["note"], "phoned them");
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].event, AuditEvent::kLeadSettled);
  EXPECT_EQ(audited[0].kind, "sold");
  EXPECT_EQ(audited[0].lead_id, kSettlementsFailed);
  EXPECT_EQ(audited[0].buyer_id, "by_silent");
  EXPECT_EQ(audited[0].seller_id, "sl_1");
  EXPECT_EQ(audited[0].actor_key_id, "key_op");
}

TEST_F(SettleHandler, ASharedLeadIsSettledBuyerByBuyerAtAnAgreedPriceByTheSellersRule) {
  const auto unnamed = post(kSettlementsShared, {{"sold", true}});
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_EQ(field_of(unnamed), "buyer_id");
  EXPECT_TRUE(store.settlements_asked.empty());

  const auto named =
      post(kSettlementsShared, {{"sold", true}, {"buyer_id", "by_b"}, {"price", 10.5}});
  ASSERT_EQ(named.status, 201) << named.body;
  EXPECT_EQ(store.settlements_asked.back().buyer_id, "by_b");
  EXPECT_EQ(store.settlements_asked.back().price, 1050);
  EXPECT_EQ(store.settlements_asked.back().payout, 735);  // the seller's 70%

  const auto not_sold = post(kSettlementsShared, {{"sold", false}, {"buyer_id", "by_a"}});
  ASSERT_EQ(not_sold.status, 201) << not_sold.body;
  EXPECT_EQ(body_of(not_sold)["data"]["price"], nullptr);
  EXPECT_EQ(audited.back().kind, "not_sold");
}

TEST_F(SettleHandler, ALeadWithNoSuchPostIsA409AndNoSuchLeadA404) {
  EXPECT_EQ(post(kOwnLead, {{"sold", true}}).status, 409);  // no intent at all
  const auto other = post(kSettlementsFailed, {{"sold", true}, {"buyer_id", "by_a"}});
  EXPECT_EQ(other.status, 409);
  EXPECT_EQ(body_of(other)["detail"],
            "only a failed lead whose post outcome stayed unknown can be settled");
  EXPECT_TRUE(store.settlements_asked.empty());
  store.settle_answer = SettleStatus::kNotUnknown;  // decided meanwhile
  EXPECT_EQ(post(kSettlementsFailed, {{"sold", true}}).status, 409);

  EXPECT_EQ(post(kSettlementsNobodys, {{"sold", true}}).status, 404);
  const int reads = store.lead_reads;
  EXPECT_EQ(post("ld_nonsense", {{"sold", true}}).status, 404);
  EXPECT_EQ(store.lead_reads, reads);
  store.settle_answer = SettleStatus::kNoSuchLead;
  EXPECT_EQ(post(kSettlementsFailed, {{"sold", true}}).status, 404);
  store.settle_answer = SettleStatus::kBuyerNeeded;
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}})), "buyer_id");
  EXPECT_TRUE(audited.empty());
}

TEST_F(SettleHandler, ASecondSettlementIsA409NamingTheFirst) {
  store.settle_answer = SettleStatus::kAlreadySettled;
  store.earlier_settlement.lead_id = kSettlementsFailed;
  store.earlier_settlement.buyer_id = "by_silent";
  store.earlier_settlement.sold = true;
  store.earlier_settlement.price = 2000;
  const auto again = post(kSettlementsFailed, {{"sold", false}});
  EXPECT_EQ(again.status, 409);
  const json body = body_of(again);
  EXPECT_EQ(body["detail"], "the lead was already settled with this buyer");
  EXPECT_EQ(body["settlement"]["sold"], true);
  EXPECT_EQ(body["settlement"]["price"], 20.0);
  EXPECT_TRUE(audited.empty());
}

TEST_F(SettleHandler, EveryBadBodyIsA400NamingTheField) {
  EXPECT_EQ(field_of(post(kSettlementsFailed, json::object())), "sold");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", "yes"}})), "sold");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", false}, {"price", 3}})), "price");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}, {"price", -3}})), "price");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}, {"price", 100'000.01}})), "price");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}, {"price", "20"}})), "price");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", false}, {"buyer_lead_id", "X-1"}})),
            "buyer_lead_id");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}, {"buyer_id", 7}})), "buyer_id");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}, {"note", std::string(1001, 'x')}})),
            "note");
  EXPECT_EQ(field_of(post(kSettlementsFailed, {{"sold", true}, {"refund", 1}})), "refund");
  EXPECT_EQ(post_raw(op, kSettlementsFailed, "[]").status, 400);
  EXPECT_EQ(store.lead_reads, 0);
  EXPECT_TRUE(store.settlements_asked.empty());
}

TEST_F(SettleHandler, AStoreThatCannotReadTheIntentsOrRecordIsA503) {
  store.intents_down = true;
  const auto read = post(kSettlementsFailed, {{"sold", true}});
  EXPECT_EQ(read.status, 503);
  EXPECT_EQ(body_of(read)["detail"], "the store cannot be reached; retry");
  EXPECT_TRUE(store.settlements_asked.empty());
  store.intents_down = false;
  store.writes_down = true;
  const auto write = post(kSettlementsFailed, {{"sold", true}});
  EXPECT_EQ(write.status, 503);
  EXPECT_EQ(body_of(write)["detail"], "the store is unavailable; nothing was changed");
  store.writes_down = false;
  // A lead the store cannot read is no "no such lead".
  store.leads_down = true;
  const auto lead = post(kSettlementsFailed, {{"sold", true}});
  EXPECT_EQ(lead.status, 503);
  EXPECT_EQ(body_of(lead)["detail"], "the store is unavailable; nothing was changed");
  EXPECT_EQ(store.settlements_asked.size(), 1u);  // the write that failed, before
  EXPECT_TRUE(audited.empty());
}

// A payout rule the store cannot read is not the default one: nothing is settled by a guess.
TEST_F(SettleHandler, APayoutRuleTheStoreCannotReadIsA503AndNothingSettled) {
  store.accounts_down = true;
  const auto by_campaign = post(kSettlementsFailed, {{"sold", true}});
  EXPECT_EQ(by_campaign.status, 503) << by_campaign.body;
  const auto by_seller = post(kSettlementsShared, {{"sold", true}, {"buyer_id", "by_a"}});
  EXPECT_EQ(by_seller.status, 503) << by_seller.body;
  EXPECT_TRUE(store.settlements_asked.empty());
  EXPECT_TRUE(audited.empty());
  store.accounts_down = false;
  EXPECT_EQ(post(kSettlementsFailed, {{"sold", true}}).status, 201);
}

TEST_F(SettleHandler, OnlyTheOperatorSettles) {
  // The route's authorisation refuses these keys first; the handler refuses them by itself too.
  for (const ApiKey& key :
       {settlements_key_of("key_b", "by_silent"), settlements_key_of("key_s", "", "sl_1")}) {
    const auto res = post_raw(key, kSettlementsFailed, json{{"sold", true}}.dump());
    EXPECT_EQ(res.status, 403);
    EXPECT_EQ(body_of(res)["detail"], "this API key lacks permission for the operation");
  }
  EXPECT_EQ(store.lead_reads, 0);
  EXPECT_TRUE(store.settlements_asked.empty());
}

}  // namespace
}  // namespace leadflow::testing
