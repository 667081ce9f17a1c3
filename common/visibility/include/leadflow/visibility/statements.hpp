#pragma once
// A statement and a close as their reader may see them (docs/visibility.md, "Statements"): a
// buyer its purchases at its prices, never a seller's payout or the margin; a seller its payouts,
// never a buyer or a price; the operator both sides and the margin.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/store/statements.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// Whether `viewer` may read the statement of `account_id` as `party`: the operator any, a buyer
/// only its own buyer statement, a seller only its own seller statement.
bool may_read_statement(const Viewer& viewer, money::Party party, std::string_view account_id);

/// The statement as `viewer` reads it: its period, zone and bounds, status (open or closed, and
/// when), totals and lines, each field by its class (a line's price `amount` is the buyer's
/// money, its `payout` the seller's, its `margin` the operator's). Null when not the viewer's.
/// A closed statement's totals are those its close froze.
nlohmann::json project_statement(const Viewer& viewer, const StatementRead& read);

/// The CSV of a statement for `viewer`: the columns of its lines the viewer may see, in order.
std::vector<std::string> statement_csv_columns(const Viewer& viewer, money::Party party);

/// A close as `viewer` reads it: the period and when it was closed, for every reader; who closed
/// it and the frozen totals (`totals`: every account's, with its margin) for the operator only.
nlohmann::json project_close(const Viewer& viewer, const money::Close& close,
                             const std::vector<money::FrozenTotals>* totals);

}  // namespace leadflow
