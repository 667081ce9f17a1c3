// What a buyer reads of its own account and of its purchase's return window, what a seller reads of
// its own account and campaigns, and the columns of a lead export per reader: on plain values.
#include <gtest/gtest.h>

#include <algorithm>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/visibility/account.hpp"
#include "leadflow/visibility/lead_csv.hpp"
#include "leadflow/visibility/seller.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

bool has(const std::vector<std::string>& v, const char* s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(BuyerAccount, AreItsOwnFieldsOnlyAndOnlyForItself) {
  Buyer b;
  b.id = "by_1";
  b.name = "Acme";
  b.headers = {{"Authorization", "Bearer abcdefghijklmnop"}};
  b.priority = 7;
  b.self_caps = true;
  json view = buyer_to_json(b, true);
  view["version"] = 3;
  const json mine = project_buyer_account(Viewer::buyer("by_1"), view);
  EXPECT_EQ(mine["name"], "Acme");
  EXPECT_EQ(mine["version"], 3);
  EXPECT_EQ(mine["self_service"]["caps"], true);
  EXPECT_EQ(mine["delivery"]["headers"]["Authorization"], "****mnop");
  for (const char* f : {"priority", "weight", "tier", "max_concurrency", "max_return_rate"})
    EXPECT_FALSE(mine.contains(f)) << f;
  EXPECT_TRUE(project_buyer_account(Viewer::buyer("by_2"), view).is_null());
  EXPECT_TRUE(project_buyer_account(Viewer::seller("se_1"), view).is_null());
  EXPECT_EQ(project_buyer_account(Viewer{}, view), view);
  const json summary = {{"window_days", 7},       {"sales", 4},     {"returned", 1}, {"rate", 0.25},
                        {"max_return_rate", 0.1}, {"flagged", true}};
  const json own = project_return_summary(Viewer::buyer("by_1"), summary);
  EXPECT_EQ(own["rate"], 0.25);
  EXPECT_FALSE(own.contains("max_return_rate"));
  EXPECT_FALSE(own.contains("flagged"));
}

TEST(SellerAccount, IsItsOwnRecordOnlyForItself) {
  Seller s;
  s.id = "se_1";
  s.name = "Leads Inc";
  s.time_zone = "America/New_York";
  json view = seller_to_json(s);
  const json mine = project_seller_account(Viewer::seller("se_1"), view);
  EXPECT_EQ(mine["name"], "Leads Inc");
  EXPECT_EQ(mine["time_zone"], "America/New_York");
  EXPECT_EQ(mine["payout"], view["payout"]);
  // A field the operator's record gains later is not the seller's until the model lists it.
  view["operator_note"] = "slow payer";
  EXPECT_FALSE(project_seller_account(Viewer::seller("se_1"), view).contains("operator_note"));
  EXPECT_EQ(project_seller_account(Viewer{}, view), view);
  EXPECT_TRUE(project_seller_account(Viewer::seller("se_2"), view).is_null());
  EXPECT_TRUE(project_seller_account(Viewer::buyer("by_1"), view).is_null());
  EXPECT_TRUE(project_seller_account(Viewer::buyer("by_1", true), view).is_null());
}

TEST(CampaignView, IsItsSellersWithoutTheKeyAndNoBuyers) {
  Campaign c;
  c.id = "cp_1";
  c.seller_id = "se_1";
  c.key_hint = "lfc_abc";
  const json view = campaign_to_json(c);
  EXPECT_EQ(project_campaign(Viewer{}, view)["campaign_key_hint"], "lfc_abc");
  const json mine = project_campaign(Viewer::seller("se_1"), view);
  EXPECT_EQ(mine["campaign_id"], "cp_1");
  EXPECT_FALSE(mine.contains("campaign_key_hint"));
  EXPECT_TRUE(project_campaign(Viewer::seller("se_2"), view).is_null());
  EXPECT_TRUE(project_campaign(Viewer::buyer("by_1", true), view).is_null());
}

TEST(ReturnOutlookView, IsTheBuyersOwnPurchaseOnly) {
  const std::vector<std::string> reasons = {"fraud", "other"};
  const json w =
      project_return_outlook(Viewer::buyer("by_1"), "by_1", 7, "open", 1'700'000'000'000, reasons);
  EXPECT_EQ(w["returnable"], true);
  EXPECT_EQ(w["ends_at"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(w["reasons"], json(reasons));
  EXPECT_EQ(
      project_return_outlook(Viewer::buyer("by_1"), "by_1", 0, "no_returns", 0, reasons)["ends_at"],
      nullptr);
  EXPECT_EQ(project_return_outlook(Viewer::buyer("by_1"), "by_1", 7, "window_ended", 1,
                                   reasons)["returnable"],
            false);
  EXPECT_TRUE(
      project_return_outlook(Viewer::buyer("by_2"), "by_1", 7, "open", 1, reasons).is_null());
  EXPECT_TRUE(
      project_return_outlook(Viewer::seller("se_1"), "by_1", 7, "open", 1, reasons).is_null());
}

TEST(LeadCsv, ColumnsFollowTheVisibilityTable) {
  const auto seller = lead_csv_columns(Viewer::seller("se_1"));
  EXPECT_TRUE(has(seller, "payout"));
  EXPECT_TRUE(has(seller, "seller_id"));
  for (const char* f : {"buyer_id", "price", "source_code", "seller_name"})
    EXPECT_FALSE(has(seller, f)) << f;
  const auto buyer = lead_csv_columns(Viewer::buyer("by_1"));
  EXPECT_TRUE(has(buyer, "price"));
  EXPECT_TRUE(has(buyer, "source_code"));
  EXPECT_TRUE(has(buyer, "email"));
  for (const char* f : {"payout", "seller_id", "campaign_id", "seller_name"})
    EXPECT_FALSE(has(buyer, f)) << f;
  const auto named = lead_csv_columns(Viewer::buyer("by_1", true));
  EXPECT_TRUE(has(named, "seller_name"));
  EXPECT_FALSE(has(named, "payout"));
  const auto op = lead_csv_columns(Viewer{});
  EXPECT_TRUE(has(op, "payout"));
  EXPECT_TRUE(has(op, "price"));
  EXPECT_FALSE(has(op, "source_code"));
}

TEST(LeadCsv, ARowLiftsTheDistributionAndKeepsWhatTheProjectionLeftOut) {
  const json row =
      lead_csv_row({{"lead_id", "ld_1"}, {"distribution", {{"price", 12.5}, {"currency", "USD"}}}});
  EXPECT_EQ(row["price"], 12.5);
  EXPECT_FALSE(row.contains("payout"));
  EXPECT_FALSE(row.contains("distribution"));
}

}  // namespace
}  // namespace leadflow
