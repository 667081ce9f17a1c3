// Who returns a lead, and a buyer's return window: on plain values, with no store.
#include <gtest/gtest.h>

#include "leadflow/money/returns.hpp"

namespace leadflow::money {
namespace {

Distribution sold_to(std::vector<std::string> buyers) {
  Distribution d;
  d.status = DeliveryStatus::kDelivered;
  d.buyer_id = buyers.front();
  for (auto& b : buyers) d.sales.push_back(Sale{std::move(b), 1000, 700, ""});
  return d;
}

TEST(ReturnerOf, ABuyerReturnsOnlyALeadItBought) {
  const Distribution shared = sold_to({"by_1", "by_2"});
  EXPECT_EQ(returner_of(shared, "by_2", "").status, ReturnerStatus::kFound);
  EXPECT_EQ(returner_of(shared, "by_2", "").buyer_id, "by_2");
  EXPECT_EQ(returner_of(shared, "by_3", "").status, ReturnerStatus::kNotBought);
  // An outcome recorded with no sales but its summary stands for one sale to its buyer.
  Distribution summary;
  summary.buyer_id = "by_1";
  EXPECT_EQ(returner_of(summary, "by_1", "").status, ReturnerStatus::kFound);
  EXPECT_EQ(returner_of(Distribution{}, "by_1", "").status, ReturnerStatus::kNotBought);
}

TEST(ReturnerOf, TheOperatorReturnsForTheBuyerItNamesOrTheLeadsOnlyOne) {
  EXPECT_EQ(returner_of(sold_to({"by_1"}), "", "").buyer_id, "by_1");
  EXPECT_EQ(returner_of(sold_to({"by_1", "by_2"}), "", "").status, ReturnerStatus::kBuyerNeeded);
  const Returner named = returner_of(sold_to({"by_1", "by_2"}), "", "by_2");
  EXPECT_EQ(named.status, ReturnerStatus::kFound);
  EXPECT_EQ(named.buyer_id, "by_2");
  // A named buyer that did not buy the lead is the store's to refuse, in its transaction.
  EXPECT_EQ(returner_of(sold_to({"by_1"}), "", "by_9").buyer_id, "by_9");
  EXPECT_EQ(returner_of(Distribution{}, "", "").status, ReturnerStatus::kNotSold);
}

TEST(ReturnWindow, IsTheBuyersDaysAndZeroMeansNoReturns) {
  EXPECT_EQ(return_window_ms(0), 0);
  EXPECT_EQ(return_window_ms(7), 7 * 86'400'000LL);
  // 400 days does not overflow an int.
  EXPECT_EQ(return_window_ms(400), 400 * 86'400'000LL);
  EXPECT_TRUE(return_window_open(1'000, return_window_ms(1), 1'000 + 86'399'999));
  EXPECT_FALSE(return_window_open(1'000, return_window_ms(1), 1'000 + 86'400'000));
}

TEST(ReturnOutlook, TellsWhenTheWindowEndsAndWhyAReturnWouldBeRefused) {
  constexpr std::int64_t kSold = 1'700'000'000'000;
  const std::int64_t end = kSold + return_window_ms(7);
  const ReturnOutlook open = return_outlook(7, kSold, false, end - 1);
  EXPECT_EQ(open.standing, ReturnStanding::kOpen);
  EXPECT_EQ(open.window_ends_at_ms, end);
  // Its end excluded, as a return meets it (return_window_open).
  EXPECT_EQ(return_outlook(7, kSold, false, end).standing, ReturnStanding::kWindowEnded);
  EXPECT_EQ(return_outlook(7, kSold, false, end).window_ends_at_ms, end);
  EXPECT_EQ(return_outlook(7, kSold, true, kSold).standing, ReturnStanding::kReturned);
  const ReturnOutlook none = return_outlook(0, kSold, false, kSold);
  EXPECT_EQ(none.standing, ReturnStanding::kNoReturns);
  EXPECT_EQ(none.window_ends_at_ms, 0);
  EXPECT_EQ(to_string(ReturnStanding::kWindowEnded), "window_ended");
  EXPECT_EQ(to_string(ReturnStanding::kNoReturns), "no_returns");
}

}  // namespace
}  // namespace leadflow::money
