// The ledger entries a sale and a return write, and what a return takes back.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "leadflow/money/ledger.hpp"
#include "leadflow/money/payout.hpp"
#include "leadflow/money/returns.hpp"

namespace leadflow::money {
namespace {

const LeadAccounts kLead{"ld_1", "sl_1", "cp_1"};

TEST(LedgerEntries, ASaleBooksItsPriceAndPayoutToItsAccounts) {
  const LedgerEntry e = sale_entry(kLead, Sale{"by_1", 2400, 1680, "ref"}, 1'000);
  EXPECT_EQ(e.kind, "sale");
  EXPECT_EQ(e.lead_id, "ld_1");
  EXPECT_EQ(e.buyer_id, "by_1");
  EXPECT_EQ(e.seller_id, "sl_1");
  EXPECT_EQ(e.campaign_id, "cp_1");
  EXPECT_EQ(e.revenue, 2400);
  EXPECT_EQ(e.payout, 1680);
  EXPECT_EQ(e.at_ms, 1'000);
  EXPECT_EQ(e.id, 0);  // the store numbers it
}

TEST(LedgerEntries, ASharedSaleBooksOneEntryPerSaleAddingUpToTheLead) {
  const PricedSales priced = price_sales({901, 800, 700}, PayoutModel{false, 7000});
  std::vector<Sale> sales = {{"by_a", 901, 0, ""}, {"by_b", 800, 0, ""}, {"by_c", 700, 0, ""}};
  for (std::size_t i = 0; i < sales.size(); ++i) sales[i].payout = priced.parts[i];
  const std::vector<LedgerEntry> entries = sale_entries(kLead, sales, 5'000);
  ASSERT_EQ(entries.size(), 3u);
  Cents revenue = 0, payout = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].buyer_id, sales[i].buyer_id);  // in the sales' order (their slots)
    EXPECT_EQ(entries[i].at_ms, 5'000);
    revenue += entries[i].revenue;
    payout += entries[i].payout;
  }
  EXPECT_EQ(revenue, priced.total);
  EXPECT_EQ(payout, priced.payout);  // to the cent, though 16.81 does not divide by the prices
}

TEST(LedgerEntries, AReturnReversesExactlyWhatTheSaleBooked) {
  const Sale sold{"by_b", 801, 561, ""};
  const LedgerEntry sale = sale_entry(kLead, sold, 1'000);
  const Reversal back = reverse({sold.price, sold.payout, 1'000});
  EXPECT_EQ(back.price, 801);
  EXPECT_EQ(back.payout, 561);
  const LedgerEntry ret = return_entry(kLead, "by_b", back.price, back.payout, 9'000);
  EXPECT_EQ(ret.kind, "return");
  EXPECT_EQ(ret.buyer_id, "by_b");
  EXPECT_EQ(ret.seller_id, "sl_1");
  EXPECT_EQ(ret.campaign_id, "cp_1");
  EXPECT_EQ(ret.at_ms, 9'000);  // booked when returned, not when sold
  EXPECT_EQ(sale.revenue + ret.revenue, 0);
  EXPECT_EQ(sale.payout + ret.payout, 0);
  EXPECT_EQ((sale.revenue - sale.payout) + (ret.revenue - ret.payout), 0);  // the margin too
}

TEST(LedgerEntries, AnOperatorsLeadIsBookedWithoutSellerOrCampaign) {
  const LedgerEntry e = sale_entry({"ld_2", "", ""}, Sale{"by_1", 1000, 0, ""}, 1);
  EXPECT_EQ(e.seller_id, "");
  EXPECT_EQ(e.campaign_id, "");
  EXPECT_EQ(e.payout, 0);
}

TEST(ReturnWindow, OpenUntilItsEndExcluded) {
  EXPECT_TRUE(return_window_open(1'000, 500, 1'000));
  EXPECT_TRUE(return_window_open(1'000, 500, 1'499));
  EXPECT_FALSE(return_window_open(1'000, 500, 1'500));
  EXPECT_FALSE(return_window_open(1'000, 0, 1'000));  // no window: nothing is returnable
}

}  // namespace
}  // namespace leadflow::money
