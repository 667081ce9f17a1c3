// A buyer's own account and return standing: the fields of them the buyer may read.
#include "leadflow/visibility/account.hpp"

#include <initializer_list>
#include <string_view>

#include "leadflow/base/time_format.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// The members of a buyer's configuration view that are its own (docs/visibility.md).
constexpr std::string_view kBuyerOwnFields[] = {"buyer_id",
                                                "name",
                                                "status",
                                                "verticals",
                                                "delivery",
                                                "pricing",
                                                "filters",
                                                "schedule",
                                                "caps",
                                                "duplicate_lookback_days",
                                                "return_window_days",
                                                "visibility",
                                                "self_service",
                                                "accepts_aged",
                                                "created_at",
                                                "updated_at",
                                                "version"};

bool own_buyer(const Viewer& viewer, const json& view) {
  return viewer.is_buyer() && view.is_object() && view.value("buyer_id", "") == viewer.buyer_id;
}

}  // namespace

json project_buyer_account(const Viewer& viewer, const json& config_view) {
  if (viewer.is_operator()) return config_view;
  if (!own_buyer(viewer, config_view)) return nullptr;
  json out = json::object();
  for (std::string_view f : kBuyerOwnFields)
    if (auto it = config_view.find(f); it != config_view.end()) out[std::string(f)] = *it;
  return out;
}

json project_return_summary(const Viewer& viewer, const json& summary) {
  if (viewer.is_operator() || !summary.is_object()) return summary;
  if (!viewer.is_buyer()) return nullptr;
  json out = json::object();
  for (const char* f : {"window_days", "sales", "returned", "rate"})
    if (auto it = summary.find(f); it != summary.end()) out[f] = *it;
  return out;
}

json project_return_outlook(const Viewer& viewer, std::string_view buyer_id, int window_days,
                            std::string_view standing, std::int64_t ends_at_ms,
                            const std::vector<std::string>& reasons) {
  if (!viewer.is_buyer() || viewer.buyer_id != buyer_id) return nullptr;
  return {{"days", window_days},
          {"ends_at", ends_at_ms > 0 ? json(format_rfc3339_ms(ends_at_ms)) : json(nullptr)},
          {"returnable", standing == "open"},
          {"standing", standing},
          {"reasons", reasons}};
}

}  // namespace leadflow
