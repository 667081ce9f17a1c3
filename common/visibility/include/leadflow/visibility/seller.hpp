#pragma once
// A seller's own account as the seller reads it (GET /v1/account), and a campaign as each reader
// reads it (GET /v1/campaigns, /v1/campaigns/{id}): what of them is the seller's own
// (docs/visibility.md, "A seller's own account").
#include <nlohmann/json.hpp>

#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// The seller's record (seller_to_json) kept to what is the seller's own: its id, name, status,
/// payout rule, test mode, the zone its statements are cut in, when it was made and its version.
/// Everything of it is the seller's own today; the list is explicit so that a field the operator
/// adds to its record later stays the operator's until it is listed here. Null for any reader but
/// that seller (or the operator, who reads it whole).
nlohmann::json project_seller_account(const Viewer& viewer, const nlohmann::json& seller_view);

/// A campaign (campaign_to_json) as `viewer` reads it: the operator whole; its seller without any
/// part of the campaign key (not even the hint); null for a buyer or another seller (a campaign
/// is how a seller posts, nothing of a buyer's).
nlohmann::json project_campaign(const Viewer& viewer, const nlohmann::json& campaign_view);

}  // namespace leadflow
