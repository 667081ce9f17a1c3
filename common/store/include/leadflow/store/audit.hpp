#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "leadflow/domain/change_log.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// Which entries of the change log to read: newest first.
struct ChangeQuery {
  /// A part of the object's id or name, or of the actor's id or name, as change_search_key
  /// lowers it (the entry's change_search_text holds it); "" = any.
  std::string q;
  std::string object_kind;   // "" = any
  std::string actor;         // the actor's id exactly; "" = any
  std::int64_t from_ms = 0;  // at_ms >= from_ms (0 = no bound)
  std::int64_t to_ms = 0;    // at_ms < to_ms (0 = no bound)
  std::string before_id;     // cursor: only ids < this
  int limit = 50;
};

/// The audit port: the change log of the operator's records (docs/security.md). Append-only:
/// nothing changes or removes an entry. Held by `management` (writes) and `api` (reads).
class AuditStore : public virtual StorePort {
 public:
  /// Appends one entry (its id, time and fields as given). kConflict if the id exists.
  virtual StoreStatus append_change(const ChangeEntry& e) = 0;
  /// The entries `q` selects, newest (greatest id) first, at most q.limit; nullopt when the
  /// store could not read them.
  virtual std::optional<std::vector<ChangeEntry>> list_changes(const ChangeQuery& q) = 0;
};

}  // namespace leadflow
