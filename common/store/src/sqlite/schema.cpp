// The SQLite schema: the step that brings a database up to date (the migrations themselves are
// in sqlite/migrations.cpp).
#include "sqlite/schema.hpp"

#include "leadflow/base/log.hpp"

#include "leadflow/store/schema_versions.hpp"
#include "rollup_tiers.hpp"
#include "sqlite/lead_rows.hpp"

namespace leadflow::sqlite {
namespace {

using store_schema::Migration;

}  // namespace

StoreStatus apply_migrations(Connection& c) {
  Transaction tx(c);
  if (int rc = tx.begin()) return report(c, rc, "migrate");
  if (int rc = c.exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                      "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"))
    return report(c, rc, "migrate");
  std::int64_t current = 0;
  {
    Query q(c, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    const int rc = q.step();
    if (rc != SQLITE_ROW) return report(c, rc, "migrate");
    current = q.int64(0);
  }
  const auto latest = static_cast<std::int64_t>(migrations().size());
  if (current > latest) {
    // A newer binary migrated this database; running old code on it could corrupt data.
    log(LogLevel::kError, "store_schema_too_new",
        {{"schema_version", current}, {"known_version", latest}});
    return StoreStatus::kUnavailable;
  }
  for (std::int64_t v = current + 1; v <= latest; ++v) {
    if (int rc = c.exec(migrations()[v - 1].sql)) return report(c, rc, "migrate");
    // Rollups filled from the leads already decided, in the transaction that made them: the
    // performance rollup's buyer figures (8; its SQL carried the leads' statuses over) and the
    // unsold rollup (10).
    if (v == 8 || v == 10)
      if (int rc = backfill_rollups(c, v == 8, v == 10)) return report(c, rc, "migrate");
    // The tiers of what the rollups hold (12).
    if (v == 12)
      for (const std::string& sql : store_rows::fill_tiers_sql())
        if (int rc = c.exec(sql.c_str())) return report(c, rc, "migrate");
    if (v == 18)
      if (int rc = backfill_search_keys(c)) return report(c, rc, "migrate");
    if (v == 22)
      if (int rc = allow_test_status(c)) return report(c, rc, "migrate");
    Query q(c,
            "INSERT INTO schema_migrations (version, applied_at) "
            "VALUES (?1, CAST(strftime('%s', 'now') AS INTEGER) * 1000)");
    if (int rc = q.bind(v).run()) return report(c, rc, "migrate");
  }
  if (int rc = tx.commit()) return report(c, rc, "migrate");
  if (latest > current)
    log(LogLevel::kInfo, "store_migrated", {{"from_version", current}, {"to_version", latest}});
  return StoreStatus::kOk;
}

}  // namespace leadflow::sqlite

namespace leadflow {

std::vector<std::int64_t> sqlite_schema_versions() {
  std::vector<std::int64_t> versions;
  for (const auto& m : sqlite::migrations()) versions.push_back(m.version);
  return versions;
}

}  // namespace leadflow
