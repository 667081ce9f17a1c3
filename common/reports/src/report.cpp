// The revenue, performance and unsold reports on plain values (report.hpp).
#include "leadflow/reports/report.hpp"

#include <algorithm>
#include <cmath>

namespace leadflow::reports {
namespace {

using Folded = std::pair<std::int64_t, std::vector<std::string>>;  // (stretch start, keys)

// Folds `cells` into rows per stretch of r.time and keys, in that order, adding each cell kept
// by `keep` with `add(sums, cell)`.
template <typename Sums, typename Cell, typename Keep, typename Add>
std::vector<ReportRow<Sums>> fold(const ReportRequest& r, const std::vector<Cell>& cells, Keep keep,
                                  Add add) {
  std::map<Folded, ReportRow<Sums>> folded;
  for (const Cell& c : cells) {
    if (!keep(c)) continue;
    Stretch when;
    if (r.time != TimeCut::kNone) when = stretch_of(*r.tz, r.time, c.bucket_ms);
    ReportRow<Sums>& row = folded[{when.start_ms, c.keys}];
    row.stretch = std::move(when);
    add(row.sums, c);
  }
  std::vector<ReportRow<Sums>> rows;
  rows.reserve(folded.size());
  for (auto& [at, row] : folded) {
    row.keys = at.second;
    rows.push_back(std::move(row));
  }
  return rows;
}

bool has(const std::vector<ReportKey>& keys, ReportKey k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

bool filtered_by(const std::vector<std::pair<ReportKey, std::string>>& filters, ReportKey k) {
  return std::any_of(filters.begin(), filters.end(), [k](const auto& f) { return f.first == k; });
}

std::optional<double> rate(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return std::nullopt;
  return std::round(static_cast<double>(part) * 10000.0 / static_cast<double>(whole)) / 10000.0;
}

}  // namespace

RollupQuery rollup_query(const ReportRequest& r) {
  RollupQuery q;
  q.from_ms = r.from_ms;
  q.to_ms = r.to_ms;
  q.filters = r.filters;
  q.by_bucket = r.time != TimeCut::kNone;
  q.group = r.keys;
  if (q.by_bucket) q.cuts = stretch_cuts(*r.tz, r.time, r.from_ms, r.to_ms);
  return q;
}

void RevenueSums::add(const RevenueCell& c) {
  sales += c.sales;
  returns += c.returns;
  revenue += c.revenue;
  payout += c.payout;
  returned_revenue += c.returned_revenue;
  returned_payout += c.returned_payout;
}

std::optional<Cents> RevenueSums::avg_price() const {
  if (sales <= 0) return std::nullopt;
  return (revenue + sales / 2) / sales;
}

RevenueReport fold_revenue(const ReportRequest& r, const std::vector<RevenueCell>& cells) {
  RevenueReport out;
  out.rows = fold<RevenueSums>(
      r, cells, [](const RevenueCell&) { return true; },
      [](RevenueSums& s, const RevenueCell& c) { s.add(c); });
  for (const RevenueCell& c : cells) out.total.add(c);
  return out;
}

void PerformanceSums::add(const PerformanceCell& c) {
  for (int i = 0; i < kPerformanceFigures; ++i) f[i] += c.figures[i];
}

std::optional<double> PerformanceSums::acceptance_rate(bool leads) const {
  return leads ? rate(f[kSold], f[kSold] + f[kUnsold] + f[kFailed]) : rate(f[kAccepted], f[kPosts]);
}

std::optional<std::int64_t> PerformanceSums::avg_response_ms() const {
  if (f[kResponses] <= 0) return std::nullopt;
  return std::llround(static_cast<double>(f[kResponseMs]) / static_cast<double>(f[kResponses]));
}

std::optional<std::int64_t> PerformanceSums::p95_response_ms() const {
  const std::int64_t n = f[kResponses];
  if (n <= 0) return std::nullopt;
  const std::int64_t rank = (95 * n + 99) / 100;  // the ceil(0.95 n)-th answer
  std::int64_t seen = 0;
  for (int i = 0; i < kLatencyBuckets; ++i) {
    seen += f[kLatency0 + i];
    if (seen >= rank)
      return i < kLatencyBuckets - 1 ? std::optional<std::int64_t>(kLatencyEdgesMs[i])
                                     : std::nullopt;
  }
  return std::nullopt;
}

PerformanceReport fold_performance(const ReportRequest& r,
                                   const std::vector<PerformanceCell>& cells) {
  PerformanceReport out;
  const auto by_buyer = std::find(r.keys.begin(), r.keys.end(), ReportKey::kBuyer);
  const bool buyer_cut = by_buyer != r.keys.end();
  const std::size_t buyer_at = static_cast<std::size_t>(by_buyer - r.keys.begin());
  const bool buyer_filtered = filtered_by(r.filters, ReportKey::kBuyer);
  out.rows = fold<PerformanceSums>(
      r, cells, [&](const PerformanceCell& c) { return !buyer_cut || !c.keys[buyer_at].empty(); },
      [](PerformanceSums& s, const PerformanceCell& c) { s.add(c); });
  for (const PerformanceCell& c : cells) out.total.add(c);
  out.rows_count_leads = !buyer_cut && !buyer_filtered;
  out.total_counts_leads = !buyer_filtered;
  return out;
}

RollupQuery unsold_query(const ReportRequest& r) {
  RollupQuery q = rollup_query(r);
  if (!has(q.group, ReportKey::kReason)) q.group.push_back(ReportKey::kReason);
  if (!has(q.group, ReportKey::kBuyer) && !filtered_by(q.filters, ReportKey::kBuyer))
    q.filters.push_back({ReportKey::kBuyer, ""});  // the leads' own reasons
  return q;
}

UnsoldReport fold_unsold(const ReportRequest& r, const std::vector<UnsoldCell>& cells) {
  const RollupQuery q = unsold_query(r);
  UnsoldReport out;
  out.keys = q.group;
  const auto by_buyer = std::find(q.group.begin(), q.group.end(), ReportKey::kBuyer);
  const bool buyer_cut = by_buyer != q.group.end();
  const std::size_t buyer_at = static_cast<std::size_t>(by_buyer - q.group.begin());
  const std::size_t reason_at = static_cast<std::size_t>(
      std::find(q.group.begin(), q.group.end(), ReportKey::kReason) - q.group.begin());
  out.counts_buyers = buyer_cut || filtered_by(r.filters, ReportKey::kBuyer);
  const auto keep = [&](const UnsoldCell& c) { return !buyer_cut || !c.keys[buyer_at].empty(); };
  out.rows = fold<std::int64_t>(r, cells, keep,
                                [](std::int64_t& leads, const UnsoldCell& c) { leads += c.leads; });
  for (const UnsoldCell& c : cells) {
    if (!keep(c)) continue;  // a lead's own reason, in a report of buyers
    out.reasons[c.keys[reason_at]] += c.leads;
    out.total += c.leads;
  }
  // In time order; inside a stretch (or in all), the most leads first.
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const auto& a, const auto& b) {
    return std::pair(a.stretch.start_ms, -a.sums) < std::pair(b.stretch.start_ms, -b.sums);
  });
  return out;
}

}  // namespace leadflow::reports
