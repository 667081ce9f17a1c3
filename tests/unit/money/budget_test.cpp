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

}  // namespace
}  // namespace leadflow::money
