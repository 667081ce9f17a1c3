#pragma once
#include <span>

#include "leadflow/store/store.hpp"
#include "migration.hpp"
#include "sqlite/driver.hpp"

namespace leadflow::sqlite {

/// The SQLite migrations, oldest first; entry i brings a database to version i + 1.
std::span<const store_schema::Migration> migrations();
/// Versions 20 on (migrations_later.cpp), which migrations() appends to the first ones.
std::span<const store_schema::Migration> later_migrations();

/// Applies, in one write transaction on `writer`, the migrations a database has not had yet, and
/// records them in schema_migrations. kUnavailable (logged) if the database is newer than this
/// binary or a step fails; the caller holds the writer.
StoreStatus apply_migrations(Connection& writer);

/// Gives every lead held its search keys (migration 18), keyed with the installation's secret,
/// which it makes now if no process has yet. An SQLite result code; the caller holds the
/// writer's transaction.
int backfill_search_keys(Connection& writer);

/// Makes the leads' status CHECK admit `test` (migration 22). An SQLite result code; the caller
/// holds the writer's transaction.
int allow_test_status(Connection& writer);

}  // namespace leadflow::sqlite
