#pragma once
// The performance rollup's rows, shared by both stores: what one decided lead adds to it (its
// status for the lead, and each buyer's pings and posts with their response times), summed per
// key before it is written so one statement never touches a row twice, and written in the key's
// order so concurrent transactions lock rows in one order.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "leadflow/domain/lead.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow::store_rows {

inline constexpr int kFigures = kPerformanceFigures;

inline constexpr const char* kPerformanceColumns[kFigures] = {
    "leads",       "duplicates", "invalid",  "sold",     "unsold",   "failed", "pings",
    "bids",        "posts",      "accepted", "rejected", "timeouts", "errors", "responses",
    "response_ms", "h0",         "h1",       "h2",       "h3",       "h4",     "h5",
    "h6",          "h7",         "h8",       "h9",       "h10",      "h11"};

/// A row's key: the quarter hour the lead was received in, then the report keys; buyer_id ""
/// for the lead's own figures.
using PerformanceKey =
    std::tuple<std::int64_t, std::string, std::string, std::string, std::string, std::string>;
using PerformanceFigures = std::array<std::int64_t, kFigures>;
using PerformanceDeltas = std::map<PerformanceKey, PerformanceFigures>;

/// The lead's keys, as stored.
struct LeadKeys {
  std::int64_t received_at_ms = 0;
  std::string seller_id, campaign_id, vertical, source;
};

inline PerformanceKey performance_key(const LeadKeys& l, const std::string& buyer_id) {
  return {l.received_at_ms - l.received_at_ms % kRollupBucketMs,
          l.seller_id,
          l.campaign_id,
          buyer_id,
          l.vertical,
          l.source};
}

inline PerformanceFigures& figures_of(PerformanceDeltas& d, const PerformanceKey& k) {
  auto [it, fresh] = d.try_emplace(k);
  if (fresh) it->second.fill(0);
  return it->second;
}

/// What each buyer asked adds, by its attempts.
inline void add_buyers(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist);

/// What a decided lead adds: the lead by its status, and each buyer asked by its attempts.
inline void add_outcome(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist) {
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
      break;
  }
  add_buyers(d, l, dist);
}

inline void add_buyers(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist) {
  for (const Attempt& a : dist.attempts) {
    PerformanceFigures& b = figures_of(d, performance_key(l, a.buyer_id));
    const bool ping = a.kind == AttemptKind::kPing;
    if (a.outcome == AttemptOutcome::kSkipped) continue;  // never sent
    ++b[ping ? kPings : kPosts];
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

/// A settlement moves a failed lead to sold or unsold.
inline void add_settled(PerformanceDeltas& d, const LeadKeys& l, bool sold) {
  PerformanceFigures& lead = figures_of(d, performance_key(l, ""));
  --lead[kFailed];
  ++lead[sold ? kSold : kUnsold];
}

/// The figures of a row of a performance SELECT, from column `first` on.
template <typename Row>
PerformanceCell read_performance_cell(const Row& r, const RollupQuery& q) {
  PerformanceCell c;
  int col = 0;
  if (q.by_bucket) c.bucket_ms = r.int64(col++);
  for (std::size_t k = 0; k < q.group.size(); ++k) c.keys.push_back(r.text(col++));
  for (int i = 0; i < kFigures; ++i) c.figures[i] = r.int64(col++);
  return c;
}

/// "COALESCE(SUM(c1), 0), ..." of the figures.
inline std::string performance_sums() {
  std::string out;
  for (int i = 0; i < kFigures; ++i)
    out += std::string(i ? ", " : "") + "COALESCE(SUM(" + kPerformanceColumns[i] + "), 0)";
  return out;
}

/// "c1, c2, ..." of the figures.
inline std::string performance_column_list() {
  std::string out;
  for (int i = 0; i < kFigures; ++i) out += std::string(i ? ", " : "") + kPerformanceColumns[i];
  return out;
}

/// "c1 = <table>.c1 + excluded.c1, ..." for an upsert adding to a row.
inline std::string performance_additions(const char* table) {
  std::string out;
  for (int i = 0; i < kFigures; ++i) {
    const std::string c = kPerformanceColumns[i];
    out += (i ? ", " : "") + c + " = " + (table[0] ? std::string(table) + "." : "") + c +
           " + excluded." + c;
  }
  return out;
}

}  // namespace leadflow::store_rows
