// What a seller is told about why its lead went unsold: the operator's reasons name buyers ("no
// answer from buyer by_… to the post"), other sellers' leads ("duplicate of ld_…") and internal
// errors. A seller gets a fixed sentence per known reason and the status's general words for
// anything else, so a reason the workers add later can never reach a seller verbatim.
#include <string>
#include <string_view>

#include "leadflow/visibility/projections.hpp"

namespace leadflow {

std::string seller_reason(DeliveryStatus status, std::string_view reason) {
  struct Known {
    std::string_view reason;
    std::string_view words;
  };
  static constexpr Known kKnown[] = {
      {"no eligible buyer", "no buyer takes leads like this one now"},
      {"no bids", "no buyer bid on the lead"},
      {"every post was rejected", "no buyer accepted the lead"},
      {"auction deadline", "no buyer answered in time"},
      {"no eligible buyer had capacity", "no buyer had room for the lead"},
  };
  for (const auto& k : kKnown)
    if (reason == k.reason) return std::string(k.words);
  switch (status) {
    case DeliveryStatus::kDuplicate:
      // Not which lead: the earlier one may be another seller's.
      return "duplicate of an earlier lead";
    case DeliveryStatus::kFailed:
      return "the lead could not be distributed; the operator is looking into it";
    case DeliveryStatus::kRejected:
      return "the lead was refused";
    case DeliveryStatus::kUnsold:
      return "no buyer took the lead";
    case DeliveryStatus::kTest:
      return "a test lead: stored, and offered to no buyer";
    case DeliveryStatus::kPending:
    case DeliveryStatus::kDelivered:
    case DeliveryStatus::kReturned:
      break;
  }
  return "no reason given";
}

std::string seller_ineligibility(std::string_view reason) {
  // "…:unknown": the store could not tell; the lead was held back and tried again.
  if (reason.ends_with(":unknown")) return "a buyer's limits could not be checked in time";
  if (reason == "paused" || reason == "unhealthy") return "a buyer was not taking leads";
  if (reason == "schedule") return "outside a buyer's hours";
  if (reason.starts_with("cap:")) return "a buyer's cap was reached";
  // Which of the lead's own fields a buyer's filter turned away, so the seller can fix its
  // traffic; a custom rule's field stays unnamed (any key a buyer chose).
  if (reason == "filter:states" || reason == "filter:exclude_states")
    return "the lead's state is outside a buyer's filters";
  if (reason == "filter:zip_prefixes") return "the lead's ZIP code is outside a buyer's filters";
  if (reason == "filter:sources") return "the lead's source is outside a buyer's filters";
  if (reason.starts_with("filter:")) return "the lead did not match a buyer's filters";
  if (reason == "duplicate") return "a buyer had already bought this person";
  if (reason == "suppressed") return "a buyer asked not to be sent this person";
  if (reason == "at_capacity") return "a buyer was busy";
  if (reason == "auction_deadline") return "the auction ran out of time before a buyer's turn";
  return "a buyer could not take part";
}

}  // namespace leadflow
