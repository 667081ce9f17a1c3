#pragma once
// The unsold rollup's rows, shared by both stores: why a lead no buyer took went unsold (one
// reason per lead, under buyer ""), and why each buyer that could have had it did not (one
// reason per lead and buyer), counted per quarter hour of the lead's arrival. Summed per key
// before they are written, and written in the key's order, as the performance rollup is.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "leadflow/domain/lead.hpp"
#include "leadflow/store/store.hpp"
#include "performance_rows.hpp"
#include "rows.hpp"

namespace leadflow::store_rows {

/// A row's key: the performance rollup's, then the reason.
using UnsoldKey = std::tuple<std::int64_t, std::string, std::string, std::string, std::string,
                             std::string, std::string>;
using UnsoldDeltas = std::map<UnsoldKey, std::int64_t>;

inline void count_unsold(UnsoldDeltas& d, const LeadKeys& l, const std::string& buyer_id,
                         std::string reason) {
  const auto [bucket, seller, campaign, buyer, vertical, source] = performance_key(l, buyer_id);
  ++d[{bucket, seller, campaign, buyer, vertical, source, std::move(reason)}];
}

/// A recorded ineligibility, as the rollup keeps it: the auction's reasons are short and drawn
/// from the buyers' configuration ("filter:states", "cap:daily"); anything longer is cut.
inline std::string ineligibility_reason(std::string_view why) {
  if (why.starts_with("duplicate")) return "duplicate";  // "duplicate" or "duplicate of ..."
  return std::string(why.substr(0, 64));
}

/// Why one buyer asked did not take the lead, from its last attempt (its post, if posted).
inline std::string attempt_reason(const Attempt& a) {
  if (a.kind == AttemptKind::kPost) {
    switch (a.outcome) {
      case AttemptOutcome::kRejected:
        return "refused";
      case AttemptOutcome::kTimeout:
        return "post_timeout";
      case AttemptOutcome::kSkipped:
        return "not_sent";
      default:
        return "post_error";
    }
  }
  switch (a.outcome) {
    case AttemptOutcome::kBid:
      return a.reason == "below min_bid" ? "below_min_bid" : "not_posted";
    case AttemptOutcome::kNoBid:
      return "no_bid";
    case AttemptOutcome::kTimeout:
      return "ping_timeout";
    case AttemptOutcome::kSkipped:
      return "not_sent";
    default:
      return "ping_error";
  }
}

/// What a lead decided unsold adds: its own reason (the furthest its auction got) and each
/// buyer's. Other outcomes add nothing: a sold lead was sold, a duplicate never had an auction,
/// and a failed one is not decided until it is settled.
inline void add_unsold(UnsoldDeltas& d, const LeadKeys& l, const Distribution& dist) {
  if (dist.status != DeliveryStatus::kUnsold && dist.status != DeliveryStatus::kRejected) return;
  std::map<std::string, std::string> buyers;  // buyer -> reason; its post outranks its ping
  bool posted = false, refused = false, pinged = false, answered = false, bid = false,
       usable_bid = false;
  for (const Attempt& a : dist.attempts) {
    if (a.kind == AttemptKind::kPost && a.outcome != AttemptOutcome::kSkipped) {
      posted = true;
      refused = refused || a.outcome == AttemptOutcome::kRejected;
    }
    if (a.kind == AttemptKind::kPing && a.outcome != AttemptOutcome::kSkipped) {
      pinged = true;
      answered =
          answered || a.outcome == AttemptOutcome::kNoBid || a.outcome == AttemptOutcome::kBid;
      bid = bid || a.outcome == AttemptOutcome::kBid;
      usable_bid = usable_bid || (a.outcome == AttemptOutcome::kBid && a.reason != "below min_bid");
    }
    auto [it, fresh] = buyers.try_emplace(a.buyer_id, attempt_reason(a));
    if (!fresh && a.kind == AttemptKind::kPost) it->second = attempt_reason(a);
  }
  for (const Ineligibility& i : dist.ineligible)
    buyers.try_emplace(i.buyer_id, ineligibility_reason(i.reason));

  const char* lead = posted                     ? (refused ? "refused" : "post_failed")
                     : usable_bid               ? "not_posted"
                     : bid                      ? "below_min_bid"
                     : answered                 ? "no_bid"
                     : pinged                   ? "no_answer"
                     : !dist.ineligible.empty() ? "no_eligible_buyer"
                                                : "no_buyer_in_vertical";
  count_unsold(d, l, "", lead);
  for (auto& [buyer, reason] : buyers) count_unsold(d, l, buyer, std::move(reason));
}

/// What one batch of outcomes adds to the rollups written with outcomes.
struct OutcomeDeltas {
  PerformanceDeltas performance;
  UnsoldDeltas unsold;
};

/// A settlement decided a failed lead unsold: it counts under its own reason.
inline void add_settled_unsold(UnsoldDeltas& d, const LeadKeys& l) {
  count_unsold(d, l, "", "settled_not_sold");
}

/// What a lead decided before a rollup existed adds to it when the rollup is filled from the
/// stored leads at its migration: `buyers` the performance rollup's buyer figures (the leads'
/// own were carried over in SQL), `unsold` the unsold rollup's reasons. What the outcome would
/// have added then, from what the lead's row holds now (a settled lead by its settlement).
inline void add_backfill(OutcomeDeltas& d, const LeadKeys& l, const Distribution& dist, bool buyers,
                         bool unsold) {
  if (buyers) add_buyers(d.performance, l, dist);
  if (!unsold) return;
  if (dist.status == DeliveryStatus::kUnsold && dist.reason == settled_reason(false))
    add_settled_unsold(d.unsold, l);
  else
    add_unsold(d.unsold, l, dist);
}

}  // namespace leadflow::store_rows
