#pragma once
// The rollups' coarser tiers and the plan that answers a report from them. The quarter-hour
// rollups hold a row per quarter hour and every seller × campaign × buyer × vertical × source
// met in it: over 30 days of a busy store that is over a million rows to read for one report.
// Beside each of them a `*_tiers` table keeps the same sums per UTC hour or UTC day, each tier
// keeping only some of the keys (the others summed away, stored as ''). They are written in the
// transaction of what they count, as the quarter-hour rows are, and a question is answered from
// the coarsest rows that can answer it exactly (plan_rollup): whole UTC days from a day tier,
// whole hours from an hour tier, quarter hours at the edges and where no tier keeps the keys
// asked. Both stores write the tiers' rows and read the plan's ranges from here; they only
// translate them into their SQL.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "leadflow/reports/outcome_rows.hpp"
#include "leadflow/reports/rollup.hpp"

namespace leadflow::reports {

inline constexpr std::int64_t kTierHourMs = 3'600'000;
inline constexpr std::int64_t kTierDayMs = 86'400'000;

/// The report keys a tier keeps, as bits. The unsold tiers also keep the reason, always.
enum TierKeys : unsigned {
  kTierSeller = 1,
  kTierCampaign = 2,
  kTierBuyer = 4,
  kTierVertical = 8,
  kTierSource = 16,
  kTierEveryKey = 31,
};

struct RollupTier {
  int id;
  std::int64_t grain_ms;
  unsigned keys;
};

/// The tiers, most preferred first for a grain (fewest rows for what they keep: a campaign
/// holds one vertical, and a seller few campaigns). Every tier keeps the seller, so a seller's
/// own reports are answered from them. The day tier keeping every key answers any question for
/// whole UTC days. The unsold rollup keeps only the tiers that keep the buyer: each of its
/// questions names one (a buyer, or "" for the leads' own reasons).
/// Changing this list needs a migration that refills the tiers (and the rollup_tiers table the
/// stores' SQL reads it from, filled from here at migration 12).
inline constexpr RollupTier kRollupTiers[] = {
    {1, kTierHourMs, kTierSeller | kTierCampaign | kTierVertical},
    {2, kTierHourMs, kTierSeller | kTierBuyer},
    {3, kTierHourMs, kTierSeller | kTierSource},
    {4, kTierDayMs, kTierSeller | kTierCampaign | kTierVertical},
    {5, kTierDayMs, kTierSeller | kTierBuyer},
    {6, kTierDayMs, kTierSeller | kTierSource},
    {7, kTierDayMs, kTierEveryKey},
};

inline bool kept_by_unsold(const RollupTier& t) { return (t.keys & kTierBuyer) != 0; }

/// A tier's row key for a quarter-hour row's key: the bucket floored to the tier's grain, the
/// keys it does not keep emptied.
PerformanceKey tier_key(const RollupTier& t, const PerformanceKey& k);

/// Tier rows, keyed (tier, row key): the tables' key order, so rows are written in one order.
using PerformanceTierDeltas = std::map<std::pair<int, PerformanceKey>, PerformanceFigures>;
using UnsoldTierDeltas = std::map<std::pair<int, UnsoldKey>, std::int64_t>;

/// What quarter-hour deltas add to the tiers (summed per tier row; rows of zeros add nothing).
PerformanceTierDeltas performance_tiers(const PerformanceDeltas& d);
UnsoldTierDeltas unsold_tiers(const UnsoldDeltas& d);

/// Where part of a question is answered: `tier` (0: the quarter-hour rollup) over the buckets
/// starting in [from_ms, to_ms).
struct RollupRange {
  int tier = 0;
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
};

/// Which rollup a plan is for: the unsold rollup keeps fewer tiers.
enum class RollupKind { kRevenue, kPerformance, kUnsold };

/// With by_bucket and cuts: where each of q's sums starts (q.from_ms, then each cut inside the
/// range), in order; a row of bucket b is summed into the last start at or before b. Empty
/// otherwise (each quarter hour a sum of its own, or one sum).
std::vector<std::int64_t> sum_starts(const RollupQuery& q);

/// The start of the sum a row of `bucket` counts in, for the `starts` of sum_starts: the last
/// start at or before it, or the bucket itself without starts.
std::int64_t sum_start_of(const std::vector<std::int64_t>& starts, std::int64_t bucket);

/// The ranges answering `q` exactly: no sum crosses one of q.cuts (with by_bucket), and every
/// range's tier keeps every key q groups or filters by. Adjacent ranges of one tier are merged.
std::vector<RollupRange> plan_rollup(const RollupQuery& q, RollupKind kind);

}  // namespace leadflow::reports
