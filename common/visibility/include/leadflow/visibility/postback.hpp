#pragma once
// The body of a postback (docs/postbacks.md): what the event's seller may see of what happened
// to its lead, asked field by field of the one table (visibility.hpp). A seller's postback
// carries its payout and never the buyer, the bid, the price or the margin.
#include <string>

#include "leadflow/store/postbacks.hpp"

namespace leadflow {

/// The JSON body sent for `facts`, the same bytes for every attempt:
/// {"id", "type", "created_at", "data": {"lead_id", "campaign_id", "status", ...}}.
std::string postback_body(const PostbackFacts& facts);

}  // namespace leadflow
