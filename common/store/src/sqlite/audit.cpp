// SqliteStore: the audit port (the change log).
#include "change_rows.hpp"
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

StoreStatus SqliteStore::append_change(const ChangeEntry& e) {
  const std::string changes = dump(changes_to_json(e.changes));
  const std::string search = change_search_text(e);
  return write_one("append_change",
                   "INSERT INTO change_log (" LF_CHANGE_COLUMNS
                   ", search) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                   [&](Query& q) {
                     q.bind(e.id)
                         .bind(e.at_ms)
                         .bind(e.actor.id)
                         .bind(e.actor.name)
                         .bind(e.actor.surface)
                         .bind(e.action)
                         .bind(e.object_kind)
                         .bind(e.object_id)
                         .bind(e.object_name)
                         .bind(changes)
                         .bind(search);
                   });
}

std::optional<std::vector<ChangeEntry>> SqliteStore::list_changes(const ChangeQuery& q) {
  const std::string key = change_search_key(q.q);
  return read_rows<ChangeEntry>(
      "list_changes",
      "SELECT " LF_CHANGE_COLUMNS
      " FROM change_log"
      " WHERE (?1 = '' OR instr(search, ?1) > 0) AND (?2 = '' OR object_kind = ?2)"
      " AND (?3 = '' OR actor_id = ?3) AND (?4 = 0 OR at_ms >= ?4) AND (?5 = 0 OR at_ms < ?5)"
      " AND (?6 = '' OR id < ?6) ORDER BY id DESC LIMIT ?7",
      [&](Query& s) {
        s.bind(key)
            .bind(q.object_kind)
            .bind(q.actor)
            .bind(q.from_ms)
            .bind(q.to_ms)
            .bind(q.before_id)
            .bind(q.limit);
      },
      read_change<Query>);
}

}  // namespace leadflow::sqlite
