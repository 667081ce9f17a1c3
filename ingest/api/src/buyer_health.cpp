// The buyers' health in their views: traffic from the performance rollup (one question for
// every buyer of a list), returns from the return figures of the buyer's view.
#include "buyer_health.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {

std::optional<BuyerTraffic> buyer_traffic_24h(ReportingStore& reporting, const Clock& clock,
                                              const std::string& buyer_id) {
  const std::int64_t now = clock.now_ms();
  RollupQuery q;
  // The rollup answers whole quarter hours: those that hold any of the last 24 hours.
  q.from_ms = (now - kDayMs) / kRollupBucketMs * kRollupBucketMs;
  q.to_ms = (now / kRollupBucketMs + 1) * kRollupBucketMs;
  q.group = {ReportKey::kBuyer};
  if (!buyer_id.empty()) q.filters.emplace_back(ReportKey::kBuyer, buyer_id);
  auto cells = reporting.performance_rollup(q);
  if (!cells) return std::nullopt;
  BuyerTraffic out;
  for (auto& c : *cells)
    if (!c.keys.empty() && !c.keys.front().empty()) out[c.keys.front()] = std::move(c);
  return out;
}

nlohmann::json buyer_health_json(const std::optional<BuyerTraffic>& traffic,
                                 const std::string& buyer_id, const nlohmann::json& returns) {
  const bool returns_known = returns.is_object();
  const bool flagged = returns_known && returns.value("flagged", false);
  nlohmann::json h = {{"return_rate", returns_known ? returns["rate"] : nlohmann::json(nullptr)},
                      {"flagged", flagged}};
  if (!traffic) {
    h["status"] = "unknown";
    for (const char* k : {"pings_24h", "posts_24h", "errors_24h", "timeouts_24h", "error_rate_24h"})
      h[k] = nullptr;
    return h;
  }
  std::int64_t pings = 0, posts = 0, errors = 0, timeouts = 0;
  if (auto it = traffic->find(buyer_id); it != traffic->end()) {
    pings = it->second.figures[kPings];
    posts = it->second.figures[kPosts];
    errors = it->second.figures[kErrors];
    timeouts = it->second.figures[kTimeouts];
  }
  const std::int64_t requests = pings + posts;
  const double rate =
      requests > 0 ? static_cast<double>(errors + timeouts) / static_cast<double>(requests) : 0.0;
  h["pings_24h"] = pings;
  h["posts_24h"] = posts;
  h["errors_24h"] = errors;
  h["timeouts_24h"] = timeouts;
  h["error_rate_24h"] = requests > 0 ? nlohmann::json(rate) : nlohmann::json(nullptr);
  h["status"] = requests == 0            ? (flagged ? "degraded" : "idle")
                : rate >= 0.5            ? "failing"
                : rate >= 0.1 || flagged ? "degraded"
                                         : "healthy";
  return h;
}

}  // namespace leadflow
