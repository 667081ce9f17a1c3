// Budget and cap windows: when one more sale still fits.
#include <gtest/gtest.h>

#include "leadflow/money/budget.hpp"

namespace leadflow::money {
namespace {

TEST(Windows, ACapAdmitsItsLastLeadAndNoMore) {
  EXPECT_TRUE(window_has_room(9, window_taking(false, 2400), 10));
  EXPECT_FALSE(window_has_room(10, window_taking(false, 2400), 10));
  EXPECT_FALSE(window_has_room(0, window_taking(false, 0), 0));  // a cap of 0 admits none
}

TEST(Windows, ABudgetCountsCentsAndAdmitsASaleLandingOnIt) {
  EXPECT_EQ(window_taking(true, 2400), 2400);
  EXPECT_TRUE(window_has_room(7'600, 2'400, 10'000));
  EXPECT_FALSE(window_has_room(7'601, 2'400, 10'000));
  // Returns give their price back to the window: what is held is sales less returns.
  EXPECT_TRUE(window_has_room(10'000 - 2'400, 2'400, 10'000));
}

TEST(Windows, TheLeastASaleCanCostTheBuyer) {
  Buyer fixed;
  fixed.pricing = PricingModel::kFixed;
  fixed.price = 1'500;
  EXPECT_EQ(least_sale_price(fixed), 1'500);
  Buyer bids;
  bids.pricing = PricingModel::kBid;
  bids.min_bid = 0;
  EXPECT_EQ(least_sale_price(bids), 1);  // a bid of nothing is no sale: one cent at least
  bids.min_bid = 250;
  EXPECT_EQ(least_sale_price(bids), 250);
}

TEST(LimitWindows, EachCapAndBudgetWithItsPeriodInTheBuyersZone) {
  Buyer b;
  b.caps = {{"hourly", 3}, {"daily", 10}, {"monthly_budget_cents", 50'000}};
  b.schedule = {{"timezone", "America/New_York"}, {"hours", nullptr}};
  // 2026-11-01 12:30 local (EST since 06:00Z that day): the day that day is 25 hours long.
  const std::int64_t at = 1'793'554'200;  // 2026-11-01T17:30:00Z
  const auto w = limit_windows(b, at);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_STREQ(w[0].name, "hourly");
  EXPECT_FALSE(w[0].budget);
  EXPECT_EQ(w[0].since_ms, 1'793'552'400'000);  // 17:00Z
  EXPECT_EQ(w[0].until_ms, 1'793'556'000'000);  // 18:00Z
  EXPECT_STREQ(w[1].name, "daily");
  EXPECT_EQ(w[1].since_ms, 1'793'505'600'000);  // local midnight, 04:00Z (EDT)
  EXPECT_EQ(w[1].until_ms - w[1].since_ms, 25 * 3'600'000LL);
  EXPECT_EQ(w[1].limit, 10);
  EXPECT_STREQ(w[2].name, "monthly");
  EXPECT_TRUE(w[2].budget);
  EXPECT_EQ(w[2].limit, 50'000);
  EXPECT_EQ(w[2].since_ms, w[1].since_ms);      // the 1st
  EXPECT_EQ(w[2].until_ms, 1'796'101'200'000);  // 2026-12-01T05:00Z
  EXPECT_TRUE(limit_windows(Buyer{}, at).empty());
}

}  // namespace
}  // namespace leadflow::money
