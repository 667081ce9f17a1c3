// PgStore: the audit port (the change log).
#include "change_rows.hpp"
#include "pg/adapter.hpp"

namespace leadflow::pg {

StoreStatus PgStore::append_change(const ChangeEntry& e) {
  return write("append_change",
               "INSERT INTO change_log (" LF_CHANGE_COLUMNS
               ", search) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
               Params()
                   .add(e.id)
                   .add(e.at_ms)
                   .add(e.actor.id)
                   .add(e.actor.name)
                   .add(e.actor.surface)
                   .add(e.action)
                   .add(e.object_kind)
                   .add(e.object_id)
                   .add(e.object_name)
                   .add(dump(changes_to_json(e.changes)))
                   .add(change_search_text(e)));
}

std::optional<std::vector<ChangeEntry>> PgStore::list_changes(const ChangeQuery& q) {
  return read_rows<ChangeEntry>(
      "list_changes",
      "SELECT " LF_CHANGE_COLUMNS
      " FROM change_log"
      " WHERE ($1 = '' OR strpos(search, $1) > 0) AND ($2 = '' OR object_kind = $2)"
      " AND ($3 = '' OR actor_id = $3) AND ($4::BIGINT = 0 OR at_ms >= $4::BIGINT)"
      " AND ($5::BIGINT = 0 OR at_ms < $5::BIGINT) AND ($6 = '' OR id < $6)"
      " ORDER BY id DESC LIMIT $7::BIGINT",
      Params()
          .add(change_search_key(q.q))
          .add(q.object_kind)
          .add(q.actor)
          .add(q.from_ms)
          .add(q.to_ms)
          .add(q.before_id)
          .add(q.limit),
      read_change<Row>);
}

}  // namespace leadflow::pg
