#pragma once
// The rollups' tiers in SQL, shared by both stores. Which tiers there are, what a delta adds to
// them and the plan answering a question from them are the reports component's
// (leadflow/reports/tiers.hpp); here is only their translation: the key columns of a tier row,
// the rollup_tiers table's rows and the statements filling the tiers at their migration.
#include <string>
#include <vector>

#include "performance_rows.hpp"

namespace leadflow::store_rows {

/// A tier row's key columns (after its tier and bucket), in the tables' order, from the
/// expressions of the seller, campaign, buyer, vertical and source of what it counts, with
/// rollup_tiers joined AS t: "CASE WHEN t.seller = 1 THEN <seller> ELSE '' END, ...". Valid in
/// SQLite and PostgreSQL.
std::string tier_key_columns(const std::string (&keys)[5]);

/// The rows of rollup_tiers, as a VALUES list: (tier, grain_ms, seller, campaign, buyer,
/// vertical, source), one per tier.
std::string rollup_tier_values();

/// The statements that fill the tier tables from the quarter-hour rollups (migration 12).
std::vector<std::string> fill_tiers_sql();

/// The statements adding one aged sale (docs/reoffers.md) to the revenue rollup's band of aged
/// sales and to its tiers (leadflow/reports/rollup.hpp, kAgedSalesBand), in that order; `p`
/// names the placeholders of the sale's time, seller, campaign, buyer, vertical, source, price
/// and payout. The sale itself is in the rollup already, by its ledger entry. Valid in SQLite
/// and PostgreSQL.
std::vector<std::string> aged_sale_sql(const std::string (&p)[8]);

/// The same for one return, to band `band` (reports::return_bands): `p` names the placeholders
/// of the return's time, the sale's seller, campaign, buyer, vertical and source, and what the
/// return takes back of the price and of the payout (positive), summed in the returns' columns
/// as the revenue trigger sums a return.
std::vector<std::string> band_return_sql(int band, const std::string (&p)[8]);

}  // namespace leadflow::store_rows
