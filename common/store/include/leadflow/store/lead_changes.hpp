#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// A read of the leads that changed (LeadChangesStore::list_lead_changes).
struct LeadChanges {
  std::vector<LeadRecord> leads;  // each in its state now, in the order of their last change
  std::string position;           // where the next read starts: after every change read here
  bool more = false;              // `limit` was reached: changes up to `to` remain after position
};

/// The leads that changed, for the live feed's one poller per process and a stream's resume
/// (docs/operations.md, "The live feed"). A lead changes, for this port, when it is recorded
/// and when it is decided, and each change is given a position by the store in the transaction
/// that writes it: a position says exactly which changes were committed at it, whatever the
/// clocks of the processes that wrote them or the order their transactions committed in.
/// Positions are opaque text, comparable only by the store that gave them.
class LeadChangesStore : public virtual StorePort {
 public:
  /// The store's position now: every change committed so far is at or before it.
  virtual std::optional<std::string> lead_changes_position() = 0;
  /// In one read: the leads whose last change was committed after `from` (and, when `to` is not
  /// empty, at or before `to`), oldest change first, at most `limit` of them (a transaction's
  /// changes are never split: a read may go past `limit` for one large transaction). A lead that
  /// changed twice since `from` is read once, in its state now. Records carry no attempts; a
  /// delivered or returned one carries its sales. kNotFound: `from` or `to` is not a position of
  /// this store; kUnavailable: the store cannot say.
  virtual Lookup<LeadChanges> list_lead_changes(std::string_view from, std::string_view to,
                                                int limit) = 0;
};

}  // namespace leadflow
