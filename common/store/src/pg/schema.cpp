// The PostgreSQL schema: the step that brings a database up to date (the migrations themselves are
// in pg/migrations.cpp).
#include "pg/schema.hpp"

#include "leadflow/base/log.hpp"

#include <iterator>

#include "leadflow/store/schema_versions.hpp"
#include "pg/rollup_rows.hpp"
#include "rollup_tiers.hpp"

namespace leadflow::pg {
namespace {

using store_schema::Migration;

// Serialises migrate() across processes ("leadflow" in ASCII); transaction-scoped, so a process
// that dies mid-migration releases it with its connection.
constexpr std::int64_t kMigrationLockKey = 0x6c656164666c6f77;

}  // namespace

StoreStatus apply_migrations(Connection& c) {
  Transaction tx(c);
  // Processes starting together take turns; the later ones find nothing left to do.
  c.exec("SELECT pg_advisory_xact_lock($1::BIGINT)", Params().add(kMigrationLockKey),
         Effect::kRead);
  c.exec_script(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      "version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)",
      Effect::kRead);
  const std::int64_t current =
      c.exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", Effect::kRead).int64(0, 0);
  const auto latest = static_cast<std::int64_t>(migrations().size());
  if (current > latest) {
    // A newer binary migrated this database; running old code on it could corrupt data.
    log(LogLevel::kError, "store_schema_too_new",
        {{"schema_version", current}, {"known_version", latest}});
    return StoreStatus::kUnavailable;
  }
  for (std::int64_t v = current + 1; v <= latest; ++v) {
    c.exec_script(migrations()[v - 1].sql, Effect::kRead);  // inside the transaction
    // Rollups filled from the leads already decided, in the transaction that made them: the
    // performance rollup's buyer figures (8; its SQL carried the leads' statuses over) and the
    // unsold rollup (10).
    if (v == 8 || v == 10) backfill_rollups(c, v == 8, v == 10);
    // The tiers of what the rollups hold (12).
    if (v == 12) {
      for (const std::string& sql : store_rows::fill_tiers_sql())
        c.exec_script(sql.c_str(), Effect::kWrite);
      // Statistics now, not at autovacuum's next look: a report planned on an empty table's
      // estimates sorts on disk.
      c.exec_script("ANALYZE rollup_tiers, revenue_tiers, performance_tiers, unsold_tiers",
                    Effect::kWrite);
    }
    if (v == 18) backfill_search_keys(c);
    c.exec(
        "INSERT INTO schema_migrations (version, applied_at)"
        " VALUES ($1, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)",
        Params().add(v), Effect::kWrite);
  }
  tx.commit();
  if (latest > current)
    log(LogLevel::kInfo, "store_migrated", {{"from_version", current}, {"to_version", latest}});
  return StoreStatus::kOk;
}

}  // namespace leadflow::pg

namespace leadflow {

std::vector<std::int64_t> pg_schema_versions() {
  std::vector<std::int64_t> versions;
  for (const auto& m : pg::migrations()) versions.push_back(m.version);
  return versions;
}

}  // namespace leadflow
