#pragma once
// The rollups written with outcomes, as both stores write and read them: the performance
// rollup's columns and its row reader. What a decided lead adds to the rollups is the reports
// component's (leadflow/reports/outcome_rows.hpp); the adapters write what it computes.
#include <cstdint>
#include <string>

#include "leadflow/reports/outcome_rows.hpp"
#include "leadflow/reports/tiers.hpp"
#include "leadflow/store/store.hpp"
#include "rows.hpp"

namespace leadflow::store_rows {

// The reports component's deltas, tiers and plan, under the names the adapters use.
using namespace leadflow::reports;

inline constexpr int kFigures = kPerformanceFigures;

inline constexpr const char* kPerformanceColumns[kFigures] = {
    "leads",       "duplicates", "invalid",  "sold",     "unsold",   "failed", "pings",
    "bids",        "posts",      "accepted", "rejected", "timeouts", "errors", "responses",
    "response_ms", "h0",         "h1",       "h2",       "h3",       "h4",     "h5",
    "h6",          "h7",         "h8",       "h9",       "h10",      "h11"};

/// The figures of a row of a performance SELECT: the bucket (with by_bucket), the group keys,
/// then the figures.
template <typename Row>
PerformanceCell read_performance_cell(const Row& r, const RollupQuery& q) {
  PerformanceCell c;
  int col = 0;
  if (q.by_bucket) c.bucket_ms = r.int64(col++);
  for (std::size_t k = 0; k < q.group.size(); ++k) c.keys.push_back(r.text(col++));
  for (int i = 0; i < kFigures; ++i) c.figures[i] = r.int64(col++);
  return c;
}

/// What a lead decided before a rollup existed adds to it when the rollup is filled at its
/// migration (reports::add_backfill); a settlement that decided the lead unsold is known by the
/// reason it wrote on the lead.
inline void backfill_lead(OutcomeDeltas& d, const LeadKeys& l, const Distribution& dist,
                          bool buyers, bool unsold) {
  add_backfill(d, l, dist, dist.reason == settled_reason(false), buyers, unsold);
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
