// What a buyer may change of itself: its status always, its caps and filters only where the
// operator opened them, nothing else; on plain values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "leadflow/domain/buyer_self_service.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

Buyer opened(bool caps, bool filters) {
  Buyer b;
  b.self_caps = caps;
  b.self_filters = filters;
  return b;
}

TEST(SelfChange, CapsAndFiltersPassOnlyWhereTheOperatorOpenedThem) {
  FieldErrors errors;
  EXPECT_EQ(judge_self_change({{"caps", {{"daily", 5}}}}, opened(true, false), errors).verdict,
            SelfChange::kAllowed);
  const auto closed =
      judge_self_change({{"filters", {{"states", {"CA"}}}}}, opened(true, false), errors);
  EXPECT_EQ(closed.verdict, SelfChange::kNotAllowed);
  EXPECT_EQ(closed.field, "filters");
  const auto none = judge_self_change({{"caps", nullptr}}, opened(false, true), errors);
  EXPECT_EQ(none.verdict, SelfChange::kNotAllowed);
  EXPECT_EQ(none.field, "caps");
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(
      judge_self_change({{"caps", {}}, {"filters", {}}, {"version", 3}}, opened(true, true), errors)
          .verdict,
      SelfChange::kAllowed);
}

TEST(SelfChange, AnyOtherFieldIsReadOnlyAndNamedWhateverTheBuyerMayChange) {
  FieldErrors errors;
  const json body = {
      {"caps", {{"daily", 5}}}, {"priority", 9}, {"pricing", {}}, {"status", "paused"}};
  EXPECT_EQ(judge_self_change(body, opened(true, true), errors).verdict, SelfChange::kReadOnly);
  ASSERT_EQ(errors.size(), 3u);
  for (const auto& e : errors) EXPECT_EQ(e.code, "read_only") << e.field;
  EXPECT_EQ(errors[0].field, "pricing");  // in the order of the object's keys
  // Read-only fields are judged before the operator's choice: a closed buyer still learns which.
  errors.clear();
  EXPECT_EQ(
      judge_self_change({{"self_service", {{"caps", true}}}}, opened(false, false), errors).verdict,
      SelfChange::kReadOnly);
  EXPECT_EQ(errors.at(0).field, "self_service");
  errors.clear();
  EXPECT_EQ(judge_self_change(json::array(), opened(true, true), errors).verdict,
            SelfChange::kReadOnly);
}

TEST(SelfChange, PauseAndResumeSayWhetherTheStatusMoved) {
  Buyer b;
  EXPECT_TRUE(b.active);
  EXPECT_FALSE(set_buying(b, true));
  EXPECT_TRUE(set_buying(b, false));
  EXPECT_FALSE(b.active);
  EXPECT_FALSE(set_buying(b, false));
  EXPECT_TRUE(set_buying(b, true));
  EXPECT_TRUE(b.active);
}

TEST(SelfService, IsTheOperatorsOptionRoundTrippedAndValidated) {
  FieldErrors errors;
  const Buyer none = buyer_from_json(
      {{"name", "B"},
       {"verticals", {"auto"}},
       {"delivery", {{"mode", "direct_post"}, {"post_url", "http://127.0.0.1:9/post"}}}},
      nullptr, /*allow_private_urls=*/true, errors);
  ASSERT_TRUE(errors.empty()) << errors.front().field;
  EXPECT_FALSE(none.self_caps);
  EXPECT_FALSE(none.self_filters);
  EXPECT_EQ(buyer_to_json(none, true)["self_service"], json({{"caps", false}, {"filters", false}}));
  const Buyer caps = buyer_from_json({{"self_service", {{"caps", true}}}}, &none, true, errors);
  ASSERT_TRUE(errors.empty());
  EXPECT_TRUE(caps.self_caps);
  EXPECT_FALSE(caps.self_filters);
  buyer_from_json({{"self_service", {{"caps", "yes"}, {"prices", true}}}}, &none, true, errors);
  ASSERT_EQ(errors.size(), 2u);
}

}  // namespace
}  // namespace leadflow
