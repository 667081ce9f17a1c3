// The seller's payout of a sale: its rule, and a shared sale's payout spread over its sales.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "leadflow/money/payout.hpp"

namespace leadflow::money {
namespace {

TEST(SellerPayout, RevshareAndFixedNeverPayMoreThanThePrice) {
  Seller s;
  s.payout_value = 7000;  // 70%
  EXPECT_EQ(seller_payout(nullptr, &s, 2400), 1680);
  s.payout_fixed = true;
  s.payout_value = 500;
  EXPECT_EQ(seller_payout(nullptr, &s, 2400), 500);
  EXPECT_EQ(seller_payout(nullptr, &s, 300), 300);
  EXPECT_EQ(seller_payout(nullptr, nullptr, 2400), 0);  // an operator's own lead
}

TEST(SellerPayout, TheCampaignsRuleComesBeforeTheSellers) {
  Seller s;
  s.payout_value = 7000;
  Campaign c;
  c.payout_fixed = true;
  c.payout_value = 250;
  EXPECT_EQ(seller_payout(&c, &s, 2400), 250);
  const auto model = payout_model_of(&c, &s);
  ASSERT_TRUE(model.has_value());
  EXPECT_TRUE(model->fixed);
  EXPECT_FALSE(payout_model_of(nullptr, nullptr).has_value());
}

TEST(SellerPayout, RevshareRoundsHalfUpToTheCent) {
  const PayoutModel third{false, 3333};    // 33.33%
  EXPECT_EQ(payout_of(third, 1000), 333);  // 333.3
  EXPECT_EQ(payout_of(third, 1500), 500);  // 499.95 rounds up
  const PayoutModel half{false, 5000};
  EXPECT_EQ(payout_of(half, 1), 1);  // 0.5 rounds up
  EXPECT_EQ(payout_of(half, 3), 2);  // 1.5
  EXPECT_EQ(payout_of(std::nullopt, 1000), 0);
}

TEST(PriceSales, TotalPayoutAndPartsOfASharedSale) {
  // Three buyers at 9.01, 8.00 and 7.00; 70% revshare on the total 24.01 is 16.807 -> 16.81.
  const PricedSales priced = price_sales({901, 800, 700}, PayoutModel{false, 7000});
  EXPECT_EQ(priced.total, 2401);
  EXPECT_EQ(priced.payout, 1681);
  EXPECT_EQ(priced.parts, (std::vector<Cents>{631, 560, 490}));
  // One buyer: the whole payout is its part.
  const PricedSales one = price_sales({2400}, PayoutModel{true, 500});
  EXPECT_EQ(one.payout, 500);
  EXPECT_EQ(one.parts, (std::vector<Cents>{500}));
}

TEST(SplitPayout, PartsFollowThePricesAndAddUpToTheCent) {
  EXPECT_EQ(split_payout({900, 800, 700}, 1680), (std::vector<Cents>{630, 560, 490}));
  // 1681 over 901 / 800 / 700 is 630.84 / 560.10 / 490.06: the cent left goes to the first.
  const auto parts = split_payout({901, 800, 700}, 1681);
  EXPECT_EQ(parts[1], 560);
  EXPECT_EQ(parts[2], 490);
  EXPECT_EQ(parts[0], 631);
  EXPECT_EQ(split_payout({1000}, 700), (std::vector<Cents>{700}));
  EXPECT_TRUE(split_payout({}, 0).empty());
  EXPECT_EQ(split_payout({0, 0}, 0), (std::vector<Cents>{0, 0}));
  // A fixed payout near the total: the cheap sale's part stays within its price.
  EXPECT_EQ(split_payout({1, 100, 100}, 200), (std::vector<Cents>{1, 100, 99}));
}

TEST(SplitPayout, AddsUpExactlyOverRandomSales) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    std::vector<Cents> prices(1 + rng() % 20);
    for (auto& p : prices) p = 1 + static_cast<Cents>(rng() % 100'000);
    const Cents total = std::accumulate(prices.begin(), prices.end(), Cents{0});
    const Cents payout = static_cast<Cents>(rng() % static_cast<std::uint64_t>(total + 1));
    const auto parts = split_payout(prices, payout);
    ASSERT_EQ(parts.size(), prices.size());
    EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), Cents{0}), payout);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      EXPECT_GE(parts[i], 0);
      EXPECT_LE(parts[i], prices[i]) << "a part above its sale's price";
    }
  }
}

}  // namespace
}  // namespace leadflow::money
