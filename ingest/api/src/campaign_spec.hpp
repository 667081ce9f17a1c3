#pragma once
// Private: a campaign's specification, the page a seller hands to its developers
// (GET /v1/campaigns/{id}/specification, docs/api.md). Generated from the campaign's live
// configuration and its vertical; every example answer is made by the code that answers real
// posts (the validator, the refusal table, the outcome encoder), so it cannot drift from them.
#include <nlohmann/json.hpp>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/verticals.hpp"

namespace leadflow {

/// The specification of `campaign` for its seller: {campaign, authentication, endpoints,
/// fields, example_request, example_request_errors (none, unless the vertical's rules admit no
/// value), examples}. `view` is the campaign as its reader may see it (the same projection as
/// GET /v1/campaigns/{id}). Names no buyer and no price but the seller's payout. `vertical` is
/// the campaign's, or null when it is no longer configured (then only the standard fields are
/// listed).
nlohmann::json campaign_specification(nlohmann::json view, const Campaign& campaign,
                                      const Vertical* vertical, const VerticalRegistry& verticals);

}  // namespace leadflow
