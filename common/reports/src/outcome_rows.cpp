// What a decided lead adds to the performance and unsold rollups (outcome_rows.hpp).
#include "leadflow/reports/outcome_rows.hpp"

#include <utility>

#include "leadflow/domain/test_mode.hpp"

namespace leadflow::reports {
namespace {

void count_unsold(UnsoldDeltas& d, const LeadKeys& l, const std::string& buyer_id,
                  std::string reason) {
  const auto [bucket, seller, campaign, buyer, vertical, source] = performance_key(l, buyer_id);
  ++d[{bucket, seller, campaign, buyer, vertical, source, std::move(reason)}];
}

}  // namespace

PerformanceKey performance_key(const LeadKeys& l, const std::string& buyer_id) {
  return {l.received_at_ms - l.received_at_ms % kRollupBucketMs,
          l.seller_id,
          l.campaign_id,
          buyer_id,
          l.vertical,
          l.source};
}

PerformanceFigures& figures_of(PerformanceDeltas& d, const PerformanceKey& k) {
  auto [it, fresh] = d.try_emplace(k);
  if (fresh) it->second.fill(0);
  return it->second;
}

void add_outcome(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist) {
  // A test lead is in no report: not a lead received, nor anything it would have been.
  if (is_test(dist.status)) return;
  PerformanceFigures& lead = figures_of(d, performance_key(l, ""));
  ++lead[kLeads];
  switch (dist.status) {
    case DeliveryStatus::kDuplicate:
      ++lead[kDuplicates];
      break;
    case DeliveryStatus::kDelivered:
    case DeliveryStatus::kReturned:
      ++lead[kSold];
      break;
    case DeliveryStatus::kUnsold:
    case DeliveryStatus::kRejected:
      ++lead[kUnsold];
      break;
    case DeliveryStatus::kFailed:
      ++lead[kFailed];
      break;
    case DeliveryStatus::kPending:
    case DeliveryStatus::kTest:
      break;
  }
  add_buyers(d, l, dist);
}

void add_buyers(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist) {
  for (const Attempt& a : dist.attempts) {
    // A buyer asked has its row even when its attempt was never sent (a row of zeros), as the
    // rollup always kept it.
    PerformanceFigures& b = figures_of(d, performance_key(l, a.buyer_id));
    if (a.outcome == AttemptOutcome::kSkipped) continue;  // never sent
    ++b[a.kind == AttemptKind::kPing ? kPings : kPosts];
    switch (a.outcome) {
      case AttemptOutcome::kBid:
        ++b[kBids];
        break;
      case AttemptOutcome::kAccepted:
        ++b[kAccepted];
        break;
      case AttemptOutcome::kRejected:
        ++b[kRejected];
        break;
      case AttemptOutcome::kTimeout:
        ++b[kTimeouts];
        break;
      case AttemptOutcome::kError:
        ++b[kErrors];
        break;
      default:
        break;
    }
    // A response time is the buyer's answer's; a timeout's is the wait, not an answer.
    if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError) {
      ++b[kResponses];
      b[kResponseMs] += a.duration_ms;
      ++b[kLatency0 + latency_bucket(a.duration_ms)];
    }
  }
}

void add_settled(PerformanceDeltas& d, const LeadKeys& l, bool sold) {
  PerformanceFigures& lead = figures_of(d, performance_key(l, ""));
  --lead[kFailed];
  ++lead[sold ? kSold : kUnsold];
}

void add_reoffer(PerformanceDeltas& d, const LeadKeys& l, const std::vector<Attempt>& attempts,
                 bool first_sale) {
  Distribution asked;
  asked.attempts = attempts;
  add_buyers(d, l, asked);
  if (!first_sale) return;
  PerformanceFigures& lead = figures_of(d, performance_key(l, ""));
  --lead[kUnsold];
  ++lead[kSold];
}

std::vector<int> second_chance_bands(int round, std::int64_t sales_before, bool sold) {
  std::vector<int> bands;
  if (sales_before != 0) return bands;  // sold live, or by an earlier re-offer
  if (round == 1) bands.push_back(kReofferedBand);
  if (sold) bands.push_back(kSoldAgedBand);
  return bands;
}

std::vector<int> return_bands(bool sale_aged) {
  if (!sale_aged) return {};  // a live sale, or one made before sales said whether aged
  return {kAgedSalesBand};
}

void add_second_chance(UnsoldDeltas& d, const LeadKeys& l, const Distribution& lead, int band) {
  Distribution live = lead;
  std::erase_if(live.attempts, [](const Attempt& a) { return a.reoffer != 0; });
  UnsoldDeltas found;
  add_unsold(found, l, live);
  for (auto& [key, leads] : found) {
    UnsoldKey moved = key;
    std::get<0>(moved) = band_bucket(std::get<0>(key), band);
    d[std::move(moved)] += leads;
  }
}

std::string ineligibility_reason(std::string_view why) {
  if (why.starts_with("duplicate")) return "duplicate";  // "duplicate" or "duplicate of ..."
  return std::string(why.substr(0, 64));
}

std::string attempt_reason(const Attempt& a) {
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

void add_unsold(UnsoldDeltas& d, const LeadKeys& l, const Distribution& dist) {
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

void add_settled_unsold(UnsoldDeltas& d, const LeadKeys& l) {
  count_unsold(d, l, "", "settled_not_sold");
}

void add_backfill(OutcomeDeltas& d, const LeadKeys& l, const Distribution& dist,
                  bool settled_unsold, bool buyers, bool unsold) {
  if (buyers) add_buyers(d.performance, l, dist);
  if (!unsold) return;
  if (dist.status == DeliveryStatus::kUnsold && settled_unsold)
    add_settled_unsold(d.unsold, l);
  else
    add_unsold(d.unsold, l, dist);
}

}  // namespace leadflow::reports
