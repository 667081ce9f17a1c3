#include "leadflow/suppression/suppression_lists.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace leadflow {
namespace {

// The suppression port in memory, with a switch that makes it fail as a store that is down.
class MemorySuppressionStore final : public SuppressionStore {
 public:
  bool down = false;
  int entry_reads = 0;

  bool healthy() override { return !down; }
  StoreStatus create_suppression_list(const SuppressionList& l) override {
    lists_[l.id] = {l, {}};
    return StoreStatus::kOk;
  }
  Lookup<SuppressionList> get_suppression_list(std::string_view id) override {
    const auto it = lists_.find(std::string(id));
    if (it == lists_.end()) return {StoreStatus::kNotFound, std::nullopt};
    return {StoreStatus::kOk, it->second.first};
  }
  std::optional<std::vector<SuppressionList>> list_suppression_lists(
      std::optional<std::string_view>) override {
    if (down) return std::nullopt;
    std::vector<SuppressionList> out;
    for (const auto& [id, l] : lists_) out.push_back(l.first);
    return out;
  }
  StoreStatus replace_suppression_entries(std::string_view id, std::span<const std::uint64_t> f,
                                          std::int64_t) override {
    auto& l = lists_.at(std::string(id));
    ++l.first.entries_version;
    l.first.entries = static_cast<std::int64_t>(f.size());
    l.second.assign(f.begin(), f.end());
    return StoreStatus::kOk;
  }
  std::optional<std::vector<std::uint64_t>> suppression_entries(std::string_view id,
                                                                std::int64_t version) override {
    ++entry_reads;
    const auto it = lists_.find(std::string(id));
    if (down || it == lists_.end() || it->second.first.entries_version != version)
      return std::nullopt;
    return it->second.second;
  }
  StoreStatus delete_suppression_list(std::string_view id) override {
    return lists_.erase(std::string(id)) ? StoreStatus::kOk : StoreStatus::kNotFound;
  }

 private:
  std::map<std::string, std::pair<SuppressionList, std::vector<std::uint64_t>>> lists_;
};

SuppressionList list(std::string id, std::string buyer_id) {
  SuppressionList l;
  l.id = std::move(id);
  l.buyer_id = std::move(buyer_id);
  l.name = "list";
  return l;
}

std::vector<std::uint64_t> of(std::initializer_list<std::string_view> values) {
  std::vector<std::uint64_t> out;
  for (auto v : values) out.push_back(*fingerprint_of_value(v));
  std::sort(out.begin(), out.end());
  return out;
}

const PersonFingerprints jane = person_fingerprints("jane@example.com", "+12125550123");
const PersonFingerprints joe = person_fingerprints("joe@example.com", "+13105550100");

TEST(SuppressionLists, NotKnownUntilReadWhole) {
  MemorySuppressionStore store;
  SuppressionLists lists(store);
  EXPECT_FALSE(lists.known());
  EXPECT_EQ(lists.operator_suppresses(jane), std::nullopt);
  EXPECT_EQ(lists.buyer_suppresses("by_1", jane), std::nullopt);
  EXPECT_EQ(lists.operator_listed_field("jane@example.com", ""), std::nullopt);
  store.down = true;
  EXPECT_FALSE(lists.refresh());
  EXPECT_FALSE(lists.known());
  store.down = false;
  EXPECT_TRUE(lists.refresh());
  EXPECT_TRUE(lists.known());
  EXPECT_EQ(lists.operator_suppresses(jane), false);  // no list: nobody is suppressed
}

TEST(SuppressionLists, TheOperatorsAndEachBuyersListsApart) {
  MemorySuppressionStore store;
  store.create_suppression_list(list("sup_ops", ""));
  store.replace_suppression_entries("sup_ops", of({"+12125550123"}), 0);
  store.create_suppression_list(list("sup_b1", "by_1"));
  store.replace_suppression_entries("sup_b1", of({"joe@example.com"}), 0);
  SuppressionLists lists(store);
  ASSERT_TRUE(lists.refresh());
  EXPECT_EQ(lists.operator_suppresses(jane), true);  // by her phone
  EXPECT_EQ(lists.operator_suppresses(joe), false);
  EXPECT_EQ(lists.operator_listed_field("jane@example.com", "+12125550123"), "phone");
  EXPECT_EQ(lists.operator_listed_field("joe@example.com", "+13105550100"), "");
  EXPECT_EQ(lists.buyer_suppresses("by_1", joe), true);
  EXPECT_EQ(lists.buyer_suppresses("by_1", jane), false);  // the operator's list is not by_1's
  EXPECT_EQ(lists.buyer_suppresses("by_2", joe), false);
  EXPECT_TRUE(lists.any_buyer_list());
  EXPECT_EQ(lists.held().lists, 2u);
  EXPECT_EQ(lists.held().entries, 2u);
}

TEST(SuppressionLists, ReloadsOnlyWhatChanged) {
  MemorySuppressionStore store;
  store.create_suppression_list(list("sup_b1", "by_1"));
  store.replace_suppression_entries("sup_b1", of({"joe@example.com"}), 0);
  store.create_suppression_list(list("sup_b2", "by_2"));
  SuppressionLists lists(store);
  ASSERT_TRUE(lists.refresh());
  EXPECT_EQ(store.entry_reads, 2);
  ASSERT_TRUE(lists.refresh());
  EXPECT_EQ(store.entry_reads, 2);  // nothing changed: nothing read again

  store.replace_suppression_entries("sup_b1", of({"jane@example.com"}), 0);
  ASSERT_TRUE(lists.refresh());
  EXPECT_EQ(store.entry_reads, 3);
  EXPECT_EQ(lists.buyer_suppresses("by_1", joe), false);
  EXPECT_EQ(lists.buyer_suppresses("by_1", jane), true);

  store.delete_suppression_list("sup_b1");
  ASSERT_TRUE(lists.refresh());
  EXPECT_EQ(lists.buyer_suppresses("by_1", jane), false);
}

TEST(SuppressionLists, KeepsWhatItHeldWhileTheStoreIsDown) {
  MemorySuppressionStore store;
  store.create_suppression_list(list("sup_ops", ""));
  store.replace_suppression_entries("sup_ops", of({"jane@example.com"}), 0);
  SuppressionLists lists(store);
  ASSERT_TRUE(lists.refresh());
  store.replace_suppression_entries("sup_ops", of({"joe@example.com"}), 0);
  store.down = true;
  EXPECT_FALSE(lists.refresh());
  EXPECT_TRUE(lists.known());
  EXPECT_EQ(lists.operator_suppresses(jane), true);  // the list as last read
  store.down = false;
  ASSERT_TRUE(lists.refresh());
  EXPECT_EQ(lists.operator_suppresses(jane), false);
  EXPECT_EQ(lists.operator_suppresses(joe), true);
}

}  // namespace
}  // namespace leadflow
