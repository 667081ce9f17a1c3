// The projections of lead-shaped answers on plain values: each role gets its fields and nothing of
// another party's (docs/visibility.md).
#include "leadflow/visibility/projections.hpp"

#include <gtest/gtest.h>

namespace leadflow {
namespace {

using nlohmann::json;

// A lead of sl_1 shared between by_a (40.00) and by_b (25.00); the seller earns 45.50.
LeadRecord shared_lead() {
  LeadRecord r;
  r.lead.id = "ld_1";
  r.lead.seller_id = "sl_1";
  r.lead.campaign_id = "cp_1";
  r.lead.first_name = "Ada";
  r.lead.email = "ada@example.com";
  r.lead.phone = "5551234567";
  r.lead.vertical = "solar";
  r.lead.received_at_ms = 1'700'000'000'000;
  Distribution& d = r.distribution;
  d.status = DeliveryStatus::kDelivered;
  d.buyer_id = "by_a";
  d.price = 6500;
  d.payout = 4550;
  d.buyer_lead_id = "ext-a";
  d.sales = {{"by_a", 4000, 2800, "ext-a"}, {"by_b", 2500, 1750, "ext-b"}};
  d.decided_at_ms = r.lead.received_at_ms + 500;
  d.attempts = {{"by_a", AttemptKind::kPing, r.lead.received_at_ms + 10, 30, AttemptOutcome::kBid,
                 4000, 200, "", 1},
                {"by_b", AttemptKind::kPing, r.lead.received_at_ms + 12, 35, AttemptOutcome::kBid,
                 2500, 200, "", 1},
                {"by_a", AttemptKind::kPost, r.lead.received_at_ms + 80, 40,
                 AttemptOutcome::kAccepted, std::nullopt, 200, "", 1}};
  d.ineligible = {{"by_c", "filter:states"}, {"by_d", "filter:zip"}, {"by_e", "cap:daily"}};
  return r;
}

// Every string and number anywhere in `j`, as text.
void values(const json& j, std::vector<std::string>& out) {
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) values(v, out);
  } else if (j.is_string()) {
    out.push_back(j.get<std::string>());
  } else if (j.is_number()) {
    out.push_back(j.dump());
  }
}

bool mentions(const json& j, const std::string& needle) {
  std::vector<std::string> all;
  values(j, all);
  for (const auto& v : all)
    if (v.find(needle) != std::string::npos) return true;
  return false;
}

const SellerLabels kLabels{"secret", [](const std::string& id) { return "Name of " + id; }};

TEST(Projections, OperatorSeesTheWholeLead) {
  const json j = project_lead(Viewer{}, shared_lead(), kLabels, LeadDetail::kFull);
  EXPECT_EQ(j["seller_id"], "sl_1");
  EXPECT_EQ(j["campaign_id"], "cp_1");
  EXPECT_EQ(j["distribution"]["buyer_id"], "by_a");
  EXPECT_EQ(j["distribution"]["price"], 65.0);
  EXPECT_EQ(j["distribution"]["payout"], 45.5);
  EXPECT_EQ(j["distribution"]["sales"].size(), 2u);
  EXPECT_EQ(j["attempts"].size(), 3u);
  EXPECT_EQ(j["attempts"][0]["bid"], 40.0);
  EXPECT_EQ(j["ineligible_buyers"].size(), 3u);
  EXPECT_FALSE(j.contains("source_code"));
}

TEST(Projections, SellerSeesItsPayoutAndNoBuyer) {
  const json j = project_lead(Viewer::seller("sl_1"), shared_lead(), kLabels, LeadDetail::kFull);
  EXPECT_EQ(j["email"], "ada@example.com");
  EXPECT_EQ(j["seller_id"], "sl_1");
  EXPECT_EQ(j["campaign_id"], "cp_1");
  EXPECT_EQ(j["distribution"]["payout"], 45.5);
  EXPECT_EQ(j["distribution"]["price"], 45.5);  // what the lead fetched for the seller
  EXPECT_EQ(j["distribution"]["delivery_status"], "delivered");
  for (const char* absent : {"buyer_lead_id", "sales"})
    EXPECT_FALSE(j["distribution"].contains(absent)) << absent;
  // The one exception: the interface's buyer_id, withheld as null.
  ASSERT_TRUE(j["distribution"].contains("buyer_id"));
  EXPECT_TRUE(j["distribution"]["buyer_id"].is_null());
  EXPECT_FALSE(j.contains("attempts"));
  EXPECT_FALSE(j.contains("ineligible_buyers"));
  EXPECT_EQ(j["offers"]["pings"], 2);
  EXPECT_EQ(j["offers"]["posts"], 1);
  EXPECT_EQ(j["ineligible_reasons"],
            json({"a buyer's cap was reached", "the lead did not match a buyer's filters",
                  "the lead's state is outside a buyer's filters"}));
  for (const char* leak : {"by_a", "by_b", "by_c", "ext-a", "ext-b", "65", "40", "25"})
    EXPECT_FALSE(mentions(j, leak)) << leak << " in " << j.dump();
}

TEST(Projections, AnotherSellerSeesNothing) {
  EXPECT_FALSE(may_see_lead(Viewer::seller("sl_2"), shared_lead()));
  const json j = project_lead(Viewer::seller("sl_2"), shared_lead(), kLabels, LeadDetail::kFull);
  EXPECT_FALSE(mentions(j, "ada@example.com"));
  EXPECT_FALSE(mentions(j, "45.5"));
}

TEST(Projections, BuyerSeesItsPurchaseAndASourceCode) {
  const LeadRecord r = shared_lead();
  ASSERT_TRUE(may_see_lead(Viewer::buyer("by_b"), r));
  EXPECT_FALSE(may_see_lead(Viewer::buyer("by_c"), r));
  const json j = project_lead(Viewer::buyer("by_b"), r, kLabels, LeadDetail::kFull);
  EXPECT_EQ(j["email"], "ada@example.com");
  EXPECT_EQ(j["distribution"]["buyer_id"], "by_b");
  EXPECT_EQ(j["distribution"]["price"], 25.0);
  EXPECT_EQ(j["distribution"]["buyer_lead_id"], "ext-b");
  EXPECT_EQ(j["source_code"], source_code("secret", "by_b", "sl_1"));
  EXPECT_NE(j["source_code"],
            project_lead(Viewer::buyer("by_a"), r, kLabels, LeadDetail::kRow)["source_code"]);
  for (const char* absent : {"seller_id", "campaign_id", "seller_name", "ineligible_buyers",
                             "ineligible_reasons", "offers"})
    EXPECT_FALSE(j.contains(absent)) << absent;
  for (const char* absent : {"payout", "sales", "reason"})
    EXPECT_FALSE(j["distribution"].contains(absent)) << absent;
  // Its own ping only.
  ASSERT_EQ(j["attempts"].size(), 1u);
  EXPECT_EQ(j["attempts"][0]["buyer_id"], "by_b");
  for (const char* leak : {"sl_1", "cp_1", "by_a", "ext-a", "45.5", "28", "17.5", "65", "40"})
    EXPECT_FALSE(mentions(j, leak)) << leak << " in " << j.dump();
}

TEST(Projections, BuyerShownNamesSeesTheSellerButNotItsPayout) {
  const json j =
      project_lead(Viewer::buyer("by_b", true), shared_lead(), kLabels, LeadDetail::kFull);
  EXPECT_EQ(j["seller_id"], "sl_1");
  EXPECT_EQ(j["seller_name"], "Name of sl_1");
  EXPECT_TRUE(j.contains("source_code"));
  EXPECT_FALSE(j["distribution"].contains("payout"));
  EXPECT_FALSE(mentions(j, "45.5"));
  EXPECT_FALSE(mentions(j, "by_a"));
}

TEST(Projections, OutcomeOfAPostIsTheSellersPayout) {
  Distribution d;
  d.status = DeliveryStatus::kDelivered;
  d.buyer_id = "by_a";
  d.price = 6000;
  d.payout = 4200;
  const json s = project_distribution(Viewer::seller("sl_1"), d, "sl_1");
  EXPECT_EQ(s, json({{"accepted", true},
                     {"buyer_id", nullptr},  // named by the interface, withheld
                     {"delivery_status", "delivered"},
                     {"currency", "USD"},
                     {"payout", 42.0},
                     {"price", 42.0}}));
  const json op = project_distribution(Viewer{}, d, "sl_1");
  EXPECT_EQ(op["buyer_id"], "by_a");
  EXPECT_EQ(op["price"], 60.0);
  d.status = DeliveryStatus::kUnsold;
  EXPECT_TRUE(project_distribution(Viewer::seller("sl_1"), d, "sl_1")["price"].is_null());
}

TEST(Projections, ReasonsInSellerWordsNameNoBuyerOrLead) {
  LeadRecord r = shared_lead();
  r.distribution.status = DeliveryStatus::kFailed;
  r.distribution.reason = "no answer from buyer by_a to the post of lead ld_1 (timeout)";
  const json s = project_lead(Viewer::seller("sl_1"), r, kLabels, LeadDetail::kRow);
  EXPECT_EQ(s["distribution"]["reason"],
            "the lead could not be distributed; the operator is looking into it");
  EXPECT_EQ(project_lead(Viewer{}, r, kLabels, LeadDetail::kRow)["distribution"]["reason"],
            r.distribution.reason);
  EXPECT_EQ(seller_reason(DeliveryStatus::kDuplicate, "duplicate of ld_other"),
            "duplicate of an earlier lead");
  EXPECT_EQ(seller_reason(DeliveryStatus::kUnsold, "no bids"), "no buyer bid on the lead");
  EXPECT_EQ(seller_reason(DeliveryStatus::kUnsold, "by_x said no"), "no buyer took the lead");
  EXPECT_EQ(seller_ineligibility("by_q:weird"), "a buyer could not take part");
}

// A filter is named by the lead's own field it turned away (state, ZIP, source), both state
// filters alike; a custom rule's field is never named.
TEST(Projections, FiltersInSellerWordsNameTheLeadsFieldOnly) {
  EXPECT_EQ(seller_ineligibility("filter:states"), "the lead's state is outside a buyer's filters");
  EXPECT_EQ(seller_ineligibility("filter:exclude_states"),
            "the lead's state is outside a buyer's filters");
  EXPECT_EQ(seller_ineligibility("filter:zip_prefixes"),
            "the lead's ZIP code is outside a buyer's filters");
  EXPECT_EQ(seller_ineligibility("filter:sources"),
            "the lead's source is outside a buyer's filters");
  EXPECT_EQ(seller_ineligibility("filter:custom:credit_score"),
            "the lead did not match a buyer's filters");
}

TEST(Projections, ReturnsPerRole) {
  const LeadReturn ret{"ld_1", "by_b", "invalid_phone",   "bad number, by_b ops", "ky_b",
                       2500,   1750,   1'700'000'000'000, 1'700'000'100'000};
  const json op = project_return(Viewer{}, ret, "sl_1");
  EXPECT_EQ(op["price"], 25.0);
  EXPECT_EQ(op["payout"], 17.5);
  const json b = project_return(Viewer::buyer("by_b"), ret, "sl_1");
  EXPECT_EQ(b["price"], 25.0);
  EXPECT_EQ(b["note"], "bad number, by_b ops");
  EXPECT_FALSE(b.contains("payout"));
  EXPECT_TRUE(project_return(Viewer::buyer("by_a"), ret, "sl_1").is_null());
  const json s = project_return(Viewer::seller("sl_1"), ret, "sl_1");
  EXPECT_EQ(s["payout"], 17.5);
  EXPECT_EQ(s["reason"], "invalid_phone");
  for (const char* absent : {"price", "buyer_id", "note", "key_id"})
    EXPECT_FALSE(s.contains(absent)) << absent;
  EXPECT_TRUE(project_return(Viewer::seller("sl_2"), ret, "sl_1").is_null());
  EXPECT_EQ(project_returns(Viewer::seller("sl_2"), {ret}, "sl_1"), json::array());
}

TEST(Projections, SettlementsPerRole) {
  Settlement st;
  st.lead_id = "ld_1";
  st.buyer_id = "by_a";
  st.sold = true;
  st.price = 3000;
  st.payout = 2100;
  st.buyer_lead_id = "ext-a";
  st.note = "by_a confirmed by phone";
  st.by_key_id = "ky_op";
  const json op = project_settlement(Viewer{}, st, "sl_1");
  EXPECT_EQ(op["note"], "by_a confirmed by phone");
  EXPECT_EQ(op["payout"], 21.0);
  const json b = project_settlement(Viewer::buyer("by_a"), st, "sl_1");
  EXPECT_EQ(b["price"], 30.0);
  for (const char* absent : {"payout", "note", "key_id"}) EXPECT_FALSE(b.contains(absent));
  const json s = project_settlement(Viewer::seller("sl_1"), st, "sl_1");
  EXPECT_EQ(s["payout"], 21.0);
  EXPECT_FALSE(mentions(s, "by_a"));
  EXPECT_FALSE(mentions(s, "30"));
  EXPECT_TRUE(project_settlement(Viewer::buyer("by_b"), st, "sl_1").is_null());
}

TEST(Projections, LedgerPerRoleNeverTheMarginToAParty) {
  const LedgerEntry e{7, "sale", "ld_1", "by_a", "sl_1", "cp_1", 6000, 4200, 1'700'000'000'000};
  const json op = project_ledger_entry(Viewer{}, e);
  EXPECT_EQ(op["revenue"], 60.0);
  EXPECT_EQ(op["margin"], 18.0);
  const json b = project_ledger_entry(Viewer::buyer("by_a"), e);
  EXPECT_EQ(b["price"], 60.0);
  for (const char* absent : {"payout", "margin", "revenue", "seller_id", "campaign_id"})
    EXPECT_FALSE(b.contains(absent)) << absent;
  const json s = project_ledger_entry(Viewer::seller("sl_1"), e);
  EXPECT_EQ(s["payout"], 42.0);
  EXPECT_EQ(s["seller_id"], "sl_1");
  for (const char* absent : {"price", "margin", "revenue", "buyer_id"})
    EXPECT_FALSE(s.contains(absent)) << absent;
  EXPECT_TRUE(project_ledger_entry(Viewer::buyer("by_b"), e).is_null());
  EXPECT_TRUE(project_ledger_entry(Viewer::seller("sl_2"), e).is_null());
  EXPECT_EQ(project_ledger(Viewer::seller("sl_2"), {e}), json::array());
}

}  // namespace
}  // namespace leadflow
