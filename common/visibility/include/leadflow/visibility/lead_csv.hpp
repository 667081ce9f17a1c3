#pragma once
// The columns of a lead export (GET /v1/leads?format=csv) as its reader may see them, and a
// projected lead row flattened into them (docs/visibility.md, "Lead exports").
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// The export's columns for `viewer`, in order: the lead's state, the seller's side as the
/// reader may see it (a seller its ids; a buyer its `source_code`, and the seller's ids and name
/// only where the operator shows it names), the distribution's buyer and money as the reader
/// may see them (a seller its `payout`, never a buyer or a price; a buyer its `price`, never a
/// payout), then the person, with `erased_at` (empty unless the person was erased,
/// docs/erasure.md). A class the reader may not see is no column, not an empty one.
std::vector<std::string> lead_csv_columns(const Viewer& viewer);

/// One row of the export: a lead as project_lead gave it (LeadDetail::kRow), its distribution's
/// members lifted to the top (`buyer_id`, `price`, `payout`, `currency`, `decided_at`). Only the
/// columns of lead_csv_columns are read from it, so a member the projection left out stays out.
nlohmann::json lead_csv_row(const nlohmann::json& projected);

}  // namespace leadflow
