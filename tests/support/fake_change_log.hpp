#pragma once
// An audit port for unit tests: the change log in memory. It keeps what is appended, and answers
// a read with the entries appended, newest first, after noting the query it was asked (the
// filters are the adapters' to apply, tested against both stores in the contract suite).
#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "leadflow/store/audit.hpp"

namespace leadflow::testing {

/// Thread-safe.
class FakeChangeLog final : public AuditStore {
 public:
  bool healthy() override { return !down; }
  StoreStatus append_change(const ChangeEntry& e) override {
    std::lock_guard lock(mu_);
    if (down) return StoreStatus::kUnavailable;
    entries.push_back(e);
    return StoreStatus::kOk;
  }
  std::optional<std::vector<ChangeEntry>> list_changes(const ChangeQuery& q) override {
    std::lock_guard lock(mu_);
    asked.push_back(q);
    if (down) return std::nullopt;
    std::vector<ChangeEntry> out(entries.rbegin(), entries.rend());
    if (static_cast<int>(out.size()) > q.limit) out.resize(static_cast<std::size_t>(q.limit));
    return out;
  }

  bool down = false;                 // every call fails as with the store gone
  std::vector<ChangeEntry> entries;  // oldest first
  std::vector<ChangeQuery> asked;

 private:
  std::mutex mu_;
};

}  // namespace leadflow::testing
