// The reader's hours, days, weeks and months on plain instants: where each begins in its zone,
// its label, and the cuts a report's rollup question is given (docs/time-zones.md).
#include "leadflow/reports/stretches.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace leadflow::reports {
namespace {

constexpr std::int64_t kStretchesMin = 60'000;
constexpr std::int64_t kStretchesHour = 3'600'000;
// 2026-04-04T14:00Z: 01:00 +11:00 on 2026-04-05 in Lord Howe, an hour before it falls back
// half an hour (02:00 +11:00 -> 01:30 +10:30, at 15:00Z).
constexpr std::int64_t kStretchesLordHowe1am = 1'775'311'200'000;
// 2026-11-01T04:00Z: New York's midnight (EDT) on the day it falls back an hour, at 06:00Z.
constexpr std::int64_t kNewYorkNov1 = 1'793'505'600'000;

std::shared_ptr<const TimeZone> zone(const char* name) {
  auto tz = TimeZone::cached(name);
  EXPECT_NE(tz, nullptr) << name;
  return tz;
}

TEST(ReportStretches, LordHoweRepeatedHalfHourIsAnHourOfItsOwnLabelledWithItsOffset) {
  const auto tz = zone("Australia/Lord_Howe");
  const Stretch before =
      stretch_of(*tz, TimeCut::kHour, kStretchesLordHowe1am + 45 * kStretchesMin);
  EXPECT_EQ(before.start_ms, kStretchesLordHowe1am);
  EXPECT_EQ(before.label, "2026-04-05T01:00+11:00");
  const Stretch repeated =
      stretch_of(*tz, TimeCut::kHour, kStretchesLordHowe1am + 75 * kStretchesMin);
  EXPECT_EQ(repeated.start_ms, kStretchesLordHowe1am + kStretchesHour);
  EXPECT_EQ(repeated.label, "2026-04-05T01:30+10:30");
  const Stretch after = stretch_of(*tz, TimeCut::kHour, kStretchesLordHowe1am + 90 * kStretchesMin);
  EXPECT_EQ(after.start_ms, kStretchesLordHowe1am + 90 * kStretchesMin);
  EXPECT_EQ(after.label, "2026-04-05T02:00+10:30");
  EXPECT_EQ(stretch_cuts(*tz, TimeCut::kHour, kStretchesLordHowe1am,
                         kStretchesLordHowe1am + 3 * kStretchesHour),
            (std::vector<std::int64_t>{kStretchesLordHowe1am + kStretchesHour,
                                       kStretchesLordHowe1am + 90 * kStretchesMin,
                                       kStretchesLordHowe1am + 150 * kStretchesMin}));
}

TEST(ReportStretches, NewYorkFallBackRepeatsAnHourAndMakesA25HourDay) {
  const auto tz = zone("America/New_York");
  EXPECT_EQ(
      stretch_of(*tz, TimeCut::kHour, kNewYorkNov1 + kStretchesHour + 30 * kStretchesMin).label,
      "2026-11-01T01:00-04:00");
  EXPECT_EQ(
      stretch_of(*tz, TimeCut::kHour, kNewYorkNov1 + 2 * kStretchesHour + 30 * kStretchesMin).label,
      "2026-11-01T01:00-05:00");
  const Stretch day =
      stretch_of(*tz, TimeCut::kDay, kNewYorkNov1 + 24 * kStretchesHour + 30 * kStretchesMin);
  EXPECT_EQ(day.start_ms, kNewYorkNov1);  // 24.5 hours in, still the same 25-hour day
  EXPECT_EQ(day.label, "2026-11-01");
  EXPECT_EQ(stretch_cuts(*tz, TimeCut::kDay, kNewYorkNov1 - 24 * kStretchesHour,
                         kNewYorkNov1 + 49 * kStretchesHour),
            (std::vector<std::int64_t>{kNewYorkNov1, kNewYorkNov1 + 25 * kStretchesHour}));
  EXPECT_TRUE(
      stretch_cuts(*tz, TimeCut::kNone, kNewYorkNov1, kNewYorkNov1 + 49 * kStretchesHour).empty());
}

TEST(ReportStretches, WeeksStartOnMondayAndMonthsOnTheFirst) {
  const auto tz = zone("America/New_York");
  // 2026-11-01 is a Sunday: its week began on Monday 2026-10-26.
  EXPECT_EQ(stretch_of(*tz, TimeCut::kWeek, kNewYorkNov1 + kStretchesHour).label, "2026-10-26");
  EXPECT_EQ(stretch_of(*tz, TimeCut::kWeek, kNewYorkNov1 + 25 * kStretchesHour).label,
            "2026-11-02");
  const Stretch month = stretch_of(*tz, TimeCut::kMonth, kNewYorkNov1 + 10 * 24 * kStretchesHour);
  EXPECT_EQ(month.label, "2026-11");
  EXPECT_EQ(month.start_ms, kNewYorkNov1);
  // The last hour of October, local, is still October's.
  EXPECT_EQ(stretch_of(*tz, TimeCut::kMonth, kNewYorkNov1 - kStretchesMin).label, "2026-10");
}

TEST(ReportStretches, LocalDatesMidnightsAndOffsets) {
  const auto ny = zone("America/New_York");
  const std::int64_t nov1 = 20'758;  // days since 1970-01-01
  EXPECT_EQ(local_midnight_ms(*ny, nov1), kNewYorkNov1);
  EXPECT_EQ(local_midnight_ms(*ny, nov1 + 1), kNewYorkNov1 + 25 * kStretchesHour);
  EXPECT_EQ(local_date(*ny, kNewYorkNov1), "2026-11-01");
  EXPECT_EQ(local_date(*ny, kNewYorkNov1 - 1), "2026-10-31");
  EXPECT_EQ(offset_text(-5 * 3600), "-05:00");
  EXPECT_EQ(offset_text(5 * 3600 + 45 * 60), "+05:45");
  EXPECT_EQ(offset_text(0), "+00:00");
}

}  // namespace
}  // namespace leadflow::reports
