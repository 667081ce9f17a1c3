#include <gtest/gtest.h>

#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

using Kind = SuppressionEntry::Kind;

TEST(SuppressionEntry, AnEmailOrAPhoneNormalisedAsALeadsOwn) {
  auto e = parse_suppression_entry("  Jane@Example.COM ");
  EXPECT_EQ(e.kind, Kind::kEmail);
  EXPECT_EQ(e.value, "jane@example.com");
  e = parse_suppression_entry("\"(212) 555-0123\"");
  EXPECT_EQ(e.kind, Kind::kPhone);
  EXPECT_EQ(e.value, "+12125550123");
  e = parse_suppression_entry("+1 212.555.0123");
  EXPECT_EQ(e.value, "+12125550123");
}

TEST(SuppressionEntry, ASha256MadeByTheOwnerIsKeptLowerCased) {
  const auto e =
      parse_suppression_entry("8C87B489CE35CF2E2F39F80E282CB2E804932A56A213983EEEB428407D43B52D");
  EXPECT_EQ(e.kind, Kind::kSha256);
  EXPECT_EQ(e.value, "8c87b489ce35cf2e2f39f80e282cb2e804932a56a213983eeeb428407d43b52d");
}

TEST(SuppressionEntry, AnythingElseIsNone) {
  for (const char* bad : {"", "  ", "email", "jane@", "555-0123", "\"\"",
                          "8c87b489ce35cf2e2f39f80e282cb2e804932a56a213983eeeb428407d43b52",
                          "zc87b489ce35cf2e2f39f80e282cb2e804932a56a213983eeeb428407d43b52d"})
    EXPECT_EQ(parse_suppression_entry(bad).kind, Kind::kNone) << bad;
}

}  // namespace
}  // namespace leadflow
