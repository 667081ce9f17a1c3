#pragma once
#include <span>

#include "leadflow/store/store.hpp"
#include "migration.hpp"
#include "pg/driver.hpp"

namespace leadflow::pg {

/// The PostgreSQL migrations, oldest first; entry i brings a database to version i + 1.
std::span<const store_schema::Migration> migrations();
/// Versions 20 on (migrations_later.cpp), which migrations() appends to the first ones.
std::span<const store_schema::Migration> later_migrations();

/// Applies, in one transaction on `c` and under an advisory lock (processes starting together
/// take turns), the migrations the database has not had yet, and records them in
/// schema_migrations. kUnavailable (logged) if the database is newer than this binary; a failed
/// statement throws PgError, as every call on `c` does.
StoreStatus apply_migrations(Connection& c);

/// Gives every lead held its search keys (migration 18), keyed with the installation's secret,
/// which it makes now if no process has yet; inside the caller's transaction. Throws PgError.
void backfill_search_keys(Connection& c);

}  // namespace leadflow::pg
