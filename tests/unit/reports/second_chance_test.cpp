// Second chances in the reports (docs/reports.md, docs/reoffers.md) on plain values: which bands
// a re-offer counts its lead in, what it adds there, which returns count apart, the bands'
// questions and the folding of their cells into the revenue and unsold reports' rows.
#include <gtest/gtest.h>

#include "leadflow/reports/outcome_rows.hpp"
#include "leadflow/reports/report.hpp"
#include "leadflow/reports/tiers.hpp"

namespace leadflow::reports {
namespace {

constexpr std::int64_t kSecondChanceMin = 60'000;
constexpr std::int64_t kSecondChanceHour = 3'600'000;
constexpr std::int64_t kSecondChanceDay = 24 * kSecondChanceHour;
constexpr std::int64_t kNov1 = 1'793'491'200'000;  // 2026-11-01T00:00Z

ReportRequest second_chance_request(const char* zone, TimeCut time, std::int64_t from,
                                    std::int64_t to) {
  ReportRequest r;
  r.tz = TimeZone::cached(zone);
  r.time = time;
  r.from_ms = from;
  r.to_ms = to;
  return r;
}

RevenueCell second_chance_sale(std::int64_t at, std::vector<std::string> keys, std::int64_t sales,
                               Cents revenue, Cents payout) {
  RevenueCell c;
  c.bucket_ms = at;
  c.keys = std::move(keys);
  c.sales = sales;
  c.revenue = revenue;
  c.payout = payout;
  return c;
}

UnsoldCell second_chance_unsold(std::int64_t at, std::vector<std::string> keys,
                                std::int64_t leads) {
  UnsoldCell c;
  c.bucket_ms = at;
  c.keys = std::move(keys);
  c.leads = leads;
  return c;
}

Attempt second_chance_attempt(const char* buyer, AttemptKind kind, AttemptOutcome outcome,
                              int reoffer) {
  Attempt a;
  a.buyer_id = buyer;
  a.kind = kind;
  a.outcome = outcome;
  a.reoffer = reoffer;
  return a;
}

TEST(SecondChance, OnlyALeadNoBuyerTookCountsOnceInEachBand) {
  // Unsold live, its first re-offer: re-offered; sold by it: sold aged as well.
  EXPECT_EQ(second_chance_bands(1, 0, false), (std::vector<int>{kReofferedBand}));
  EXPECT_EQ(second_chance_bands(1, 0, true), (std::vector<int>{kReofferedBand, kSoldAgedBand}));
  // A later round: re-offered already; sold aged if this is its first sale.
  EXPECT_TRUE(second_chance_bands(2, 0, false).empty());
  EXPECT_EQ(second_chance_bands(3, 0, true), (std::vector<int>{kSoldAgedBand}));
  // A lead holding sales (sold in shares live, or by an earlier re-offer) counts no more.
  EXPECT_TRUE(second_chance_bands(1, 1, true).empty());
  EXPECT_TRUE(second_chance_bands(2, 2, true).empty());
}

TEST(SecondChance, ALeadCountsInItsBandUnderTheReasonsItsLiveAuctionFound) {
  LeadKeys l{kNov1 + 20 * kSecondChanceMin, "s1", "c1", "solar", "web"};
  Distribution lead;
  lead.status = DeliveryStatus::kUnsold;
  // Live: b1 bid no; b2 was out by its cap. A first re-offer asked b3, which bid no too: not
  // the live auction's, so it changes no reason.
  lead.attempts = {second_chance_attempt("b1", AttemptKind::kPing, AttemptOutcome::kNoBid, 0),
                   second_chance_attempt("b3", AttemptKind::kPing, AttemptOutcome::kNoBid, 1)};
  lead.ineligible = {{"b2", "cap:daily"}};
  UnsoldDeltas d;
  add_second_chance(d, l, lead, kSoldAgedBand);
  const std::int64_t at = band_bucket(kNov1 + 15 * kSecondChanceMin, kSoldAgedBand);
  const UnsoldDeltas expected{{{at, "s1", "c1", "", "solar", "web", "no_bid"}, 1},
                              {{at, "s1", "c1", "b1", "solar", "web", "no_bid"}, 1},
                              {{at, "s1", "c1", "b2", "solar", "web", "cap:daily"}, 1}};
  EXPECT_EQ(d, expected);
  // A lead that is not unsold (a test's mistake, or a store's) adds nothing.
  lead.status = DeliveryStatus::kDelivered;
  UnsoldDeltas none;
  add_second_chance(none, l, lead, kReofferedBand);
  EXPECT_TRUE(none.empty());
}

TEST(SecondChance, ABandIsTheRealAxisMovedByWholeDays) {
  EXPECT_EQ(kBandMs % kSecondChanceDay, 0);
  // Far past any real quarter hour a report asks (400 days from now, for ages).
  EXPECT_GT(kBandMs, std::int64_t{1} << 50);
  RollupQuery q;
  q.from_ms = kNov1 + 30 * kSecondChanceMin;
  q.to_ms = kNov1 + 3 * kSecondChanceDay + 45 * kSecondChanceMin;
  q.by_bucket = true;
  q.cuts = {kNov1 + kSecondChanceDay, kNov1 + 2 * kSecondChanceDay};
  q.group = {ReportKey::kBuyer};
  const RollupQuery moved = in_band(q, kSoldAgedBand);
  EXPECT_EQ(moved.from_ms, q.from_ms + 2 * kBandMs);
  EXPECT_EQ(moved.cuts[1], q.cuts[1] + 2 * kBandMs);
  EXPECT_EQ(moved.group, q.group);
  // Answered from the same tiers, over the same ranges moved there.
  for (RollupKind kind : {RollupKind::kRevenue, RollupKind::kUnsold}) {
    const auto real = plan_rollup(q, kind);
    const auto band = plan_rollup(moved, kind);
    ASSERT_EQ(real.size(), band.size());
    for (std::size_t i = 0; i < real.size(); ++i) {
      EXPECT_EQ(band[i].tier, real[i].tier);
      EXPECT_EQ(band[i].from_ms, real[i].from_ms + 2 * kBandMs);
      EXPECT_EQ(band[i].to_ms, real[i].to_ms + 2 * kBandMs);
    }
  }
  const auto back =
      from_band(std::vector<UnsoldCell>{second_chance_unsold(moved.from_ms, {}, 1)}, kSoldAgedBand);
  EXPECT_EQ(back[0].bucket_ms, q.from_ms);
}

TEST(SecondChance, RevenueRowsCarryTheirAgedSales) {
  auto r = second_chance_request("UTC", TimeCut::kDay, kNov1, kNov1 + 2 * kSecondChanceDay);
  r.keys = {ReportKey::kBuyer};
  // Day 1: b1 sold live 3 for $30 and aged 1 for $4; b2 only live. Day 2: b1 aged 2 for $9.
  const std::vector<RevenueCell> cells{
      second_chance_sale(kNov1, {"b1"}, 4, 3400, 1200),
      second_chance_sale(kNov1 + kSecondChanceHour, {"b2"}, 1, 1000, 400),
      second_chance_sale(kNov1 + kSecondChanceDay, {"b1"}, 2, 900, 300)};
  const std::vector<RevenueCell> aged{
      second_chance_sale(kNov1 + 5 * kSecondChanceHour, {"b1"}, 1, 400, 100),
      second_chance_sale(kNov1 + kSecondChanceDay, {"b1"}, 2, 900, 300)};
  const RevenueReport report = fold_revenue(r, cells, aged);
  ASSERT_EQ(report.rows.size(), 3u);
  const RevenueSums& b1 = report.rows[0].sums;
  EXPECT_EQ(report.rows[0].keys, (std::vector<std::string>{"b1"}));
  EXPECT_EQ(b1.sales, 4);
  EXPECT_EQ(b1.aged_sales, 1);
  EXPECT_EQ(b1.aged_revenue, 400);
  EXPECT_EQ(b1.aged_payout, 100);
  EXPECT_EQ(b1.aged_margin(), 300);
  EXPECT_EQ(b1.revenue - b1.aged_revenue, 3000);  // live
  EXPECT_EQ(report.rows[1].sums.aged_sales, 0);
  EXPECT_EQ(report.rows[2].stretch.label, "2026-11-02");
  EXPECT_EQ(report.rows[2].sums.aged_revenue, report.rows[2].sums.revenue);
  EXPECT_EQ(report.total.sales, 7);
  EXPECT_EQ(report.total.aged_sales, 3);
  EXPECT_EQ(report.total.aged_revenue, 1300);
  EXPECT_EQ(report.total.revenue, 5300);
  // Without aged cells (a range before any re-offer) every figure is live.
  EXPECT_EQ(fold_revenue(r, cells).total.aged_sales, 0);
}

RevenueCell returned(std::int64_t at, std::vector<std::string> keys, std::int64_t returns,
                     Cents revenue, Cents payout) {
  RevenueCell c;
  c.bucket_ms = at;
  c.keys = std::move(keys);
  c.returns = returns;
  c.returned_revenue = revenue;
  c.returned_payout = payout;
  return c;
}

TEST(SecondChance, OnlyAReturnOfAnAgedSaleCountsInTheAgedBand) {
  EXPECT_EQ(return_bands(true), (std::vector<int>{kAgedSalesBand}));
  // A live sale's return, or one of a sale made before sales said whether they were aged.
  EXPECT_TRUE(return_bands(false).empty());
}

TEST(SecondChance, RevenueRowsCarryTheReturnsOfTheirAgedSales) {
  auto r = second_chance_request("UTC", TimeCut::kDay, kNov1, kNov1 + 2 * kSecondChanceDay);
  r.keys = {ReportKey::kBuyer};
  // Day 1: b1 sold 3 live for $30 and 1 aged for $4 (payout $1). Day 2: b1 returned one live
  // sale ($10, payout $4) and the aged one; b2 returned a live sale it bought before the range.
  const std::vector<RevenueCell> cells{
      second_chance_sale(kNov1, {"b1"}, 4, 3400, 1200),
      returned(kNov1 + kSecondChanceDay, {"b1"}, 2, 1400, 500),
      returned(kNov1 + kSecondChanceDay + kSecondChanceHour, {"b2"}, 1, 700, 200)};
  const std::vector<RevenueCell> aged{
      second_chance_sale(kNov1 + 5 * kSecondChanceHour, {"b1"}, 1, 400, 100),
      returned(kNov1 + kSecondChanceDay + 3 * kSecondChanceHour, {"b1"}, 1, 400, 100)};
  const RevenueReport report = fold_revenue(r, cells, aged);
  ASSERT_EQ(report.rows.size(), 3u);
  const RevenueSums& sold = report.rows[0].sums;
  EXPECT_EQ(sold.aged_sales, 1);
  EXPECT_EQ(sold.aged_returns, 0);
  const RevenueSums& back = report.rows[1].sums;
  EXPECT_EQ(report.rows[1].stretch.label, "2026-11-02");
  EXPECT_EQ(report.rows[1].keys, (std::vector<std::string>{"b1"}));
  EXPECT_EQ(back.returns, 2);  // an aged return is also one of the row's returns
  EXPECT_EQ(back.aged_returns, 1);
  EXPECT_EQ(back.aged_returned_revenue, 400);
  EXPECT_EQ(back.aged_returned_payout, 100);
  EXPECT_EQ(back.aged_sales, 0);
  EXPECT_EQ(report.rows[2].sums.aged_returns, 0);
  // Over the range: aged and live, gross and net.
  const RevenueSums& t = report.total;
  EXPECT_EQ(t.aged_revenue - t.aged_returned_revenue, 0);                         // aged, net
  EXPECT_EQ(t.revenue - t.aged_revenue, 3000);                                    // live, gross
  EXPECT_EQ(t.net_revenue() - (t.aged_revenue - t.aged_returned_revenue), 1300);  // live, net
  EXPECT_EQ(t.net_payout() - (t.aged_payout - t.aged_returned_payout), 500);
  EXPECT_EQ(t.returns - t.aged_returns, 2);
}

TEST(SecondChance, TheAgedBandNetOfItsReturnsIsItsSalesLessTheirReturns) {
  auto r = second_chance_request("UTC", TimeCut::kDay, kNov1, kNov1 + 2 * kSecondChanceDay);
  // Day 1: 2 live sales ($10, payout $4; $6, payout $2) and 2 aged ($4, payout $1; $9, payout
  // $3). Day 2: the $4 aged sale returned, and the $10 live one.
  const std::vector<RevenueCell> cells{second_chance_sale(kNov1, {}, 4, 2900, 1000),
                                       returned(kNov1 + kSecondChanceDay, {}, 2, 1400, 500)};
  const std::vector<RevenueCell> aged{
      second_chance_sale(kNov1 + kSecondChanceHour, {}, 2, 1300, 400),
      returned(kNov1 + kSecondChanceDay + kSecondChanceHour, {}, 1, 400, 100)};
  const RevenueReport report = fold_revenue(r, cells, aged);
  ASSERT_EQ(report.rows.size(), 2u);
  const RevenueSums& t = report.total;
  EXPECT_EQ(t.aged_net_revenue(), 900);
  EXPECT_EQ(t.aged_net_payout(), 300);
  EXPECT_EQ(t.aged_net_margin(), 600);
  // The net margin, not the margin as made ($9 less $3 paid, where the sales made $13 less $4).
  EXPECT_EQ(t.aged_margin(), 900);
  // The live band is the rest, to the cent: the $6 sale, $2 paid.
  EXPECT_EQ(t.net_revenue() - t.aged_net_revenue(), 600);
  EXPECT_EQ(t.net_payout() - t.aged_net_payout(), 200);
  EXPECT_EQ(t.margin() - t.aged_net_margin(), 400);
  // A day that only gave back an aged sale made before it reads a negative aged net.
  const RevenueSums& back = report.rows[1].sums;
  EXPECT_EQ(back.aged_net_revenue(), -400);
  EXPECT_EQ(back.aged_net_payout(), -100);
  EXPECT_EQ(back.aged_net_margin(), -300);
  // Without aged cells every aged net is zero.
  const RevenueSums live = fold_revenue(r, cells).total;
  EXPECT_EQ(live.aged_net_revenue(), 0);
  EXPECT_EQ(live.aged_net_payout(), 0);
  EXPECT_EQ(live.aged_net_margin(), 0);
}

TEST(SecondChance, UnsoldRowsSayWhatSecondChancesRecovered) {
  const auto r = second_chance_request("UTC", TimeCut::kNone, kNov1, kNov1 + kSecondChanceDay);
  const std::vector<UnsoldCell> cells{
      second_chance_unsold(kNov1, {"no_bid"}, 10),
      second_chance_unsold(kNov1 + kSecondChanceHour, {"refused"}, 4)};
  const std::vector<UnsoldCell> reoffered{
      second_chance_unsold(kNov1, {"no_bid"}, 6),
      second_chance_unsold(kNov1 + kSecondChanceHour, {"refused"}, 1)};
  const std::vector<UnsoldCell> sold_aged{
      second_chance_unsold(kNov1 + 2 * kSecondChanceHour, {"no_bid"}, 2)};
  const UnsoldReport report = fold_unsold(r, cells, reoffered, sold_aged);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].keys, (std::vector<std::string>{"no_bid"}));
  EXPECT_EQ(report.rows[0].sums.leads, 10);
  EXPECT_EQ(report.rows[0].sums.reoffered, 6);
  EXPECT_EQ(report.rows[0].sums.sold_aged, 2);
  EXPECT_EQ(report.rows[1].sums.reoffered, 1);
  EXPECT_EQ(report.rows[1].sums.sold_aged, 0);
  EXPECT_EQ(report.total, 14);  // the bands add no lead: they count leads already there
  EXPECT_EQ(report.reoffered, 7);
  EXPECT_EQ(report.sold_aged, 2);
  EXPECT_EQ(report.reasons, (std::map<std::string, std::int64_t>{{"no_bid", 10}, {"refused", 4}}));

  // Cut by buyer, the leads' own reasons count nowhere, in the bands either.
  auto by_buyer = r;
  by_buyer.keys = {ReportKey::kBuyer};
  const UnsoldReport buyers = fold_unsold(by_buyer,
                                          {second_chance_unsold(kNov1, {"", "no_bid"}, 3),
                                           second_chance_unsold(kNov1, {"b1", "no_bid"}, 3)},
                                          {second_chance_unsold(kNov1, {"", "no_bid"}, 2),
                                           second_chance_unsold(kNov1, {"b1", "no_bid"}, 2)},
                                          {second_chance_unsold(kNov1, {"", "no_bid"}, 1),
                                           second_chance_unsold(kNov1, {"b1", "no_bid"}, 1)});
  ASSERT_EQ(buyers.rows.size(), 1u);
  EXPECT_EQ(buyers.rows[0].sums.reoffered, 2);
  EXPECT_EQ(buyers.rows[0].sums.sold_aged, 1);
  EXPECT_EQ(buyers.reoffered, 2);
  EXPECT_EQ(buyers.sold_aged, 1);
}

}  // namespace
}  // namespace leadflow::reports
