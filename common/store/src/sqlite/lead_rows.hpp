#pragma once
#include <span>
#include <string>

#include "leadflow/domain/lead.hpp"
#include "leadflow/money/ledger.hpp"
#include "leadflow/store/store.hpp"
#include "performance_rows.hpp"
#include "sqlite/driver.hpp"

// The live feed's position of a lead recorded or decided now (lead_changes.cpp): one more than
// the largest given, read on leads_by_change. Writers take the database's one write lock, so
// these numbers are given in the order their transactions commit in.
#define LF_NEXT_CHANGE_SEQ \
  "(SELECT coalesce(max(changed_seq), 0) + 1 FROM leads INDEXED BY leads_by_change)"

namespace leadflow::sqlite {

/// Binds the LF_LEAD_COLUMNS (rows.hpp) of `l`, in order. `custom_fields`, the JSON text of the
/// lead's custom fields, must outlive the query.
void bind_lead(Query& q, const Lead& l, const std::string& custom_fields);

using store_rows::LeadKeys;
using store_rows::OutcomeDeltas;
using store_rows::PerformanceDeltas;
using store_rows::UnsoldDeltas;

/// Writes one outcome inside the caller's transaction: the lead's decided columns, and for a sale
/// the sales rows and their ledger entries, under a savepoint so that a lead is never marked
/// delivered without its sales; adds what it counts to the rollups' `deltas` (written by the
/// caller, once per batch). Returns SQLITE_OK with `result` set (kOk, kConflict when already
/// decided or a sale is refused, kNotFound), or the error that must abort the whole transaction.
/// `attempts` and `ineligible` are the JSON texts of the distribution's lists.
int record_outcome(Connection& c, const OutcomeRecord& o, const std::string& attempts,
                   const std::string& ineligible, StoreStatus& result, OutcomeDeltas& deltas,
                   LeadKeys& keys);

/// Appends ledger entries (leadflow/money/ledger.hpp says which a sale and a return write), in
/// order, inside the caller's transaction; the revenue rollup's trigger counts each.
int write_ledger_entries(Connection& c, std::span<const money::LedgerEntry> entries);

/// The keys the rollups count a lead under (SQLITE_NOTFOUND when there is no such lead).
int read_lead_keys(Connection& c, std::string_view lead_id, LeadKeys& keys);

/// Adds a batch's `deltas` to both rollups and to their tiers (rollup_tiers.hpp), inside the
/// caller's transaction.
int write_outcome_deltas(Connection& c, const OutcomeDeltas& deltas);

/// Fills a rollup just created by a migration from the leads already decided, inside the
/// migration's transaction (store_rows::add_backfill): `buyers` the performance rollup's buyer
/// figures, `unsold` the unsold rollup's reasons.
int backfill_rollups(Connection& c, bool buyers, bool unsold);

}  // namespace leadflow::sqlite
