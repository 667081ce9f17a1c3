// A seller's own account and its campaigns: the fields of them the seller may read.
#include "leadflow/visibility/seller.hpp"

#include <string>
#include <string_view>

namespace leadflow {
namespace {

using nlohmann::json;

// The members of a seller's record that are its own (docs/visibility.md).
constexpr std::string_view kSellerOwnFields[] = {"seller_id", "name",      "status",     "payout",
                                                 "test_mode", "time_zone", "created_at", "version"};

bool own(const Viewer& viewer, const json& view) {
  return viewer.is_seller() && view.is_object() && view.value("seller_id", "") == viewer.seller_id;
}

}  // namespace

json project_seller_account(const Viewer& viewer, const json& seller_view) {
  if (viewer.is_operator()) return seller_view;
  if (!own(viewer, seller_view)) return nullptr;
  json out = json::object();
  for (std::string_view f : kSellerOwnFields)
    if (auto it = seller_view.find(f); it != seller_view.end()) out[std::string(f)] = *it;
  return out;
}

json project_campaign(const Viewer& viewer, const json& campaign_view) {
  if (viewer.is_operator()) return campaign_view;
  if (!own(viewer, campaign_view)) return nullptr;
  json out = campaign_view;
  out.erase("campaign_key_hint");
  return out;
}

}  // namespace leadflow
