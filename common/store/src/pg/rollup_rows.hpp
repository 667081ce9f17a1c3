#pragma once
// The rollups written with outcomes, as PostgreSQL statements: one statement per rollup and
// batch, rows in the key's order so concurrent transactions lock them in one order.
#include "pg/driver.hpp"
#include "unsold_rows.hpp"

namespace leadflow::pg {

/// Adds `deltas` to the performance rollup.
Statement performance_statement(const store_rows::PerformanceDeltas& deltas);

/// Adds `deltas` to the unsold rollup.
Statement unsold_statement(const store_rows::UnsoldDeltas& deltas);

/// Fills a rollup just created by a migration from the leads already decided, inside the
/// migration's transaction on `c` (store_rows::add_backfill): `buyers` the performance rollup's
/// buyer figures, `unsold` the unsold rollup's reasons. Throws PgError as every call on `c` does.
void backfill_rollups(Connection& c, bool buyers, bool unsold);

}  // namespace leadflow::pg
