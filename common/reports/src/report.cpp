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

void RevenueSums::add_aged(const RevenueCell& c) {
  aged_sales += c.sales;
  aged_revenue += c.revenue;
  aged_payout += c.payout;
  aged_returns += c.returns;
  aged_returned_revenue += c.returned_revenue;
  aged_returned_payout += c.returned_payout;
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

RevenueReport fold_revenue(const ReportRequest& r, const std::vector<RevenueCell>& cells,
                           const std::vector<RevenueCell>& aged) {
  // Each cell tagged with its band, folded into the same rows: an aged sale is also a sale.
  struct Tagged {
    std::int64_t bucket_ms;
    std::vector<std::string> keys;
    const RevenueCell* cell;
    bool aged;
  };
  std::vector<Tagged> all;
  all.reserve(cells.size() + aged.size());
  for (const RevenueCell& c : cells) all.push_back({c.bucket_ms, c.keys, &c, false});
  for (const RevenueCell& c : aged) all.push_back({c.bucket_ms, c.keys, &c, true});
  const auto add = [](RevenueSums& s, const Tagged& t) {
    t.aged ? s.add_aged(*t.cell) : s.add(*t.cell);
  };
  RevenueReport out;
  out.rows = fold<RevenueSums>(
      r, all, [](const Tagged&) { return true; }, add);
  for (const Tagged& t : all) add(out.total, t);
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

UnsoldReport fold_unsold(const ReportRequest& r, const std::vector<UnsoldCell>& cells,
                         const std::vector<UnsoldCell>& reoffered,
                         const std::vector<UnsoldCell>& sold_aged) {
  const RollupQuery q = unsold_query(r);
  UnsoldReport out;
  out.keys = q.group;
  const auto by_buyer = std::find(q.group.begin(), q.group.end(), ReportKey::kBuyer);
  const bool buyer_cut = by_buyer != q.group.end();
  const std::size_t buyer_at = static_cast<std::size_t>(by_buyer - q.group.begin());
  const std::size_t reason_at = static_cast<std::size_t>(
      std::find(q.group.begin(), q.group.end(), ReportKey::kReason) - q.group.begin());
  out.counts_buyers = buyer_cut || filtered_by(r.filters, ReportKey::kBuyer);
  // Each cell tagged with what it counts; a band's cells count leads its rows already hold.
  enum class Of { kLeads, kReoffered, kSoldAged };
  struct Tagged {
    std::int64_t bucket_ms;
    std::vector<std::string> keys;
    std::int64_t leads;
    Of of;
  };
  std::vector<Tagged> all;
  all.reserve(cells.size() + reoffered.size() + sold_aged.size());
  for (const UnsoldCell& c : cells) all.push_back({c.bucket_ms, c.keys, c.leads, Of::kLeads});
  for (const UnsoldCell& c : reoffered)
    all.push_back({c.bucket_ms, c.keys, c.leads, Of::kReoffered});
  for (const UnsoldCell& c : sold_aged)
    all.push_back({c.bucket_ms, c.keys, c.leads, Of::kSoldAged});
  const auto add = [](UnsoldSums& s, const Tagged& t) {
    (t.of == Of::kLeads ? s.leads : t.of == Of::kReoffered ? s.reoffered : s.sold_aged) += t.leads;
  };
  const auto kept = [&](const Tagged& t) { return !buyer_cut || !t.keys[buyer_at].empty(); };
  out.rows = fold<UnsoldSums>(r, all, kept, add);
  for (const Tagged& t : all) {
    if (!kept(t)) continue;  // a lead's own reason, in a report of buyers
    if (t.of == Of::kLeads) {
      out.reasons[t.keys[reason_at]] += t.leads;
      out.total += t.leads;
    } else {
      (t.of == Of::kReoffered ? out.reoffered : out.sold_aged) += t.leads;
    }
  }
  // In time order; inside a stretch (or in all), the most leads first.
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const auto& a, const auto& b) {
    return std::pair(a.stretch.start_ms, -a.sums.leads) <
           std::pair(b.stretch.start_ms, -b.sums.leads);
  });
  return out;
}

}  // namespace leadflow::reports
