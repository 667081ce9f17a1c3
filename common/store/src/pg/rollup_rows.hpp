#pragma once
// The rollups written with outcomes, as PostgreSQL statements: one statement per rollup and
// batch, rows in the key's order so concurrent transactions lock them in one order.
#include "performance_rows.hpp"
#include "pg/driver.hpp"

namespace leadflow::pg {

/// The statements adding a batch's `deltas` to the rollups and their tiers (rollup_tiers.hpp),
/// one per table and in one order of tables (performance_rollup, performance_tiers,
/// unsold_rollup, unsold_tiers), each writing its rows in the key's order, so concurrent
/// transactions lock rows in one order. None for empty deltas.
std::vector<Statement> outcome_statements(const store_rows::OutcomeDeltas& deltas);

/// Fills a rollup just created by a migration from the leads already decided, inside the
/// migration's transaction on `c` (store_rows::add_backfill): `buyers` the performance rollup's
/// buyer figures, `unsold` the unsold rollup's reasons. Throws PgError as every call on `c` does.
void backfill_rollups(Connection& c, bool buyers, bool unsold);

}  // namespace leadflow::pg
