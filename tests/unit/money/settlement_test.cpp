// A settlement's sale: the seller paid by its rule on the lead's whole total, share by share.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "leadflow/money/payout.hpp"
#include "leadflow/money/settlement.hpp"

namespace leadflow::money {
namespace {

PayoutOfTotal rule(PayoutModel model) {
  return [model](Cents total) { return payout_of(model, total); };
}

TEST(SettleSold, TheFirstSaleOfALeadNamesItsBuyer) {
  const SettledSale s = settle_sold({}, 2400, rule({false, 7000}));
  EXPECT_EQ(s.slot, 0);
  EXPECT_TRUE(s.first);
  EXPECT_EQ(s.price, 2400);
  EXPECT_EQ(s.payout, 1680);
  EXPECT_EQ(s.lead_price, 2400);
  EXPECT_EQ(s.lead_payout, 1680);
}

TEST(SettleSold, ALaterShareAddsWhatTheTotalsPayoutGrowsBy) {
  // A share already sold at 9.01 paying 6.31 (70% rounded); settling 8.00 more: 70% of 17.01
  // is 11.907 -> 11.91, so this share carries 5.60.
  const SettledSale s = settle_sold({1, 901, 631}, 800, rule({false, 7000}));
  EXPECT_EQ(s.slot, 1);
  EXPECT_FALSE(s.first);
  EXPECT_EQ(s.payout, 560);
  EXPECT_EQ(s.lead_price, 1701);
  EXPECT_EQ(s.lead_payout, 1191);
}

TEST(SettleSold, SharesInAnyOrderPayTheRuleOnTheTotalToTheCent) {
  // Revshare at an awkward rate, and a fixed payout the later shares add nothing to.
  for (const PayoutModel model : {PayoutModel{false, 3333}, PayoutModel{true, 500}}) {
    std::vector<Cents> prices = {333, 101, 7, 2500};
    std::sort(prices.begin(), prices.end());
    do {
      SalesHeld held;
      for (Cents p : prices) {
        const SettledSale s = settle_sold(held, p, rule(model));
        EXPECT_EQ(s.slot, held.count);
        EXPECT_EQ(s.lead_payout, held.payout + s.payout);
        held = {held.count + 1, s.lead_price, s.lead_payout};
      }
      EXPECT_EQ(held.revenue, 2941);
      EXPECT_EQ(held.payout, payout_of(model, 2941));
    } while (std::next_permutation(prices.begin(), prices.end()));
  }
}

}  // namespace
}  // namespace leadflow::money
