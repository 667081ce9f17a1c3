#pragma once
// Private: returns of bought leads (POST /v1/leads/{id}/return), and what the lead and buyer
// views show of returns and the ledger.
#include <nlohmann/json.hpp>

#include "leadflow/api/api.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow {

/// POST /v1/leads/{id}/return: by the buyer the lead was sold to (a buyer key with
/// returns:write) or the operator on its behalf.
void register_returns(Routes& routes, IngestContext& ctx);

/// POST /v1/leads/{id}/settle: the operator settles a lead whose post outcome stayed unknown.
void register_settlements(Routes& routes, IngestContext& ctx);

nlohmann::json return_to_json(const LeadReturn& r);
nlohmann::json settlement_to_json(const Settlement& s);
nlohmann::json ledger_entry_to_json(const LedgerEntry& e);

/// The buyer's returns over its return window, for its view: {"window_days", "sales",
/// "returned", "rate", "max_return_rate", "flagged"}; null when the store cannot say.
nlohmann::json buyer_return_summary(IngestContext& ctx, const Buyer& b);

}  // namespace leadflow
