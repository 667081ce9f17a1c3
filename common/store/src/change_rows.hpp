#pragma once
// Private: the change log's columns and row reader, shared by both adapters (as rows.hpp).
#include <nlohmann/json.hpp>

#include "leadflow/domain/change_log.hpp"

namespace leadflow::store_rows {

#define LF_CHANGE_COLUMNS                                                                   \
  "id, at_ms, actor_id, actor_name, surface, action, object_kind, object_id, object_name, " \
  "changes"

/// One entry of the change log from a row of LF_CHANGE_COLUMNS.
template <class Row>
ChangeEntry read_change(const Row& r) {
  ChangeEntry e;
  e.id = r.text(0);
  e.at_ms = r.int64(1);
  e.actor.id = r.text(2);
  e.actor.name = r.text(3);
  e.actor.surface = r.text(4);
  e.action = r.text(5);
  e.object_kind = r.text(6);
  e.object_id = r.text(7);
  e.object_name = r.text(8);
  e.changes = changes_from_json(nlohmann::json::parse(r.text(9), nullptr, false));
  return e;
}

}  // namespace leadflow::store_rows
