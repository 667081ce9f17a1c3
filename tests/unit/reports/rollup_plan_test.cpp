// The plan that answers a report from the rollups' tiers: whole UTC days and hours from the
// coarsest tier keeping the keys asked, quarter hours at the edges, never a sum across a cut.
#include <gtest/gtest.h>

#include <random>

#include "leadflow/reports/tiers.hpp"

namespace leadflow::reports {

// Found by argument-dependent lookup (so not in the unnamed namespace).
bool operator==(const RollupRange& a, const RollupRange& b) {
  return a.tier == b.tier && a.from_ms == b.from_ms && a.to_ms == b.to_ms;
}

std::ostream& operator<<(std::ostream& os, const RollupRange& r) {
  return os << "{tier " << r.tier << ", " << r.from_ms << ", " << r.to_ms << "}";
}

namespace {

constexpr std::int64_t kPlanMin = 60'000;
constexpr std::int64_t kPlanHour = 3'600'000;
constexpr std::int64_t kPlanDay = 86'400'000;
constexpr std::int64_t kDay0 = 20'000 * kPlanDay;  // a UTC midnight

RollupQuery question(std::int64_t from, std::int64_t to, std::vector<ReportKey> group = {}) {
  RollupQuery q;
  q.from_ms = from;
  q.to_ms = to;
  q.group = std::move(group);
  return q;
}

TEST(RollupPlan, WholeUtcDaysComeFromTheSmallestDayTierKeepingTheKeys) {
  const auto q = question(kDay0, kDay0 + 30 * kPlanDay);
  EXPECT_EQ(plan_rollup(q, RollupKind::kPerformance),
            (std::vector<RollupRange>{{4, kDay0, kDay0 + 30 * kPlanDay}}));
  EXPECT_EQ(
      plan_rollup(question(kDay0, kDay0 + kPlanDay, {ReportKey::kBuyer}), RollupKind::kRevenue),
      (std::vector<RollupRange>{{5, kDay0, kDay0 + kPlanDay}}));
  EXPECT_EQ(
      plan_rollup(question(kDay0, kDay0 + kPlanDay, {ReportKey::kSource}), RollupKind::kRevenue),
      (std::vector<RollupRange>{{6, kDay0, kDay0 + kPlanDay}}));
  // Two keys no smaller tier keeps together: the day tier keeping every key.
  EXPECT_EQ(plan_rollup(question(kDay0, kDay0 + kPlanDay, {ReportKey::kBuyer, ReportKey::kSource}),
                        RollupKind::kPerformance),
            (std::vector<RollupRange>{{7, kDay0, kDay0 + kPlanDay}}));
  // A filter counts as a key.
  auto filtered = question(kDay0, kDay0 + kPlanDay, {ReportKey::kVertical});
  filtered.filters = {{ReportKey::kSeller, "s1"}, {ReportKey::kCampaign, "c1"}};
  EXPECT_EQ(plan_rollup(filtered, RollupKind::kPerformance),
            (std::vector<RollupRange>{{4, kDay0, kDay0 + kPlanDay}}));
}

TEST(RollupPlan, RaggedEdgesAreReadInHoursThenQuarterHours) {
  const auto q =
      question(kDay0 + 45 * kPlanMin, kDay0 + 3 * kPlanDay + 2 * kPlanHour + 15 * kPlanMin);
  EXPECT_EQ(
      plan_rollup(q, RollupKind::kPerformance),
      (std::vector<RollupRange>{{0, kDay0 + 45 * kPlanMin, kDay0 + kPlanHour},
                                {1, kDay0 + kPlanHour, kDay0 + kPlanDay},
                                {4, kDay0 + kPlanDay, kDay0 + 3 * kPlanDay},
                                {1, kDay0 + 3 * kPlanDay, kDay0 + 3 * kPlanDay + 2 * kPlanHour},
                                {0, kDay0 + 3 * kPlanDay + 2 * kPlanHour,
                                 kDay0 + 3 * kPlanDay + 2 * kPlanHour + 15 * kPlanMin}}));
}

TEST(RollupPlan, KeysNoHourTierKeepsAreReadInQuarterHoursOutsideWholeDays) {
  const auto q = question(kDay0 + 22 * kPlanHour, kDay0 + 2 * kPlanDay + kPlanHour,
                          {ReportKey::kBuyer, ReportKey::kVertical});
  EXPECT_EQ(
      plan_rollup(q, RollupKind::kPerformance),
      (std::vector<RollupRange>{{0, kDay0 + 22 * kPlanHour, kDay0 + kPlanDay},
                                {7, kDay0 + kPlanDay, kDay0 + 2 * kPlanDay},
                                {0, kDay0 + 2 * kPlanDay, kDay0 + 2 * kPlanDay + kPlanHour}}));
}

TEST(RollupPlan, DaysCutAtAnotherZonesMidnightAreReadInHours) {
  // New York's days (UTC-5): each from 05:00 UTC to 05:00 UTC; no whole UTC day fits in one.
  auto q = question(kDay0 + 5 * kPlanHour, kDay0 + 3 * kPlanDay + 5 * kPlanHour);
  q.by_bucket = true;
  q.cuts = {kDay0 + kPlanDay + 5 * kPlanHour, kDay0 + 2 * kPlanDay + 5 * kPlanHour};
  EXPECT_EQ(plan_rollup(q, RollupKind::kPerformance),
            (std::vector<RollupRange>{{1, q.from_ms, q.to_ms}}));
  // India's (UTC+5:30): cut at 18:30 UTC, so the quarter hours around each cut.
  q = question(kDay0 - 5 * kPlanHour - 30 * kPlanMin,
               kDay0 + kPlanDay - 5 * kPlanHour - 30 * kPlanMin);
  q.by_bucket = true;
  q.cuts = {q.to_ms};  // one local day: a cut at its end cuts nothing
  EXPECT_EQ(plan_rollup(q, RollupKind::kPerformance),
            (std::vector<RollupRange>{{0, q.from_ms, kDay0 - 5 * kPlanHour},
                                      {1, kDay0 - 5 * kPlanHour, kDay0 + 18 * kPlanHour},
                                      {0, kDay0 + 18 * kPlanHour, q.to_ms}}));
}

TEST(RollupPlan, WithoutCutsABucketedQuestionIsReadInQuarterHours) {
  auto q = question(kDay0, kDay0 + 2 * kPlanDay);
  q.by_bucket = true;
  EXPECT_EQ(plan_rollup(q, RollupKind::kPerformance),
            (std::vector<RollupRange>{{0, kDay0, kDay0 + 2 * kPlanDay}}));
  EXPECT_TRUE(plan_rollup(question(kDay0, kDay0), RollupKind::kPerformance).empty());
}

TEST(RollupPlan, TheUnsoldRollupUsesOnlyTiersKeepingTheBuyer) {
  auto q = question(kDay0 + 23 * kPlanHour, kDay0 + 2 * kPlanDay, {ReportKey::kReason});
  q.filters = {{ReportKey::kBuyer, ""}};
  EXPECT_EQ(plan_rollup(q, RollupKind::kUnsold),
            (std::vector<RollupRange>{{2, kDay0 + 23 * kPlanHour, kDay0 + kPlanDay},
                                      {5, kDay0 + kPlanDay, kDay0 + 2 * kPlanDay}}));
  q.group.push_back(ReportKey::kCampaign);
  EXPECT_EQ(plan_rollup(q, RollupKind::kUnsold),
            (std::vector<RollupRange>{{0, kDay0 + 23 * kPlanHour, kDay0 + kPlanDay},
                                      {7, kDay0 + kPlanDay, kDay0 + 2 * kPlanDay}}));
}

TEST(RollupPlan, EachStretchBetweenCutsIsOneSum) {
  auto q = question(kDay0 + kPlanHour, kDay0 + 3 * kPlanDay);
  EXPECT_TRUE(sum_starts(q).empty());  // not cut by time: one sum
  q.by_bucket = true;
  EXPECT_TRUE(sum_starts(q).empty());  // cut without cuts: each quarter hour
  q.cuts = {kDay0 + 2 * kPlanDay, kDay0 + kPlanDay, kDay0 + kPlanDay, kDay0, kDay0 + 3 * kPlanDay};
  EXPECT_EQ(sum_starts(q),
            (std::vector<std::int64_t>{kDay0 + kPlanHour, kDay0 + kPlanDay, kDay0 + 2 * kPlanDay}));
}

// Whatever the range, cuts and keys: the ranges tile the question's range in order, each tier
// range holds whole buckets of its grain, and none spans a cut.
TEST(RollupPlan, RangesTileTheQuestionAndNeverSpanACut) {
  std::mt19937_64 rng(42);
  const std::vector<std::vector<ReportKey>> groups = {
      {}, {ReportKey::kBuyer}, {ReportKey::kSource, ReportKey::kBuyer}, {ReportKey::kCampaign}};
  for (int round = 0; round < 2000; ++round) {
    const std::int64_t from = kDay0 + static_cast<std::int64_t>(rng() % 400) * kRollupBucketMs;
    const std::int64_t to = from + static_cast<std::int64_t>(rng() % 1200) * kRollupBucketMs;
    auto q = question(from, to, groups[rng() % groups.size()]);
    q.by_bucket = rng() % 2 == 0;
    if (q.by_bucket) {
      const int n = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < n; ++i)
        q.cuts.push_back(from + static_cast<std::int64_t>(rng() % 1300) * kRollupBucketMs);
    }
    const auto kind = rng() % 3 == 0 ? RollupKind::kUnsold : RollupKind::kPerformance;
    const auto plan = plan_rollup(q, kind);
    std::int64_t at = from;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const RollupRange& r = plan[i];
      ASSERT_EQ(r.from_ms, at) << round;
      ASSERT_LT(r.from_ms, r.to_ms) << round;
      if (i > 0) {
        EXPECT_NE(plan[i - 1].tier, r.tier) << "not merged, round " << round;
      }
      if (r.tier != 0) {
        const RollupTier& t = kRollupTiers[r.tier - 1];
        ASSERT_EQ(t.id, r.tier);
        EXPECT_EQ(r.from_ms % t.grain_ms, 0) << round;
        EXPECT_EQ(r.to_ms % t.grain_ms, 0) << round;
        if (kind == RollupKind::kUnsold) {
          EXPECT_TRUE(kept_by_unsold(t));
        }
        // A cut inside a tier range falls on one of its buckets' edges.
        for (std::int64_t c : q.cuts) {
          if (q.by_bucket && c > r.from_ms && c < r.to_ms) {
            EXPECT_EQ(c % t.grain_ms, 0) << round;
          }
        }
      }
      at = r.to_ms;
    }
    EXPECT_EQ(at, from < to ? to : from) << round;
  }
}

}  // namespace
}  // namespace leadflow::reports
