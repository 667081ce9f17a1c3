#pragma once
// Private: returns of bought leads (POST /v1/leads/{id}/return) and settlements; what the lead
// views show of them is projected by leadflow/visibility/projections.hpp.
#include <nlohmann/json.hpp>

#include "leadflow/api/api.hpp"
#include "leadflow/store/money.hpp"

namespace leadflow {

/// POST /v1/leads/{id}/return: by the buyer the lead was sold to (a buyer key with
/// returns:write) or the operator on its behalf.
void register_returns(Routes& routes, IngestContext& ctx);

/// POST /v1/leads/{id}/settle: the operator settles a lead whose post outcome stayed unknown.
void register_settlements(Routes& routes, IngestContext& ctx);

/// The buyer's returns over its return window, for its view: {"window_days", "sales",
/// "returned", "rate", "max_return_rate", "flagged"}; null when the store cannot say.
nlohmann::json buyer_return_summary(IngestContext& ctx, const Buyer& b);

}  // namespace leadflow
