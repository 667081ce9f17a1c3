// A suppression list's changes in the change log (note_suppression_list_change): what the
// operator reads of a list made, replaced and deleted (its name, owner, how many entries, when
// they were replaced), by whom; never an entry, and nothing for a change that changed nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/management/suppression_lists.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json field_of(const ChangeEntry& e, const std::string& name) {
  for (const FieldChange& f : e.changes)
    if (f.field == name) return {{"before", f.before}, {"after", f.after}};
  return nullptr;
}

TEST(SuppressionChange, AListMadeReplacedAndDeletedReadsAsThreeEntries) {
  ManualClock clock;
  testing::FakeStore store{clock};
  const ChangeActor buyer{"key_1", "crm (buyer by_1)", "api"};
  SuppressionList l;
  l.id = "sup_1";
  l.buyer_id = "by_1";
  l.name = "Customers";
  l.created_at_ms = l.updated_at_ms = clock.now_ms();
  note_suppression_list_change(store, clock, buyer, "created", nullptr, &l);

  clock.advance(std::chrono::seconds(5));
  SuppressionList filled = l;
  filled.entries = 250'000;
  filled.entries_version = 1;
  filled.updated_at_ms = clock.now_ms();
  note_suppression_list_change(store, clock, buyer, "replaced", &l, &filled);
  // Replaced by the same entries at the same moment: nothing changed, nothing is written.
  note_suppression_list_change(store, clock, buyer, "replaced", &filled, &filled);
  note_suppression_list_change(store, clock, {"leadflow-admin", "leadflow-admin", "admin"},
                               "deleted", &filled, nullptr);

  const auto log = store.list_changes(ChangeQuery{});
  ASSERT_TRUE(log);
  ASSERT_EQ(log->size(), 3u);
  const ChangeEntry& deleted = (*log)[0];
  const ChangeEntry& replaced = (*log)[1];
  const ChangeEntry& created = (*log)[2];
  for (const ChangeEntry* e : {&deleted, &replaced, &created}) {
    EXPECT_EQ(e->object_kind, "suppression_list");
    EXPECT_EQ(e->object_id, "sup_1");
    EXPECT_EQ(e->object_name, "Customers");
  }
  EXPECT_EQ(created.action, "created");
  EXPECT_EQ(created.actor.name, "crm (buyer by_1)");
  EXPECT_EQ(field_of(created, "name"), json({{"before", nullptr}, {"after", "Customers"}}));
  EXPECT_EQ(field_of(created, "buyer_id"), json({{"before", nullptr}, {"after", "by_1"}}));
  EXPECT_EQ(field_of(created, "entries"), json({{"before", nullptr}, {"after", 0}}));
  EXPECT_EQ(field_of(created, "uploaded_at"), nullptr);  // null on both sides: no change
  EXPECT_EQ(field_of(created, "created_at"), nullptr);   // not a field of the log's view

  EXPECT_EQ(replaced.action, "replaced");
  EXPECT_EQ(replaced.changes.size(), 2u);
  EXPECT_EQ(field_of(replaced, "entries"), json({{"before", 0}, {"after", 250'000}}));
  EXPECT_TRUE(field_of(replaced, "uploaded_at")["before"].is_null());
  EXPECT_TRUE(field_of(replaced, "uploaded_at")["after"].is_string());

  EXPECT_EQ(deleted.action, "deleted");
  EXPECT_EQ(deleted.actor.surface, "admin");
  EXPECT_EQ(field_of(deleted, "entries"), json({{"before", 250'000}, {"after", nullptr}}));
  EXPECT_EQ(field_of(deleted, "name"), json({{"before", "Customers"}, {"after", nullptr}}));
}

TEST(SuppressionChange, TheOperatorsListIsNamedTheOperators) {
  ManualClock clock;
  testing::FakeStore store{clock};
  SuppressionList l;
  l.id = "sup_2";
  l.name = "Do not contact";
  note_suppression_list_change(store, clock, {"us_1", "Ops", "dashboard"}, "created", nullptr, &l);
  const auto log = store.list_changes(ChangeQuery{});
  ASSERT_TRUE(log);
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ(field_of((*log)[0], "buyer_id"), json({{"before", nullptr}, {"after", "operator"}}));
  EXPECT_EQ((*log)[0].actor.surface, "dashboard");
}

}  // namespace
}  // namespace leadflow
