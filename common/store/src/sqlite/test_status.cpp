// Migration 22 of the SQLite store: the leads' status may be `test`
// (leadflow/domain/test_mode.hpp).
#include <string>

#include "leadflow/base/log.hpp"
#include "sqlite/schema.hpp"

namespace leadflow::sqlite {

// The leads' status CHECK made to admit `test`. SQLite's documented way to change a CHECK
// constraint that admits more than before ("ALTER TABLE", section 7) is to rewrite the table's
// CREATE statement in sqlite_master under writable_schema and bump the schema version, so that
// every connection reads it again; no row is touched, as every row allowed before still is.
int allow_test_status(Connection& c) {
  std::int64_t version = 0;
  {
    Query q(c, "PRAGMA schema_version");
    const int rc = q.step();
    if (rc != SQLITE_ROW) return rc;
    version = q.int64(0);
  }
  if (int rc = c.exec("PRAGMA writable_schema = ON")) return rc;
  int rc = c.exec(
      "UPDATE sqlite_master SET sql = replace(sql, '''returned'')', '''returned'', ''test'')')"
      " WHERE type = 'table' AND name = 'leads' AND instr(sql, '''returned'')') > 0");
  bool rewritten = rc == SQLITE_OK && c.changes() == 1;
  if (rc == SQLITE_OK && !rewritten) {
    // A database whose leads were given the wider check already (its record of 22 was lost):
    // nothing to rewrite.
    Query q(c,
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'leads'"
            " AND instr(sql, '''returned'', ''test'')') > 0");
    rc = q.step();
    rewritten = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc == SQLITE_OK)
    rc = c.exec(("PRAGMA schema_version = " + std::to_string(version + 1)).c_str());
  if (int off = c.exec("PRAGMA writable_schema = OFF"); rc == SQLITE_OK) rc = off;
  if (rc == SQLITE_OK && !rewritten) {
    log(LogLevel::kError, "store_migration_failed",
        {{"schema_version", 22}, {"detail", "the leads table's status check was not found"}});
    return SQLITE_ERROR;
  }
  return rc;
}

}  // namespace leadflow::sqlite
