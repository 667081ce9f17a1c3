#pragma once
// The rollups' questions and answers as plain values: what a report is cut and filtered by, the
// question asked of a rollup (RollupQuery) and the sums it answers (the cells). The store's
// reporting port reads them (leadflow/store/reporting.hpp); the plan, the tiers and the folding
// into the reader's hours and days work on them (docs/reports.md).
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/base/money.hpp"

namespace leadflow {

/// What a report is cut by, besides time (SPEC §2 Reports). kReason is the unsold rollup's
/// alone.
enum class ReportKey { kSeller, kCampaign, kBuyer, kVertical, kSource, kReason };

/// A question to a rollup: its quarter hours in [from_ms, to_ms) (both on a quarter hour), only
/// the rows matching every filter, summed per `group` keys (none: one sum) and, with
/// `by_bucket`, per time bucket: without `cuts` each quarter hour is a sum of its own; with
/// them (the instants where the caller's days or hours begin, in its time zone) no sum spans
/// a cut: the stretch between two cuts (or a cut and an end of the range) is summed in one
/// cell or several, each with a bucket_ms inside the stretch (its start, or the start of the
/// UTC hour, day or quarter hour summed), so the caller adds up the cells of a stretch. A
/// store answers from the coarsest rows that can (its tiers: whole UTC hours and days inside a
/// stretch) and reads quarter hours only at the edges.
struct RollupQuery {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::vector<std::pair<ReportKey, std::string>> filters;
  bool by_bucket = false;
  std::vector<ReportKey> group;
  std::vector<std::int64_t> cuts;
};

/// One sum of the revenue rollup: the ledger's sales and returns, by when the money moved.
struct RevenueCell {
  std::int64_t bucket_ms = 0;     // the bucket's start, with by_bucket
  std::vector<std::string> keys;  // one value per group key, in the query's order
  std::int64_t sales = 0;
  Cents revenue = 0;
  Cents payout = 0;
  std::int64_t returns = 0;
  Cents returned_revenue = 0;  // what the returns took back (positive)
  Cents returned_payout = 0;
};

/// The length of a rollup's time bucket: every time zone's midnight falls on a quarter hour.
inline constexpr std::int64_t kRollupBucketMs = 15 * 60 * 1000;

/// Second chances (docs/reoffers.md) are summed in the rollups' own tables, in bands of their
/// time axis far past any real quarter hour: band n holds what it counts at its real bucket +
/// n × kBandMs. kBandMs is a whole number of UTC days (about 91,900 years), so a band's rows
/// fall in the same tiers and stretches as the real ones, and a question of the real range
/// (every report's is under 400 days from now) never reaches a band. The revenue rollup's band
/// 1 holds the aged sales (as made) and, in its returns' columns, the returns of them (by when
/// each was returned: reports::return_bands); the unsold rollup's band 1 the leads unsold live
/// whose first re-offer ran, band 2 those of them sold aged, each under the keys and reasons the
/// live auction found.
inline constexpr std::int64_t kBandMs = std::int64_t{86'400'000} << 25;
inline constexpr int kAgedSalesBand = 1;
inline constexpr int kReofferedBand = 1;
inline constexpr int kSoldAgedBand = 2;

/// A real bucket's place in band `band`.
inline std::int64_t band_bucket(std::int64_t bucket_ms, int band) {
  return bucket_ms + band * kBandMs;
}

/// The question `q` asked of band `band`: the same range, cuts, keys and filters, moved there.
inline RollupQuery in_band(RollupQuery q, int band) {
  q.from_ms = band_bucket(q.from_ms, band);
  q.to_ms = band_bucket(q.to_ms, band);
  for (std::int64_t& cut : q.cuts) cut = band_bucket(cut, band);
  return q;
}

/// Cells read from band `band` moved back to the real quarter hours they count.
template <typename Cell>
std::vector<Cell> from_band(std::vector<Cell> cells, int band) {
  for (Cell& c : cells) c.bucket_ms -= band * kBandMs;
  return cells;
}

/// Buyers' response times are counted in fixed buckets, so that sums of them (any rows, any
/// time range) give a p95: upper edges in ms; the last bucket is open.
inline constexpr int kLatencyBuckets = 12;
inline constexpr std::int64_t kLatencyEdgesMs[kLatencyBuckets - 1] = {
    10, 25, 50, 100, 200, 300, 500, 750, 1000, 2000, 5000};
inline int latency_bucket(std::int64_t ms) {
  int i = 0;
  while (i < kLatencyBuckets - 1 && ms > kLatencyEdgesMs[i]) ++i;
  return i;
}

/// The figures of the performance rollup. A lead counts once decided, by the quarter hour it
/// was received in: under buyer "" by its status, and under each buyer asked by its pings and
/// posts (skipped ones never sent are not counted); invalid Surface B posts under buyer "".
enum PerformanceFigure {
  kLeads,
  kDuplicates,
  kInvalid,
  kSold,
  kUnsold,
  kFailed,
  kPings,
  kBids,
  kPosts,
  kAccepted,
  kRejected,
  kTimeouts,
  kErrors,
  kResponses,   // pings and posts the buyer answered (not timeouts or errors)...
  kResponseMs,  // ...and their response times summed
  kLatency0,    // kLatencyBuckets counts of those response times follow
};
inline constexpr int kPerformanceFigures = kLatency0 + kLatencyBuckets;

/// One sum of the performance rollup.
struct PerformanceCell {
  std::int64_t bucket_ms = 0;     // with by_bucket
  std::vector<std::string> keys;  // one value per group key
  std::array<std::int64_t, kPerformanceFigures> figures{};
};

/// One sum of the unsold rollup: leads decided unsold, counted under buyer "" by why the lead
/// went unsold, and under each buyer that could have had it by why that buyer did not.
struct UnsoldCell {
  std::int64_t bucket_ms = 0;     // with by_bucket
  std::vector<std::string> keys;  // one value per group key
  std::int64_t leads = 0;
};

}  // namespace leadflow
