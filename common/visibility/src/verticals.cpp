// A vertical's settings: the members of them each party reads (docs/visibility.md, "Verticals").
#include "leadflow/visibility/verticals.hpp"

#include <algorithm>

namespace leadflow {
namespace {

using nlohmann::json;

// Every member VerticalRegistry::to_json writes: the operator reads the view whole, with where
// the re-offer policy comes from (configured, or set by the operator, and when) and the version
// of the operator's setting, which only the operator changes.
constexpr std::string_view kOperator[] = {
    "vertical", "fields",         "duplicate_lookback_days", "max_sales",      "consent_days",
    "reoffer",  "reoffer_source", "configured_reoffer",      "reoffer_set_at", "reoffer_version"};
// What a seller needs to post (the fields, which of them are required), when its post is a
// duplicate of an earlier one (the lookback: a number, naming no earlier seller), and whether
// and until when its unsold leads may be offered again (its payout may come later: the policy in
// force, not where it comes from). Not `max_sales`: how many buyers may share a lead is how
// buyers buy it.
constexpr std::string_view kSeller[] = {"vertical", "fields", "duplicate_lookback_days",
                                        "consent_days", "reoffer"};
// What shapes a buyer's purchases: the fields it is sent, whether a lead may be shared and with
// how many, and how old an aged lead may be (the re-offer delays and window, the consent
// window). Not the intake's `duplicate_lookback_days`: it judges sellers' posts; the buyer's own
// lookback is on its account.
constexpr std::string_view kBuyer[] = {"vertical", "fields", "max_sales", "consent_days",
                                       "reoffer"};

}  // namespace

std::span<const std::string_view> vertical_members(Party party) {
  switch (party) {
    case Party::kSeller:
      return kSeller;
    case Party::kBuyer:
      return kBuyer;
    case Party::kOperator:
      break;
  }
  return kOperator;
}

bool may_read_vertical(const Viewer& viewer, std::string_view name,
                       const std::vector<std::string>& buyer_verticals) {
  if (!viewer.is_buyer()) return true;
  return std::find(buyer_verticals.begin(), buyer_verticals.end(), name) != buyer_verticals.end();
}

static json only_members(const json& vertical_view, Party party) {
  json out = json::object();
  for (std::string_view m : vertical_members(party))
    if (auto it = vertical_view.find(m); it != vertical_view.end()) out[std::string(m)] = *it;
  return out;
}

json project_vertical(const Viewer& viewer, const json& vertical_view,
                      const std::vector<std::string>& buyer_verticals) {
  if (!vertical_view.is_object()) return nullptr;
  if (viewer.is_operator()) return vertical_view;
  if (!may_read_vertical(viewer, vertical_view.value("vertical", ""), buyer_verticals))
    return nullptr;
  return only_members(vertical_view, viewer.party);
}

json public_vertical(const json& vertical_view) {
  if (!vertical_view.is_object()) return nullptr;
  return only_members(vertical_view, Party::kSeller);
}

}  // namespace leadflow
