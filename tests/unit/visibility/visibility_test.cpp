#include "leadflow/visibility/visibility.hpp"

#include <gtest/gtest.h>

#include <set>

namespace leadflow {
namespace {

TEST(Visibility, OperatorSeesEverything) {
  const Viewer op;
  for (auto f : {FieldClass::kPerson, FieldClass::kLeadState, FieldClass::kUnsoldReason,
                 FieldClass::kBuyerIdentity, FieldClass::kBuyerMoney, FieldClass::kSellerIdentity,
                 FieldClass::kSellerMoney, FieldClass::kMargin})
    EXPECT_TRUE(may_see(op, f, "sl_a", "by_a"));
}

TEST(Visibility, SellerNeverSeesBuyersOrMargin) {
  const Viewer s = Viewer::seller("sl_a");
  EXPECT_FALSE(may_see(s, FieldClass::kBuyerIdentity, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(s, FieldClass::kBuyerMoney, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(s, FieldClass::kMargin, "sl_a", "by_a"));
  EXPECT_TRUE(may_see(s, FieldClass::kSellerMoney, "sl_a", "by_a"));
  EXPECT_TRUE(may_see(s, FieldClass::kUnsoldReason, "sl_a", ""));
  EXPECT_FALSE(may_see(s, FieldClass::kSellerMoney, "sl_b", "by_a"));
  EXPECT_FALSE(may_see(s, FieldClass::kPerson, "sl_b", ""));
}

TEST(Visibility, BuyerNeverSeesSellersPayoutOrMargin) {
  const Viewer b = Viewer::buyer("by_a");
  EXPECT_TRUE(may_see(b, FieldClass::kBuyerMoney, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(b, FieldClass::kBuyerMoney, "sl_a", "by_b"));
  EXPECT_FALSE(may_see(b, FieldClass::kSellerIdentity, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(b, FieldClass::kSellerMoney, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(b, FieldClass::kMargin, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(b, FieldClass::kUnsoldReason, "sl_a", "by_a"));
  EXPECT_TRUE(may_see(Viewer::buyer("by_a", true), FieldClass::kSellerIdentity, "sl_a", "by_a"));
  EXPECT_FALSE(may_see(Viewer::buyer("by_a", true), FieldClass::kSellerMoney, "sl_a", "by_a"));
}

TEST(Visibility, SourceCodesAreStablePerPairAndDifferPerBuyer) {
  const std::string a = source_code("secret", "by_a", "sl_1");
  EXPECT_EQ(a, source_code("secret", "by_a", "sl_1"));
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a.rfind("src_", 0), 0u);
  EXPECT_NE(a, source_code("secret", "by_b", "sl_1"));
  EXPECT_NE(a, source_code("secret", "by_a", "sl_2"));
  EXPECT_NE(a, source_code("other", "by_a", "sl_1"));
  // No concatenation ambiguity: ("by_a", "sl_1") is not ("by_as", "l_1").
  EXPECT_NE(a, source_code("secret", "by_as", "l_1"));
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i)
    seen.insert(source_code("secret", "by_a", "sl_" + std::to_string(i)));
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace leadflow
