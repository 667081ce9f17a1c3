#pragma once
// Private: who is reading, for the visibility model (leadflow/visibility/visibility.hpp).
#include "leadflow/api/api.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/visibility/projections.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// The reader behind an authorised key (an API key, or a dashboard session acting as one). A
/// buyer's reader carries the operator's choice to show it sellers' names (its configuration's
/// visibility.seller_names); a buyer the store cannot read sees source codes, the safe default.
Viewer viewer_of(IngestContext& ctx, const ApiKey& key);

/// How `viewer` is shown sellers: the source codes' key and, for a buyer shown names, the
/// sellers' names from the store.
SellerLabels seller_labels(IngestContext& ctx, const Viewer& viewer);

}  // namespace leadflow
