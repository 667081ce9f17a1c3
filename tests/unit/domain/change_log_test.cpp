// The change log's diff (leadflow/domain/change_log.hpp): which fields of a record's view
// changed, from what to what, and never a secret's value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/domain/change_log.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

std::vector<std::string> fields(const std::vector<FieldChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.field);
  return out;
}

TEST(ChangeLogDiff, NamesEachChangedFieldWithItsBeforeAndAfter) {
  const json before = {{"name", "Acme"}, {"status", "active"}, {"timeout_ms", 1000}};
  const json after = {{"name", "Acme"}, {"status", "paused"}, {"timeout_ms", 1500}};
  const auto changes = diff_fields(before, after);
  ASSERT_EQ(fields(changes), (std::vector<std::string>{"status", "timeout_ms"}));
  EXPECT_EQ(changes[0].before, "active");
  EXPECT_EQ(changes[0].after, "paused");
  EXPECT_EQ(changes[1].before, 1000);
  EXPECT_EQ(changes[1].after, 1500);
}

TEST(ChangeLogDiff, ComparesNestedObjectsMemberByMemberAndArraysWhole) {
  const json before = {{"payout", {{"model", "revshare"}, {"value", 70}}},
                       {"verticals", {"auto_insurance"}}};
  const json after = {{"payout", {{"model", "fixed"}, {"value", 70}}},
                      {"verticals", {"auto_insurance", "solar"}}};
  const auto changes = diff_fields(before, after);
  ASSERT_EQ(fields(changes), (std::vector<std::string>{"payout.model", "verticals"}));
  EXPECT_EQ(changes[1].before, json({"auto_insurance"}));
  EXPECT_EQ(changes[1].after, json({"auto_insurance", "solar"}));
}

TEST(ChangeLogDiff, AFieldAddedOrRemovedIsNullOnTheOtherSide) {
  const auto changes =
      diff_fields({{"ping_url", "https://a.example/ping"}}, {{"post_url", "https://a.example/p"}});
  ASSERT_EQ(fields(changes), (std::vector<std::string>{"ping_url", "post_url"}));
  EXPECT_TRUE(changes[0].after.is_null());
  EXPECT_TRUE(changes[1].before.is_null());
}

TEST(ChangeLogDiff, ACreationListsEveryFieldButTheWriteCounters) {
  const json made = {{"name", "Acme"}, {"version", 1}, {"updated_at", "2026-11-29T05:00:00Z"}};
  const auto changes = diff_fields(nullptr, made);
  ASSERT_EQ(fields(changes), std::vector<std::string>{"name"});
  EXPECT_TRUE(changes[0].before.is_null());
}

TEST(ChangeLogDiff, AnUnchangedRecordHasNoChangeThoughItsVersionMoved) {
  EXPECT_TRUE(
      diff_fields({{"name", "A"}, {"version", 1}}, {{"name", "A"}, {"version", 2}}).empty());
}

TEST(ChangeLogDiff, NeverQuotesASecretOnlyThatItChanged) {
  const json before = {
      {"delivery", {{"headers", {{"Authorization", "****abcd"}, {"X-Tier", "1"}}}}},
      {"key_hint", "lfk_AbC"},
      {"api_token", "old-token"}};
  const json after = {{"delivery", {{"headers", {{"Authorization", "****wxyz"}, {"X-Tier", "2"}}}}},
                      {"key_hint", "lfk_XyZ"},
                      {"api_token", "new-token"}};
  const auto changes = diff_fields(before, after);
  ASSERT_EQ(fields(changes),
            (std::vector<std::string>{"api_token", "delivery.headers.Authorization",
                                      "delivery.headers.X-Tier", "key_hint"}));
  EXPECT_EQ(changes[0].before, "(secret)");
  EXPECT_EQ(changes[0].after, "(secret)");
  EXPECT_EQ(changes[1].before, "(secret)");
  EXPECT_EQ(changes[1].after, "(secret)");
  EXPECT_EQ(changes[2].after, "2");        // an ordinary header is shown
  EXPECT_EQ(changes[3].after, "lfk_XyZ");  // a key's public hint is shown
  const std::string text = changes_to_json(changes).dump();
  EXPECT_EQ(text.find("new-token"), std::string::npos);
  EXPECT_EQ(text.find("wxyz"), std::string::npos);
}

TEST(ChangeLogDiff, ASecretObjectHidesEveryMemberAndASecretRemovedIsNull) {
  const auto changes =
      diff_fields({{"session", {{"id", "s1"}}}, {"password", "x"}}, {{"session", {{"id", "s2"}}}});
  ASSERT_EQ(fields(changes), (std::vector<std::string>{"password", "session.id"}));
  EXPECT_EQ(changes[0].before, "(secret)");
  EXPECT_TRUE(changes[0].after.is_null());
  EXPECT_EQ(changes[1].after, "(secret)");
}

TEST(ChangeLogDiff, ChangesRoundTripThroughTheirJson) {
  const std::vector<FieldChange> changes = {{"name", "A", "B"}, {"payout.value", 70, nullptr}};
  const auto back = changes_from_json(changes_to_json(changes));
  ASSERT_EQ(fields(back), fields(changes));
  EXPECT_EQ(back[0].after, "B");
  EXPECT_TRUE(back[1].after.is_null());
  EXPECT_TRUE(changes_from_json(json("not a list")).empty());
}

TEST(ChangeLogSearch, MatchesIdsAndNamesOfObjectAndActorInLowerCase) {
  ChangeEntry e;
  e.object_id = "by_01ABC";
  e.object_name = "Acme Leads";
  e.actor = {"us_01XYZ", "Olga", "dashboard"};
  const std::string text = change_search_text(e);
  for (std::string_view q : {"  ACME ", "by_01abc", "olga", "US_01xyz"})
    EXPECT_NE(text.find(change_search_key(q)), std::string::npos) << q;
  EXPECT_EQ(text.find(change_search_key("dashboard")), std::string::npos);
}

}  // namespace
}  // namespace leadflow
