#pragma once
// Private: the read-only `health` of the buyer views (GET /v1/buyers, GET /v1/buyers/{id}).
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "leadflow/store/reporting.hpp"

namespace leadflow {

/// Buyers' pings, posts, errors and timeouts over the quarter hours of the performance rollup
/// that cover the last 24 hours, by buyer id: one rollup question for every buyer (or, with
/// `buyer_id`, for that one). nullopt when the store cannot say.
using BuyerTraffic = std::unordered_map<std::string, PerformanceCell>;
std::optional<BuyerTraffic> buyer_traffic_24h(ReportingStore& reporting, const Clock& clock,
                                              const std::string& buyer_id = "");

/// {"status", "pings_24h", "posts_24h", "errors_24h", "timeouts_24h", "error_rate_24h",
///  "return_rate", "flagged"}. `traffic` nullopt (the store could not say) leaves the 24 h
/// figures null; `returns` is buyer_return_summary's answer (null when unknown).
///
/// error_rate_24h = (errors + timeouts) / (pings + posts), null without a request. status:
/// "idle" without a request in 24 h (unless flagged), "failing" at an error rate of 0.5 or
/// more (where the workers pause a buyer), "degraded" at 0.1 or more or when its return rate
/// is flagged, else "healthy"; "unknown" when the store could not say.
nlohmann::json buyer_health_json(const std::optional<BuyerTraffic>& traffic,
                                 const std::string& buyer_id, const nlohmann::json& returns);

}  // namespace leadflow
