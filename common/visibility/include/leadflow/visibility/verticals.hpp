#pragma once
// A vertical's settings (LEADFLOW_VERTICALS, as VerticalRegistry::to_json writes them) as each
// party reads them (GET /v1/verticals, /v1/verticals/{name}; docs/visibility.md, "Verticals"):
// the operator every setting, a seller what it needs to post and whether its unsold leads may
// be sold later, a buyer the verticals it buys and what shapes its purchases.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// The members of a vertical's view `party` reads, in the answer's order. The operator's is the
/// whole view. A seller's: `vertical`, `fields`, `duplicate_lookback_days` (intake dedupe: when
/// its post is a duplicate), `consent_days` and `reoffer` (until when its unsold leads may still
/// be sold). A buyer's: `vertical`, `fields`, `max_sales` (whether it buys exclusively or a
/// share), `consent_days` and `reoffer` (how old an aged lead it is offered may be). Each list
/// is explicit, so a member the registry's view gains later is the operator's until listed.
std::span<const std::string_view> vertical_members(Party party);

/// Whether `viewer` reads the vertical `name`: the operator and a seller every vertical (a seller
/// may post to any); a buyer only those of its own configuration (`buyer_verticals`).
bool may_read_vertical(const Viewer& viewer, std::string_view name,
                       const std::vector<std::string>& buyer_verticals);

/// The vertical's view (VerticalRegistry::to_json) as `viewer` reads it: the operator whole,
/// a seller or a buyer only its members (vertical_members); null when it may not read it
/// (may_read_vertical).
nlohmann::json project_vertical(const Viewer& viewer, const nlohmann::json& vertical_view,
                                const std::vector<std::string>& buyer_verticals);

/// The vertical's view as Surface B publishes it without a key (GET /api/v1/fields/{vertical},
/// for sellers' developers): a seller's members (vertical_members(Party::kSeller)), so the
/// world reads no more than any seller does; never `max_sales`, which is how buyers buy.
nlohmann::json public_vertical(const nlohmann::json& vertical_view);

}  // namespace leadflow
