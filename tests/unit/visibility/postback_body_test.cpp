// A postback's body through the visibility model: the seller's payout and its own words for why
// a lead went unsold, never the buyer, its reference, the price or the margin.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "leadflow/visibility/postback.hpp"
#include "leadflow/visibility/projections.hpp"

namespace leadflow {
namespace {

PostbackFacts facts(std::string kind, std::string status) {
  PostbackFacts f;
  f.event_id = "evt_01HZZZZZZZZZZZZZZZZZZZZZZZ";
  f.kind = std::move(kind);
  f.lead_id = "ld_01HZZZZZZZZZZZZZZZZZZZZZZZ";
  f.seller_id = "sl_s";
  f.campaign_id = "cp_c";
  f.status = std::move(status);
  f.occurred_at_ms = 1'700'000'000'000;
  return f;
}

TEST(PostbackBody, ASaleCarriesThePayoutAndTheEnvelope) {
  PostbackFacts f = facts("lead.sold", "delivered");
  f.sold = true;
  f.payout = 1875;
  const auto body = nlohmann::json::parse(postback_body(f));
  EXPECT_EQ(body["id"], f.event_id);
  EXPECT_EQ(body["type"], "lead.sold");
  EXPECT_EQ(body["created_at"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(body["data"], (nlohmann::json{{"lead_id", f.lead_id},
                                          {"campaign_id", "cp_c"},
                                          {"status", "delivered"},
                                          {"currency", "USD"},
                                          {"payout", 18.75}}));
  EXPECT_EQ(postback_body(f), postback_body(f)) << "the same bytes every attempt";
}

TEST(PostbackBody, AnUnsoldLeadsReasonIsInTheSellersWords) {
  PostbackFacts f = facts("lead.unsold", "unsold");
  f.reason = "all buyers rejected: by_acme said no";
  const std::string text = postback_body(f);
  EXPECT_EQ(text.find("by_acme"), std::string::npos) << text;
  const auto data = nlohmann::json::parse(text)["data"];
  EXPECT_EQ(data["reason"], seller_reason(DeliveryStatus::kUnsold, f.reason));
  EXPECT_FALSE(data.contains("payout"));
}

TEST(PostbackBody, AReturnAndASettlementSayWhatTheSellerEarnsOrLoses) {
  PostbackFacts r = facts("lead.returned", "returned");
  r.payout = 875;
  r.reason = "invalid_phone";
  const auto rd = nlohmann::json::parse(postback_body(r))["data"];
  EXPECT_EQ(rd["payout_reversed"], 8.75);
  EXPECT_EQ(rd["reason"], "invalid_phone");
  PostbackFacts s = facts("lead.settled", "unsold");
  s.sold = false;
  const auto sd = nlohmann::json::parse(postback_body(s))["data"];
  EXPECT_EQ(sd["sold"], false);
  EXPECT_TRUE(sd["payout"].is_null());
  PostbackFacts none = facts("lead.sold", "delivered");
  none.campaign_id = "";
  EXPECT_TRUE(nlohmann::json::parse(postback_body(none))["data"]["campaign_id"].is_null());
}

}  // namespace
}  // namespace leadflow
