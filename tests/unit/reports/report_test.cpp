// The reports folded on plain values: the rollup question a report asks, its cells folded into
// the reader's stretches and keys, and each report's figures.
#include "leadflow/reports/report.hpp"

#include <gtest/gtest.h>

namespace leadflow::reports {
namespace {

constexpr std::int64_t kReportMin = 60'000;
constexpr std::int64_t kReportHour = 3'600'000;
constexpr std::int64_t kReportLordHowe1am = 1'775'311'200'000;  // 2026-04-05T01:00+11:00

ReportRequest report_request(const char* zone, TimeCut time, std::int64_t from, std::int64_t to) {
  ReportRequest r;
  r.tz = TimeZone::cached(zone);
  r.time = time;
  r.from_ms = from;
  r.to_ms = to;
  return r;
}

RevenueCell report_sale(std::int64_t at, std::int64_t sales, Cents revenue, Cents payout) {
  RevenueCell c;
  c.bucket_ms = at;
  c.sales = sales;
  c.revenue = revenue;
  c.payout = payout;
  return c;
}

TEST(ReportFold, RollupQueryIsCutWhereTheReadersStretchesBegin) {
  auto r = report_request("Australia/Lord_Howe", TimeCut::kHour, kReportLordHowe1am,
                          kReportLordHowe1am + 2 * kReportHour);
  r.keys = {ReportKey::kBuyer};
  r.filters = {{ReportKey::kSeller, "s1"}};
  const RollupQuery q = rollup_query(r);
  EXPECT_TRUE(q.by_bucket);
  EXPECT_EQ(q.cuts, (std::vector<std::int64_t>{kReportLordHowe1am + kReportHour,
                                               kReportLordHowe1am + 90 * kReportMin}));
  EXPECT_EQ(q.group, r.keys);
  EXPECT_EQ(q.filters, r.filters);
  r.time = TimeCut::kNone;
  EXPECT_FALSE(rollup_query(r).by_bucket);
  EXPECT_TRUE(rollup_query(r).cuts.empty());
}

// The case: 58 sales in 14:00-15:00 UTC and 21 in the repeated half hour after it are
// two rows, "01:00+11:00" and "01:30+10:30", not one of 90 minutes.
TEST(ReportFold, LordHoweRepeatedHalfHourIsARowOfItsOwn) {
  const auto r = report_request("Australia/Lord_Howe", TimeCut::kHour, kReportLordHowe1am,
                                kReportLordHowe1am + 2 * kReportHour);
  const std::vector<RevenueCell> cells = {
      report_sale(kReportLordHowe1am, 30, 3000, 2000),
      report_sale(kReportLordHowe1am + 45 * kReportMin, 28, 2800, 1000),
      report_sale(kReportLordHowe1am + kReportHour, 11, 1100, 500),
      report_sale(kReportLordHowe1am + 75 * kReportMin, 10, 1000, 500)};
  const RevenueReport report = fold_revenue(r, cells);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].stretch.label, "2026-04-05T01:00+11:00");
  EXPECT_EQ(report.rows[0].sums.sales, 58);
  EXPECT_EQ(report.rows[1].stretch.label, "2026-04-05T01:30+10:30");
  EXPECT_EQ(report.rows[1].sums.sales, 21);
  EXPECT_EQ(report.total.sales, 79);
}

TEST(ReportFold, RevenueRowsAreByStretchThenKeysAndNetOfReturns) {
  auto r = report_request("UTC", TimeCut::kDay, 0, 2 * 24 * kReportHour);
  r.keys = {ReportKey::kBuyer};
  RevenueCell a = report_sale(25 * kReportHour, 3, 1000, 600);
  a.keys = {"b2"};
  a.returns = 1;
  a.returned_revenue = 300;
  a.returned_payout = 200;
  RevenueCell b = report_sale(kReportHour, 1, 500, 300);
  b.keys = {"b2"};
  RevenueCell c = report_sale(2 * kReportHour, 2, 400, 100);
  c.keys = {"b1"};
  RevenueCell d = report_sale(3 * kReportHour, 1, 100, 50);
  d.keys = {"b1"};
  const RevenueReport report = fold_revenue(r, {a, b, c, d});
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_EQ(report.rows[0].stretch.label, "1970-01-01");
  EXPECT_EQ(report.rows[0].keys, (std::vector<std::string>{"b1"}));
  EXPECT_EQ(report.rows[0].sums.sales, 3);
  EXPECT_EQ(report.rows[1].keys, (std::vector<std::string>{"b2"}));
  EXPECT_EQ(report.rows[2].stretch.label, "1970-01-02");
  const RevenueSums& s = report.rows[2].sums;
  EXPECT_EQ(s.net_revenue(), 700);
  EXPECT_EQ(s.net_payout(), 400);
  EXPECT_EQ(s.margin(), 300);
  EXPECT_EQ(s.avg_price(), 333);  // the sales made, before returns: 1000 / 3
  EXPECT_EQ(report.total.sales, 7);
  EXPECT_EQ(RevenueSums{}.avg_price(), std::nullopt);
  RevenueSums half;
  half.sales = 2;
  half.revenue = 3;
  EXPECT_EQ(half.avg_price(), 2);  // 1.5 rounds half up
}

PerformanceCell performance(std::vector<std::string> keys,
                            std::initializer_list<std::pair<int, std::int64_t>> figures) {
  PerformanceCell c;
  c.keys = std::move(keys);
  for (const auto& [i, v] : figures) c.figures[i] = v;
  return c;
}

TEST(ReportFold, PerformanceCutByBuyerLeavesTheLeadsOwnFiguresToTheTotals) {
  auto r = report_request("UTC", TimeCut::kNone, 0, kReportHour);
  r.keys = {ReportKey::kBuyer};
  const PerformanceReport report =
      fold_performance(r, {performance({""}, {{kLeads, 4}, {kSold, 3}, {kUnsold, 1}}),
                           performance({"b1"}, {{kPings, 4}, {kPosts, 2}, {kAccepted, 1}})});
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].keys, (std::vector<std::string>{"b1"}));
  EXPECT_FALSE(report.rows_count_leads);
  EXPECT_TRUE(report.total_counts_leads);
  EXPECT_EQ(report.total.f[kLeads], 4);
  EXPECT_EQ(report.total.f[kPings], 4);
  EXPECT_EQ(report.rows[0].sums.acceptance_rate(false), 0.5);
  EXPECT_EQ(report.total.acceptance_rate(true), 0.75);

  r.keys = {};
  r.filters = {{ReportKey::kBuyer, "b1"}};
  const PerformanceReport filtered = fold_performance(r, {performance({}, {{kPings, 1}})});
  EXPECT_FALSE(filtered.rows_count_leads);
  EXPECT_FALSE(filtered.total_counts_leads);
}

TEST(ReportFold, PerformanceResponseTimes) {
  PerformanceSums s;
  EXPECT_EQ(s.avg_response_ms(), std::nullopt);
  EXPECT_EQ(s.p95_response_ms(), std::nullopt);
  EXPECT_EQ(s.acceptance_rate(true), std::nullopt);
  s.f[kResponses] = 20;
  s.f[kResponseMs] = 1010;
  s.f[kLatency0 + 3] = 19;              // 51-100 ms
  s.f[kLatency0 + 5] = 1;               // 201-300 ms
  EXPECT_EQ(s.avg_response_ms(), 51);   // 50.5 rounds away from zero
  EXPECT_EQ(s.p95_response_ms(), 100);  // the 19th answer of 20
  s.f[kLatency0 + 3] = 18;
  s.f[kLatency0 + kLatencyBuckets - 1] = 1;  // over the last edge
  EXPECT_EQ(s.p95_response_ms(), 300);       // the 19th answer is the 201-300 ms one
  s.f[kLatency0 + 3] = 0;
  s.f[kLatency0 + kLatencyBuckets - 1] = 20;
  EXPECT_EQ(s.p95_response_ms(), std::nullopt);  // in the open bucket
  s.f[kSold] = 1;
  s.f[kUnsold] = 2;
  EXPECT_EQ(s.acceptance_rate(true), 0.3333);
}

UnsoldCell report_unsold(std::int64_t at, std::vector<std::string> keys, std::int64_t leads) {
  UnsoldCell c;
  c.bucket_ms = at;
  c.keys = std::move(keys);
  c.leads = leads;
  return c;
}

TEST(ReportFold, UnsoldQueryIsAlwaysCutByReasonAndReadsTheLeadsOwnReasonsUnlessByBuyer) {
  auto r = report_request("UTC", TimeCut::kNone, 0, kReportHour);
  RollupQuery q = unsold_query(r);
  EXPECT_EQ(q.group, (std::vector<ReportKey>{ReportKey::kReason}));
  EXPECT_EQ(q.filters, (std::vector<std::pair<ReportKey, std::string>>{{ReportKey::kBuyer, ""}}));
  r.keys = {ReportKey::kBuyer};
  q = unsold_query(r);
  EXPECT_EQ(q.group, (std::vector<ReportKey>{ReportKey::kBuyer, ReportKey::kReason}));
  EXPECT_TRUE(q.filters.empty());
  r.keys = {ReportKey::kReason, ReportKey::kSource};
  r.filters = {{ReportKey::kBuyer, "b1"}};
  q = unsold_query(r);
  EXPECT_EQ(q.group, r.keys);
  EXPECT_EQ(q.filters, r.filters);
}

TEST(ReportFold, UnsoldRowsAreByStretchThenMostLeadsFirst) {
  const auto r = report_request("UTC", TimeCut::kHour, 0, 2 * kReportHour);
  const UnsoldReport report = fold_unsold(
      r,
      {report_unsold(0, {"no_bid"}, 2), report_unsold(15 * kReportMin, {"refused"}, 5),
       report_unsold(30 * kReportMin, {"no_bid"}, 1), report_unsold(kReportHour, {"no_bid"}, 1)});
  EXPECT_EQ(report.keys, (std::vector<ReportKey>{ReportKey::kReason}));
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_EQ(report.rows[0].keys, (std::vector<std::string>{"refused"}));
  EXPECT_EQ(report.rows[0].sums.leads, 5);
  EXPECT_EQ(report.rows[1].keys, (std::vector<std::string>{"no_bid"}));
  EXPECT_EQ(report.rows[1].sums.leads, 3);
  EXPECT_EQ(report.rows[2].stretch.label, "1970-01-01T01:00+00:00");
  EXPECT_EQ(report.total, 9);
  EXPECT_EQ(report.reasons, (std::map<std::string, std::int64_t>{{"no_bid", 4}, {"refused", 5}}));
  EXPECT_FALSE(report.counts_buyers);
}

TEST(ReportFold, UnsoldByBuyerCountsNoLeadsOwnReason) {
  auto r = report_request("UTC", TimeCut::kNone, 0, kReportHour);
  r.keys = {ReportKey::kBuyer};
  const UnsoldReport report = fold_unsold(
      r, {report_unsold(0, {"", "no_bid"}, 7), report_unsold(0, {"b1", "cap:daily"}, 2)});
  EXPECT_TRUE(report.counts_buyers);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].keys, (std::vector<std::string>{"b1", "cap:daily"}));
  EXPECT_EQ(report.total, 2);
  EXPECT_EQ(report.reasons, (std::map<std::string, std::int64_t>{{"cap:daily", 2}}));
}

}  // namespace
}  // namespace leadflow::reports
