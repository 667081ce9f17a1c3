// Periods, their bounds in an account's zone, and which entries a period's statement holds
// across closes: on plain values.
#include <gtest/gtest.h>

#include <map>
#include <span>
#include <vector>

#include "leadflow/money/statements.hpp"

namespace leadflow::money {
namespace {

constexpr std::int64_t kHour = 3'600'000;
// 2026-11-01T00:00:00Z and 2026-12-01T00:00:00Z.
constexpr std::int64_t kNov = 1'793'491'200'000;
constexpr std::int64_t kDec = 1'796'083'200'000;

const TimeZone& utc() { return *TimeZone::cached("UTC"); }

StatementEntry entry(std::int64_t id, std::string_view kind, std::int64_t at_ms, Cents revenue,
                     Cents payout, std::int64_t ref_at_ms = 0) {
  StatementEntry e;
  e.entry = {
      id,   std::string(kind), "ld_" + std::to_string(id), "by_1", "sl_1", "", revenue, payout,
      at_ms};
  e.ref_at_ms = ref_at_ms ? ref_at_ms : at_ms;
  return e;
}

TEST(Periods, LabelsParseAndFollowEachOther) {
  EXPECT_EQ(parse_period("2026-11")->label(), "2026-11");
  EXPECT_EQ(parse_period("2026-12")->next().label(), "2027-01");
  EXPECT_EQ(parse_period("2027-01")->previous().label(), "2026-12");
  EXPECT_EQ(parse_period("2026-W53")->label(), "2026-W53");  // 2026 has 53 ISO weeks
  EXPECT_EQ(parse_period("2026-W53")->next().label(), "2027-W01");
  EXPECT_EQ(parse_period("2027-W01")->previous().label(), "2026-W53");
  EXPECT_FALSE(parse_period("2025-W53"));
  EXPECT_FALSE(parse_period("2026-13"));
  EXPECT_FALSE(parse_period("2026-1"));
  EXPECT_FALSE(parse_period("26-11"));
  EXPECT_FALSE(parse_period("2026-11x"));
}

TEST(Periods, BoundsAreLocalMidnightsOfTheAccountsZone) {
  const auto nov = *parse_period("2026-11");
  EXPECT_EQ(bounds_of(nov, utc()).from_ms, kNov);
  EXPECT_EQ(bounds_of(nov, utc()).to_ms, kDec);
  // New York: EDT (-4) on 1 November at midnight, EST (-5) on 1 December.
  const auto& ny = *TimeZone::cached("America/New_York");
  EXPECT_EQ(bounds_of(nov, ny).from_ms, kNov + 4 * kHour);
  EXPECT_EQ(bounds_of(nov, ny).to_ms, kDec + 5 * kHour);
  // ISO week 45 of 2026: Monday 2 November to Monday 9 November.
  const auto w45 = *parse_period("2026-W45");
  EXPECT_EQ(bounds_of(w45, utc()).from_ms, kNov + 24 * kHour);
  EXPECT_EQ(bounds_of(w45, utc()).to_ms, kNov + 8 * 24 * kHour);
  EXPECT_EQ(period_of(Calendar::kWeek, kNov + 24 * kHour, utc()).label(), "2026-W45");
  EXPECT_EQ(period_of(Calendar::kWeek, kNov, utc()).label(), "2026-W44");
  // 1 January 2027 is a Friday: still in 2026's week 53.
  EXPECT_EQ(period_of(Calendar::kWeek, 1'798'761'600'000, utc()).label(), "2026-W53");
  // 03:30Z on 1 December is still November in New York.
  EXPECT_EQ(period_of(Calendar::kMonth, kDec + 3 * kHour, ny).label(), "2026-11");
  EXPECT_EQ(period_of(Calendar::kMonth, kDec + 3 * kHour, utc()).label(), "2026-12");
}

TEST(Periods, APeriodClosesOnceItEndedEverywhere) {
  const auto nov = *parse_period("2026-11");
  EXPECT_FALSE(period_ended_everywhere(nov, kDec));
  EXPECT_FALSE(period_ended_everywhere(nov, kDec + 12 * kHour - 1));
  EXPECT_TRUE(period_ended_everywhere(nov, kDec + 12 * kHour));
}

TEST(Statements, AnEntryWrittenAfterItsPeriodClosedMovesToTheNextOpenOneAsAnAdjustment) {
  const auto oct = *parse_period("2026-10");
  const auto nov = *parse_period("2026-11");
  Closes closes;
  closes[oct.label()] = {oct, 2, "op", 0, {}};
  const std::vector<StatementEntry> entries{
      entry(1, kSaleEntry, kNov - 10 * kHour, 1000, 700),
      entry(2, kSaleEntry, kNov - 9 * kHour, 500, 300),
      // Written after October's close, dated in October (a late batch): November's.
      entry(3, kSaleEntry, kNov - 8 * kHour, 400, 200),
      // A return in November of October's first sale: November's, an adjustment.
      entry(4, kReturnEntry, kNov + kHour, -1000, -700, kNov - 10 * kHour),
      entry(5, kSaleEntry, kNov + 2 * kHour, 900, 600),
  };
  const auto october = statement_of(Party::kBuyer, "by_1", oct, utc(), entries, closes);
  ASSERT_EQ(october.lines.size(), 2u);
  EXPECT_EQ(october.totals.revenue, 1500);
  const auto november = statement_of(Party::kBuyer, "by_1", nov, utc(), entries, closes);
  ASSERT_EQ(november.lines.size(), 3u);
  EXPECT_TRUE(november.lines[0].adjustment);
  EXPECT_EQ(november.lines[0].home_period, "2026-10");
  EXPECT_TRUE(november.lines[1].adjustment);
  EXPECT_EQ(november.lines[1].ref_period, "2026-10");
  EXPECT_FALSE(november.lines[2].adjustment);
  EXPECT_EQ(november.totals.sales, 2);
  EXPECT_EQ(november.totals.returns, 1);
  EXPECT_EQ(november.totals.adjustments, 2);
  EXPECT_EQ(november.totals.revenue, 400 - 1000 + 900);
  EXPECT_EQ(november.totals.payout, 200 - 700 + 600);
  EXPECT_EQ(november.totals.margin(), (400 - 200) + (-1000 + 700) + (900 - 600));
  // Closing November later keeps every entry where it was.
  closes[nov.label()] = {nov, 5, "op", 0, {}};
  EXPECT_EQ(statement_of(Party::kBuyer, "by_1", nov, utc(), entries, closes).totals,
            november.totals);
  // A seller reads the same entries by its own id; another account reads none.
  EXPECT_EQ(statement_of(Party::kSeller, "sl_1", nov, utc(), entries, closes).totals.payout, 100);
  EXPECT_TRUE(statement_of(Party::kSeller, "by_1", nov, utc(), entries, closes).lines.empty());
}

TEST(Statements, AnEntrySkipsEveryPeriodClosedBeforeItWasWritten) {
  const auto sep = *parse_period("2026-09");
  Closes closes;
  closes["2026-09"] = {sep, 3, "op", 0, {}};
  closes["2026-10"] = {sep.next(), 5, "op", 0, {}};
  EXPECT_EQ(assigned_period(sep, 3, closes).label(), "2026-09");
  EXPECT_EQ(assigned_period(sep, 4, closes).label(), "2026-10");
  EXPECT_EQ(assigned_period(sep, 6, closes).label(), "2026-11");
  // Only entries written after October's close can have moved into November.
  EXPECT_EQ(
      entry_window(Party::kBuyer, "b1", *parse_period("2026-11"), utc(), closes).moved_after_id, 5);
  EXPECT_EQ(entry_window(Party::kBuyer, "b1", sep, utc(), closes).moved_after_id, -1);
}

TEST(Statements, AFreezeHoldsEveryAccountWithAnEntryInItsOwnZone) {
  const auto nov = *parse_period("2026-11");
  // 03:00Z on 1 December: November in New York, December in UTC.
  std::vector<StatementEntry> entries{entry(1, kSaleEntry, kDec + 3 * kHour, 1000, 700)};
  const std::vector<Account> ny{{Party::kBuyer, "by_1", "America/New_York"}};
  const auto frozen = freeze(nov, ny, entries, {});
  ASSERT_EQ(frozen.size(), 2u);
  EXPECT_EQ(frozen[0].account_id, "by_1");
  EXPECT_EQ(frozen[0].zone, "America/New_York");
  EXPECT_EQ(frozen[0].totals.revenue, 1000);
  // The seller counts in UTC: December; its empty November is frozen too, with its zone.
  EXPECT_EQ(frozen[1].account_id, "sl_1");
  EXPECT_EQ(frozen[1].zone, "UTC");
  EXPECT_EQ(frozen[1].totals, Totals{});
}

TEST(Statements, ASellerInNewYorkIsFrozenAtNewYorksMidnightAsABuyerIs) {
  const auto nov = *parse_period("2026-11");
  // 03:00Z on 1 December: November for the New York seller, December for its UTC buyer.
  std::vector<StatementEntry> entries{entry(1, kSaleEntry, kDec + 3 * kHour, 1000, 700)};
  const std::vector<Account> ny{{Party::kSeller, "sl_1", "America/New_York"}};
  const auto frozen = freeze(nov, ny, entries, {});
  ASSERT_EQ(frozen.size(), 2u);  // the UTC buyer's empty November, and the seller's
  EXPECT_EQ(frozen[0].totals, Totals{});
  EXPECT_EQ(frozen[1].party, Party::kSeller);
  EXPECT_EQ(frozen[1].zone, "America/New_York");
  EXPECT_EQ(frozen[1].totals.payout, 700);
  // Its own zone, read as a statement reads it: a seller's is its time_zone.
  Seller s;
  s.id = "sl_1";
  s.time_zone = "America/New_York";
  const auto tz = account_zone(zone_of_seller(s));
  const Statement st = statement_of(Party::kSeller, "sl_1", nov, *tz, entries, {});
  EXPECT_EQ(st.bounds.from_ms, kNov + 4 * kHour);
  EXPECT_EQ(st.bounds.to_ms, kDec + 5 * kHour);
  EXPECT_EQ(st.totals.payout, 700);
  // A seller left at its default is cut in UTC: the same sale is its December's.
  EXPECT_EQ(zone_of_seller(Seller{}), "UTC");
  EXPECT_TRUE(statement_of(Party::kSeller, "sl_1", nov, utc(), entries, {}).lines.empty());
}

// Each entry of the seller, counted over its statements of September to December: once each.
void expect_each_entry_once(const std::vector<StatementEntry>& entries, const TimeZone& tz,
                            const Closes& closes) {
  std::map<std::int64_t, int> seen;
  Cents payout = 0, ledger = 0;
  for (Period p = *parse_period("2026-09"); p.label() != "2027-01"; p = p.next()) {
    const Statement st = statement_of(Party::kSeller, "sl_1", p, tz, entries, closes);
    for (const auto& line : st.lines) ++seen[line.entry.entry.id];
    payout += st.totals.payout;
  }
  for (const auto& e : entries) {
    ledger += e.entry.payout;
    EXPECT_EQ(seen[e.entry.id], 1) << "entry " << e.entry.id;
  }
  EXPECT_EQ(payout, ledger);
}

// October closed with the seller in `frozen_zone`: the close as the store records it.
Closes october_closed_in(const char* frozen_zone, std::span<const StatementEntry> entries,
                         std::int64_t through) {
  const auto oct = *parse_period("2026-10");
  const std::vector<Account> seller{{Party::kSeller, "sl_1", frozen_zone}};
  Closes closes;
  closes["2026-10"] = {oct, through, "op", 0, {}};
  for (const auto& f : freeze(oct, seller, entries.first(through), {}))
    closes["2026-10"].zones[{f.party, f.account_id}] = f.zone;
  return closes;
}

TEST(Statements, ASellerMovedEastAfterACloseHasNoEntryOnTwoStatements) {
  // October closed in New York (it ends at 04:00Z on 1 November), then the seller moves to
  // Kolkata (UTC+5:30), where November begins at 18:30Z on 31 October.
  const auto oct = *parse_period("2026-10");
  std::vector<StatementEntry> entries{
      entry(1, kSaleEntry, kNov - 4 * kHour, 1000, 700),  // 20:00Z on 31 October
      entry(2, kSaleEntry, kNov + 1 * kHour, 1000, 600),  // 21:00 on 31 October in New York
  };
  const Closes closes = october_closed_in("America/New_York", entries, 2);
  entries.push_back(entry(3, kSaleEntry, kNov + 5 * kHour, 1000, 500));
  entries.push_back(entry(4, kReturnEntry, kNov + 6 * kHour, -1000, -700, kNov - 4 * kHour));
  const auto& kolkata = *TimeZone::cached("Asia/Kolkata");
  const Statement october = statement_of(Party::kSeller, "sl_1", oct, kolkata, entries, closes);
  EXPECT_EQ(october.zone, "America/New_York");
  EXPECT_EQ(october.bounds.to_ms, kNov + 4 * kHour);
  EXPECT_EQ(october.totals.payout, 1300);  // as frozen: both sales
  // The open November starts where October ended, and ends at Kolkata's midnight.
  const Statement november =
      statement_of(Party::kSeller, "sl_1", oct.next(), kolkata, entries, closes);
  EXPECT_EQ(november.zone, "Asia/Kolkata");
  EXPECT_EQ(november.bounds.from_ms, kNov + 4 * kHour);
  EXPECT_EQ(november.bounds.to_ms, kDec - 11 * kHour / 2);
  ASSERT_EQ(november.lines.size(), 2u);  // the later sale, and the return of October's
  EXPECT_EQ(november.lines[1].ref_period, "2026-10");
  EXPECT_TRUE(november.lines[1].adjustment);
  EXPECT_EQ(november.totals.payout, 500 - 700);
  EXPECT_EQ(entry_window(Party::kSeller, "sl_1", oct.next(), kolkata, closes).from_ms,
            kNov + 4 * kHour);
  expect_each_entry_once(entries, kolkata, closes);
}

TEST(Statements, ASellerMovedWestAfterACloseLosesNoEntry) {
  // October closed in Kolkata (it ends at 18:30Z on 31 October), then the seller moves to New
  // York, where October would end at 04:00Z on 1 November.
  const auto oct = *parse_period("2026-10");
  std::vector<StatementEntry> entries{
      entry(1, kSaleEntry, kNov - 6 * kHour, 1000, 700),  // 23:30 on 31 October in Kolkata
      entry(2, kSaleEntry, kNov - 4 * kHour, 1000, 600),  // 01:30 on 1 November in Kolkata
  };
  Closes closes = october_closed_in("Asia/Kolkata", entries, 2);
  entries.push_back(entry(3, kSaleEntry, kNov + 1 * kHour, 1000, 500));
  const auto& ny = *TimeZone::cached("America/New_York");
  EXPECT_EQ(statement_of(Party::kSeller, "sl_1", oct, ny, entries, closes).totals.payout, 700);
  const Statement november = statement_of(Party::kSeller, "sl_1", oct.next(), ny, entries, closes);
  EXPECT_EQ(november.bounds.from_ms, kNov - 11 * kHour / 2);
  EXPECT_EQ(november.bounds.to_ms, kDec + 5 * kHour);
  EXPECT_EQ(november.totals.payout, 600 + 500);  // neither is October's in New York any more
  expect_each_entry_once(entries, ny, closes);
  // November closed in New York keeps its start; December, open, starts at its frozen end.
  const std::vector<Account> seller{{Party::kSeller, "sl_1", "America/New_York"}};
  const auto frozen = freeze(oct.next(), seller, entries, closes);
  ASSERT_EQ(frozen.size(), 2u);
  EXPECT_EQ(frozen[1].totals.payout, 1100);
  closes["2026-11"] = {oct.next(), 3, "op", 1, {}};
  for (const auto& f : frozen) closes["2026-11"].zones[{f.party, f.account_id}] = f.zone;
  const auto& utc_zone = utc();
  EXPECT_EQ(statement_of(Party::kSeller, "sl_1", oct.next(), utc_zone, entries, closes).totals,
            frozen[1].totals);
  EXPECT_EQ(account_bounds(Party::kSeller, "sl_1", oct.next().next(), utc_zone, closes).from_ms,
            kDec + 5 * kHour);
  expect_each_entry_once(entries, utc_zone, closes);
}

}  // namespace
}  // namespace leadflow::money
