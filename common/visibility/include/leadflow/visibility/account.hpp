#pragma once
// A buyer's own account as the buyer reads it (GET /v1/account), and the return standing of its
// purchase on its lead view: what of them is the buyer's own (docs/visibility.md, "A buyer's
// own account").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// The buyer's configuration view (buyer_to_json with secrets masked, and its `version`) kept
/// to what is the buyer's own: its name, status, verticals, delivery, pricing, filters,
/// schedule, caps, return window and the operator's options about it (`visibility`,
/// `self_service`). The operator's ranking of buyers against each other (`priority`, `weight`,
/// `tier`), its capacity tuning (`max_concurrency`) and its return-rate threshold
/// (`max_return_rate`) are the operator's record and are absent. Null for any reader but that
/// buyer (or the operator, who reads it whole).
nlohmann::json project_buyer_account(const Viewer& viewer, const nlohmann::json& config_view);

/// A buyer's return summary (`returns` of GET /v1/buyers/{id}) as the buyer reads it: its own
/// sales and returns of the window, without the operator's threshold and flag.
nlohmann::json project_return_summary(const Viewer& viewer, const nlohmann::json& summary);

/// The `return_window` of a buyer's lead view: {days, ends_at, returnable, standing, reasons}
/// for the buyer that bought it (`standing`, money::to_string of its ReturnStanding: open,
/// no_returns, window_ended, returned; `ends_at_ms` 0 for none); null for every other reader.
/// `reasons` are the reason codes the server accepts.
nlohmann::json project_return_outlook(const Viewer& viewer, std::string_view buyer_id,
                                      int window_days, std::string_view standing,
                                      std::int64_t ends_at_ms,
                                      const std::vector<std::string>& reasons);

}  // namespace leadflow
