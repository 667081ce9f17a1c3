#pragma once
// The revenue, performance and unsold reports on plain values: the rollup question a report
// asks (its range, filters, keys and the cuts of the reader's stretches), the folding of the
// store's cells into rows per stretch and keys, and each report's figures. Which report a reader
// may read, which keys it may ask and which figures it sees are the visibility model's
// (leadflow/visibility/reports.hpp); the API decodes, asks it, and encodes what this file folds.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/reports/rollup.hpp"
#include "leadflow/reports/stretches.hpp"

namespace leadflow::reports {

/// A report's question, decoded: the quarter hours of [from_ms, to_ms), summed per stretch of
/// `time` in `tz` (none: over the whole range) and per `keys`, of the rows matching `filters`.
struct ReportRequest {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::shared_ptr<const TimeZone> tz;
  TimeCut time = TimeCut::kNone;
  std::vector<ReportKey> keys;
  std::vector<std::pair<ReportKey, std::string>> filters;
};

/// One row of a report: its stretch (none without a time cut), its keys' stored values in the
/// order asked ("" for a lead without the key), and its sums.
template <typename Sums>
struct ReportRow {
  Stretch stretch;
  std::vector<std::string> keys;
  Sums sums{};
};

/// The rollup question for `r`: its range, filters and keys, cut at the reader's stretches.
RollupQuery rollup_query(const ReportRequest& r);

// --- revenue ------------------------------------------------------------------------------------

/// The revenue rollup's sums over a row: the ledger's sales and returns.
struct RevenueSums {
  std::int64_t sales = 0, returns = 0;
  Cents revenue = 0, payout = 0, returned_revenue = 0, returned_payout = 0;
  /// The aged sales among them (docs/reoffers.md), as made, and the returns of aged sales among
  /// the returns: the live ones are the rest.
  std::int64_t aged_sales = 0, aged_returns = 0;
  Cents aged_revenue = 0, aged_payout = 0, aged_returned_revenue = 0, aged_returned_payout = 0;

  void add(const RevenueCell& c);
  /// A cell of the aged sales' band (kAgedSalesBand): its sales and returns are already in add's.
  void add_aged(const RevenueCell& c);
  Cents aged_margin() const { return aged_revenue - aged_payout; }
  /// Revenue and payout net of returns, and the margin between them.
  Cents net_revenue() const { return revenue - returned_revenue; }
  Cents net_payout() const { return payout - returned_payout; }
  Cents margin() const { return net_revenue() - net_payout(); }
  /// The same for the aged band: its sales as made less the returns of aged sales. The live
  /// band's are the rest (net_revenue() - aged_net_revenue(), ...).
  Cents aged_net_revenue() const { return aged_revenue - aged_returned_revenue; }
  Cents aged_net_payout() const { return aged_payout - aged_returned_payout; }
  Cents aged_net_margin() const { return aged_net_revenue() - aged_net_payout(); }
  /// The average price of the sales made (before returns), rounded half up; none without sales.
  std::optional<Cents> avg_price() const;
};

struct RevenueReport {
  std::vector<ReportRow<RevenueSums>> rows;  // by stretch, then keys
  RevenueSums total;
};

/// The cells of rollup_query(r) folded into rows per stretch and keys, with `aged` (the same
/// question's cells of the aged sales' band, moved back: from_band) in their rows' aged figures.
RevenueReport fold_revenue(const ReportRequest& r, const std::vector<RevenueCell>& cells,
                           const std::vector<RevenueCell>& aged = {});

// --- performance --------------------------------------------------------------------------------

struct PerformanceSums {
  std::array<std::int64_t, kPerformanceFigures> f{};

  void add(const PerformanceCell& c);
  /// With `leads`, the share of decided leads (duplicates aside) that sold, as the campaign
  /// stats count it; otherwise (a buyer's row) the share of its posts it accepted. Rounded to 4
  /// places; none when nothing was decided or posted.
  std::optional<double> acceptance_rate(bool leads) const;
  /// The mean of the answers' response times, rounded; none without answers.
  std::optional<std::int64_t> avg_response_ms() const;
  /// The upper edge of the response-time bucket holding the 95th percentile; none without
  /// answers or when it lies in the open bucket above the last edge.
  std::optional<std::int64_t> p95_response_ms() const;
};

struct PerformanceReport {
  std::vector<ReportRow<PerformanceSums>> rows;
  PerformanceSums total;
  /// Whether the rows and the totals hold leads' own figures: not when cut by buyer (rows) or
  /// filtered by buyer (rows and totals), where a figure is a buyer's.
  bool rows_count_leads = true;
  bool total_counts_leads = true;
};

/// The cells of rollup_query(r) folded into rows. Cut by buyer, the leads' own figures (buyer
/// "") are no buyer's row; they still count in the totals.
PerformanceReport fold_performance(const ReportRequest& r,
                                   const std::vector<PerformanceCell>& cells);

// --- unsold -------------------------------------------------------------------------------------

/// The unsold rollup's question for `r`: always cut by reason (after the keys asked), and
/// unless cut or filtered by buyer, the leads' own reasons only (buyer "").
RollupQuery unsold_query(const ReportRequest& r);

/// An unsold row's figures: its leads, how many of them were offered again (their first
/// re-offer ran) and how many of those sold aged (docs/reoffers.md).
struct UnsoldSums {
  std::int64_t leads = 0, reoffered = 0, sold_aged = 0;
};

struct UnsoldReport {
  std::vector<ReportKey> keys;                  // the row keys: those asked, then the reason
  std::vector<ReportRow<UnsoldSums>> rows;      // by stretch, then the most leads first
  std::map<std::string, std::int64_t> reasons;  // leads per reason over the range
  std::int64_t total = 0;
  std::int64_t reoffered = 0, sold_aged = 0;  // over the range
  /// Whether the report counts, per buyer, the unsold leads each did not take (one reason per
  /// lead and buyer) rather than leads by why each went unsold (one reason per lead).
  bool counts_buyers = false;
};

/// The cells of unsold_query(r) folded into rows; cut by buyer, a lead's own reasons (buyer "")
/// count nowhere. `reoffered` and `sold_aged` are the same question's cells of those bands
/// (kReofferedBand, kSoldAgedBand), moved back (from_band).
UnsoldReport fold_unsold(const ReportRequest& r, const std::vector<UnsoldCell>& cells,
                         const std::vector<UnsoldCell>& reoffered = {},
                         const std::vector<UnsoldCell>& sold_aged = {});

}  // namespace leadflow::reports
