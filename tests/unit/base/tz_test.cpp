#include "leadflow/base/tz.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/base/time_format.hpp"

// Known facts come from the IANA rules (and were cross-checked against Python's zoneinfo):
// US DST starts the second Sunday of March at 02:00 local and ends the first Sunday of November at
// 02:00 local; the EU changes at 01:00 UTC on the last Sundays of March and October; Sydney and
// Lord Howe are on DST from the first Sunday of October to the first Sunday of April.

namespace leadflow {
namespace {

using nlohmann::json;

constexpr int kEst = -5 * 3600;
constexpr int kEdt = -4 * 3600;

std::int64_t utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
  return days_from_civil(y, mo, d) * 86'400 + h * 3600 + mi * 60 + s;
}

std::shared_ptr<const TimeZone> zone(const std::string& name) {
  auto z = TimeZone::load(name);
  EXPECT_NE(z, nullptr) << name << " did not load (is tzdata installed?)";
  return z;
}

// ---------------------------------------------------------------------------------------------
// Synthetic TZif files, for the footer forms no shipped zone uses and for malformed input.

struct TzifSpec {
  char version = '2';
  std::vector<std::int64_t> times = {};
  std::vector<std::uint8_t> types = {};    // type index of each transition
  std::vector<std::int32_t> utoffs = {};   // one time type each; type 0 applies before the first
  std::optional<std::string> footer = {};  // nullopt: no footer at all (a truncated v2 file)
  std::uint32_t leapcnt = 0;
};

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string tzif_block(const TzifSpec& s, int time_size) {
  std::string out = "TZif";
  out.push_back(s.version);
  out.append(15, '\0');
  for (std::uint64_t count : {std::size_t{0}, std::size_t{0}, std::size_t{s.leapcnt},
                              s.times.size(), s.utoffs.size(), std::size_t{4}})
    put_be(out, count, 4);
  for (std::int64_t t : s.times) put_be(out, static_cast<std::uint64_t>(t), time_size);
  for (std::uint8_t i : s.types) out.push_back(static_cast<char>(i));
  for (std::int32_t off : s.utoffs) {
    put_be(out, static_cast<std::uint32_t>(off), 4);
    out.push_back('\0');  // isdst
    out.push_back('\0');  // abbreviation index
  }
  out.append("ABC", 4);
  for (std::uint32_t i = 0; i < s.leapcnt; ++i) {
    put_be(out, 78'796'800, time_size);  // 1972-07-01
    put_be(out, 1, 4);
  }
  return out;
}

std::string tzif(const TzifSpec& s) {
  if (s.version == '\0') return tzif_block(s, 4);
  std::string out = tzif_block(s, 4) + tzif_block(s, 8);
  if (s.footer) out += "\n" + *s.footer + "\n";
  return out;
}

/// Points TZDIR at a private directory of generated zone files for the duration of a test.
class SyntheticZones : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("TZDIR")) old_tzdir_ = old;
    std::string tmpl = (std::filesystem::temp_directory_path() / "leadflow_tz_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::setenv("TZDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (old_tzdir_)
      ::setenv("TZDIR", old_tzdir_->c_str(), 1);
    else
      ::unsetenv("TZDIR");
    std::filesystem::remove_all(dir_);
  }

  void write(const std::string& name, const std::string& bytes) {
    const auto path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }

  // A "slim" file: one transition long ago into standard time, then only the footer.
  std::shared_ptr<const TimeZone> footer_zone(const std::string& footer, std::int32_t std_offset) {
    write("Test/Footer", tzif({.times = {utc(1990, 1, 1)},
                               .types = {1},
                               .utoffs = {0, std_offset},
                               .footer = footer}));
    return TimeZone::load("Test/Footer");
  }

  std::filesystem::path dir_;
  std::optional<std::string> old_tzdir_;
};

// ---------------------------------------------------------------------------------------------
// Names

TEST(TimeZoneLoad, RefusesUnsafeAndUnknownNames) {
  for (const char* name :
       {"", "../etc/passwd", "/etc/localtime", "Nope/Zone", "America/../UTC", "America/New York",
        "America/New_York\n", "America/New_York.bak", "America", "America/", "Europe\\London"})
    EXPECT_EQ(TimeZone::load(name), nullptr) << name;
  EXPECT_EQ(TimeZone::load(std::string(300, 'A')), nullptr);
}

TEST(TimeZoneLoad, LoadsRealZonesWithTheirNames) {
  for (const char* name : {"America/New_York", "Europe/London", "Asia/Kolkata", "Etc/GMT+5",
                           "America/Argentina/Buenos_Aires", "America/Port-au-Prince"}) {
    auto z = TimeZone::load(name);
    ASSERT_NE(z, nullptr) << name;
    EXPECT_EQ(z->name(), name);
  }
  EXPECT_EQ(zone("Etc/GMT+5")->offset_at(utc(2026, 6, 1)), -5 * 3600);  // POSIX sign: west
}

TEST_F(SyntheticZones, UtcWorksWithoutAnyFiles) {
  for (const char* name : {"UTC", "Etc/UTC"}) {
    auto z = TimeZone::load(name);
    ASSERT_NE(z, nullptr) << name;
    EXPECT_EQ(z->name(), name);
    EXPECT_EQ(z->offset_at(utc(2026, 7, 1)), 0);
    EXPECT_EQ(z->start_of_day(utc(2026, 7, 1, 13, 5)), utc(2026, 7, 1));
    EXPECT_EQ(z->start_of_week(utc(2026, 7, 1, 13, 5)), utc(2026, 6, 29));  // a Monday
    EXPECT_EQ(z->start_of_month(utc(2026, 7, 31, 23, 59)), utc(2026, 7, 1));
  }
  EXPECT_EQ(TimeZone::load("America/New_York"), nullptr);  // TZDIR is the empty directory
}

// ---------------------------------------------------------------------------------------------
// Offsets in real zones

TEST(TimeZoneOffsets, NewYork2026) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  EXPECT_EQ(ny->offset_at(utc(2026, 1, 15, 12)), kEst);
  EXPECT_EQ(ny->offset_at(utc(2026, 7, 15, 12)), kEdt);
  // Second Sunday of March: 2026-03-08 02:00 EST = 07:00 UTC.
  EXPECT_EQ(ny->offset_at(utc(2026, 3, 8, 7) - 1), kEst);
  EXPECT_EQ(ny->offset_at(utc(2026, 3, 8, 7)), kEdt);
  // First Sunday of November: 2026-11-01 02:00 EDT = 06:00 UTC.
  EXPECT_EQ(ny->offset_at(utc(2026, 11, 1, 6) - 1), kEdt);
  EXPECT_EQ(ny->offset_at(utc(2026, 11, 1, 6)), kEst);
}

TEST(TimeZoneOffsets, NewYorkFarFutureFollowsTheFooterRule) {
  // Past the transitions any file lists (2037 in "fat" files, 2007 in "slim" ones).
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  EXPECT_EQ(ny->offset_at(utc(2070, 1, 15)), kEst);
  EXPECT_EQ(ny->offset_at(utc(2070, 7, 15)), kEdt);
  // 2070: March 1 is a Saturday, so the second Sunday is March 9; November 2 is the first Sunday.
  EXPECT_EQ(ny->offset_at(utc(2070, 3, 9, 7) - 1), kEst);
  EXPECT_EQ(ny->offset_at(utc(2070, 3, 9, 7)), kEdt);
  EXPECT_EQ(ny->offset_at(utc(2070, 11, 2, 6) - 1), kEdt);
  EXPECT_EQ(ny->offset_at(utc(2070, 11, 2, 6)), kEst);
  // Beyond the unrolled years the footer is evaluated directly: 2300-03-11 is the second Sunday.
  EXPECT_EQ(ny->offset_at(utc(2300, 3, 11, 7) - 1), kEst);
  EXPECT_EQ(ny->offset_at(utc(2300, 3, 11, 7)), kEdt);
  EXPECT_EQ(ny->offset_at(utc(2300, 7, 4)), kEdt);
}

TEST(TimeZoneOffsets, London) {
  auto london = zone("Europe/London");
  ASSERT_NE(london, nullptr);
  EXPECT_EQ(london->offset_at(utc(2026, 1, 15)), 0);
  EXPECT_EQ(london->offset_at(utc(2026, 7, 15)), 3600);
  EXPECT_EQ(london->offset_at(utc(2026, 3, 29, 1) - 1), 0);
  EXPECT_EQ(london->offset_at(utc(2026, 3, 29, 1)), 3600);
  EXPECT_EQ(london->offset_at(utc(2026, 10, 25, 1) - 1), 3600);
  EXPECT_EQ(london->offset_at(utc(2026, 10, 25, 1)), 0);
  EXPECT_EQ(london->offset_at(utc(2070, 7, 15)), 3600);
}

TEST(TimeZoneOffsets, FixedHalfAndQuarterHourZones) {
  auto kolkata = zone("Asia/Kolkata");
  auto kathmandu = zone("Asia/Kathmandu");
  ASSERT_NE(kolkata, nullptr);
  ASSERT_NE(kathmandu, nullptr);
  for (std::int64_t t : {utc(2026, 1, 15), utc(2026, 7, 15), utc(2070, 3, 9, 7), utc(2400, 1, 1)}) {
    EXPECT_EQ(kolkata->offset_at(t), 19'800);
    EXPECT_EQ(kathmandu->offset_at(t), 20'700);
  }
}

TEST(TimeZoneOffsets, SydneyHasSouthernDst) {
  auto sydney = zone("Australia/Sydney");
  ASSERT_NE(sydney, nullptr);
  EXPECT_EQ(sydney->offset_at(utc(2026, 1, 15)), 11 * 3600);
  EXPECT_EQ(sydney->offset_at(utc(2026, 7, 15)), 10 * 3600);
  // Ends the first Sunday of April (2026-04-05) at 03:00 AEDT, starts the first Sunday of October
  // (2026-10-04) at 02:00 AEST.
  EXPECT_EQ(sydney->offset_at(utc(2026, 4, 4, 16) - 1), 11 * 3600);
  EXPECT_EQ(sydney->offset_at(utc(2026, 4, 4, 16)), 10 * 3600);
  EXPECT_EQ(sydney->offset_at(utc(2026, 10, 3, 16) - 1), 10 * 3600);
  EXPECT_EQ(sydney->offset_at(utc(2026, 10, 3, 16)), 11 * 3600);
  EXPECT_EQ(sydney->offset_at(utc(2070, 12, 25)), 11 * 3600);
  EXPECT_EQ(sydney->offset_at(utc(2070, 6, 25)), 10 * 3600);
}

TEST(TimeZoneOffsets, LordHoweHasHalfHourDst) {
  auto lord_howe = zone("Australia/Lord_Howe");
  ASSERT_NE(lord_howe, nullptr);
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 1, 15)), 11 * 3600);
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 7, 15)), 10 * 3600 + 1800);
  // 2026-10-04 02:00 +10:30 becomes 02:30 +11.
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 10, 3, 15, 30) - 1), 10 * 3600 + 1800);
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 10, 3, 15, 30)), 11 * 3600);
}

TEST(TimeZoneOffsets, BeforeTheFirstTransitionUsesLocalMeanTime) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  EXPECT_EQ(ny->offset_at(utc(1850, 1, 1)), -17'762);  // LMT -4:56:02
  EXPECT_EQ(ny->offset_at(std::numeric_limits<std::int64_t>::min()), -17'762);
  const int far = ny->offset_at(std::numeric_limits<std::int64_t>::max());  // no overflow
  EXPECT_TRUE(far == kEst || far == kEdt) << far;
}

// ---------------------------------------------------------------------------------------------
// Local time and period starts

TEST(TimeZoneLocal, CivilTimeAcrossSpringForward) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  const auto before = ny->local(utc(2026, 3, 8, 7) - 1);
  EXPECT_EQ(before.year, 2026);
  EXPECT_EQ(before.month, 3);
  EXPECT_EQ(before.day, 8);
  EXPECT_EQ(before.weekday, 0);  // Sunday
  EXPECT_EQ(before.minute_of_day, 1 * 60 + 59);
  EXPECT_EQ(ny->local(utc(2026, 3, 8, 7)).minute_of_day, 3 * 60);

  const auto new_year = ny->local(utc(2026, 1, 1, 4, 59));  // still 2025 in New York
  EXPECT_EQ(new_year.year, 2025);
  EXPECT_EQ(new_year.month, 12);
  EXPECT_EQ(new_year.day, 31);
  EXPECT_EQ(new_year.weekday, 3);  // Wednesday
  EXPECT_EQ(new_year.minute_of_day, 23 * 60 + 59);

  const auto kolkata = zone("Asia/Kolkata")->local(utc(2026, 1, 1));
  EXPECT_EQ(kolkata.day, 1);
  EXPECT_EQ(kolkata.weekday, 4);  // Thursday
  EXPECT_EQ(kolkata.minute_of_day, 5 * 60 + 30);
}

TEST(TimeZoneStarts, HourInHalfAndQuarterHourZones) {
  auto kolkata = zone("Asia/Kolkata");
  auto kathmandu = zone("Asia/Kathmandu");
  ASSERT_NE(kolkata, nullptr);
  ASSERT_NE(kathmandu, nullptr);
  EXPECT_EQ(kolkata->start_of_hour(utc(2026, 1, 1, 0, 10)), utc(2025, 12, 31, 23, 30));  // 05:40
  EXPECT_EQ(kolkata->start_of_hour(utc(2026, 1, 1, 0, 30)), utc(2026, 1, 1, 0, 30));     // 06:00
  EXPECT_EQ(kathmandu->start_of_hour(utc(2026, 1, 1, 0, 10)), utc(2026, 1, 1, 0, 15) - 3600);
  EXPECT_EQ(kolkata->start_of_day(utc(2026, 1, 1, 12)), utc(2025, 12, 31, 18, 30));
  EXPECT_EQ(kathmandu->start_of_day(utc(2026, 1, 1, 12)), utc(2025, 12, 31, 18, 15));
}

TEST(TimeZoneStarts, HourAroundNewYorkTransitions) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  // Spring forward: 03:00 EDT follows 01:59:59 EST.
  EXPECT_EQ(ny->start_of_hour(utc(2026, 3, 8, 7, 30)), utc(2026, 3, 8, 7));
  EXPECT_EQ(ny->start_of_hour(utc(2026, 3, 8, 6, 59)), utc(2026, 3, 8, 6));
  // Fall back: 01:00-02:00 happens twice; each is its own hour.
  EXPECT_EQ(ny->start_of_hour(utc(2026, 11, 1, 5, 30)), utc(2026, 11, 1, 5));  // 01:30 EDT
  EXPECT_EQ(ny->start_of_hour(utc(2026, 11, 1, 6, 30)), utc(2026, 11, 1, 6));  // 01:30 EST
}

TEST(TimeZoneStarts, HourAroundLordHoweHalfHourTransitions) {
  auto lord_howe = zone("Australia/Lord_Howe");
  ASSERT_NE(lord_howe, nullptr);
  // 2026-10-04: 02:00 +10:30 jumps to 02:30 +11, so hour 02 starts at the jump and lasts half an
  // hour; hour 01 (+10:30) is whole, and 03:00 +11 starts the next.
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 10, 3, 15, 45)), utc(2026, 10, 3, 15, 30));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 10, 3, 15, 30)), utc(2026, 10, 3, 15, 30));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 10, 3, 15, 29)), utc(2026, 10, 3, 14, 30));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 10, 3, 16, 5)), utc(2026, 10, 3, 16));
  // 2026-04-05: 02:00 +11 falls back to 01:30 +10:30. 01:00-02:00 +11 is one hour (14:00-15:00
  // UTC); the repeated 01:30-02:00 is an hour of its own at +10:30 (15:00-15:30 UTC), not folded
  // into the hour before; 02:00 +10:30 starts the next (15:30 UTC).
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 14, 40)), utc(2026, 4, 4, 14));  // 01:40 +11
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 15) - 1), utc(2026, 4, 4, 14));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 15)), utc(2026, 4, 4, 15));  // 01:30 +10:30
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 15, 15)), utc(2026, 4, 4, 15));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 15, 29)), utc(2026, 4, 4, 15));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 15, 30)), utc(2026, 4, 4, 15, 30));
  EXPECT_EQ(lord_howe->start_of_hour(utc(2026, 4, 4, 16, 29)), utc(2026, 4, 4, 15, 30));
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 4, 4, 14)), 11 * 3600);
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 4, 4, 15)), 10 * 3600 + 1800);
  EXPECT_EQ(lord_howe->local(utc(2026, 4, 4, 15)).minute_of_day, 90);  // labelled 01:30+10:30
}

TEST(TimeZoneStarts, HourInAThreeQuarterHourZone) {
  // Eucla is 8:45 east of UTC, without DST: hours start at hh:00 local, hh:15 UTC.
  auto eucla = zone("Australia/Eucla");
  ASSERT_NE(eucla, nullptr);
  EXPECT_EQ(eucla->offset_at(utc(2026, 1, 1)), 8 * 3600 + 45 * 60);
  EXPECT_EQ(eucla->start_of_hour(utc(2026, 1, 1, 0, 10)), utc(2025, 12, 31, 23, 15));  // 08:55
  EXPECT_EQ(eucla->start_of_hour(utc(2026, 1, 1, 0, 15)), utc(2026, 1, 1, 0, 15));     // 09:00
  EXPECT_EQ(eucla->start_of_hour(utc(2026, 7, 1, 12, 14)), utc(2026, 7, 1, 11, 15));
}

TEST(TimeZoneStarts, DayAroundNewYorkTransitions) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  // The 23-hour day: midnight was still EST.
  EXPECT_EQ(ny->start_of_day(utc(2026, 3, 8, 17)), utc(2026, 3, 8, 5));
  EXPECT_EQ(ny->start_of_day(utc(2026, 3, 9, 3, 59)), utc(2026, 3, 8, 5));  // 23:59 EDT
  // The day after starts at an EDT midnight.
  EXPECT_EQ(ny->start_of_day(utc(2026, 3, 9, 12)), utc(2026, 3, 9, 4));
  // The 25-hour day: midnight was still EDT.
  EXPECT_EQ(ny->start_of_day(utc(2026, 11, 1, 20)), utc(2026, 11, 1, 4));
  EXPECT_EQ(ny->start_of_day(utc(2026, 11, 2, 4, 59)), utc(2026, 11, 1, 4));  // 23:59 EST
  EXPECT_EQ(ny->start_of_day(utc(2026, 11, 2, 5)), utc(2026, 11, 2, 5));
  // Exactly at midnight.
  EXPECT_EQ(ny->start_of_day(utc(2026, 7, 1, 4)), utc(2026, 7, 1, 4));
  EXPECT_EQ(ny->start_of_day(utc(2026, 7, 1, 4) - 1), utc(2026, 6, 30, 4));
}

TEST(TimeZoneStarts, DayWhoseMidnightIsSkipped) {
  // Santiago springs forward at 24:00 on the first Saturday of September: 2026-09-06 has no
  // 00:00, and begins at 01:00 -03, the instant of the jump.
  auto santiago = zone("America/Santiago");
  ASSERT_NE(santiago, nullptr);
  EXPECT_EQ(santiago->offset_at(utc(2026, 9, 6, 4) - 1), -4 * 3600);
  EXPECT_EQ(santiago->offset_at(utc(2026, 9, 6, 4)), -3 * 3600);
  EXPECT_EQ(santiago->start_of_day(utc(2026, 9, 6, 15)), utc(2026, 9, 6, 4));
  EXPECT_EQ(santiago->start_of_day(utc(2026, 9, 6, 4)), utc(2026, 9, 6, 4));
  EXPECT_EQ(santiago->start_of_day(utc(2026, 9, 6, 4) - 1), utc(2026, 9, 5, 4));
  EXPECT_EQ(santiago->local(utc(2026, 9, 6, 4)).minute_of_day, 60);
  // And falls back at 24:00 on the first Saturday of April: 2026-04-04 gets 23:00-24:00 twice, and
  // 2026-04-05 begins once the second 24:00 arrives, at 00:00 -04.
  EXPECT_EQ(santiago->start_of_day(utc(2026, 4, 5, 12)), utc(2026, 4, 5, 4));
  EXPECT_EQ(santiago->start_of_day(utc(2026, 4, 5, 3, 30)), utc(2026, 4, 4, 3));  // 23:30 -04
}

TEST(TimeZoneStarts, WeekStartsOnLocalMonday) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  EXPECT_EQ(ny->start_of_week(utc(2026, 3, 11, 12)), utc(2026, 3, 9, 4));  // Wednesday, EDT
  // Sunday 2026-03-08 belongs to the week that began on Monday 2026-03-02, in EST.
  EXPECT_EQ(ny->start_of_week(utc(2026, 3, 8, 12)), utc(2026, 3, 2, 5));
  EXPECT_EQ(ny->start_of_week(utc(2026, 3, 9, 4)), utc(2026, 3, 9, 4));      // Monday 00:00
  EXPECT_EQ(ny->start_of_week(utc(2026, 3, 9, 4) - 1), utc(2026, 3, 2, 5));  // Sunday 23:59:59
  // Monday 2026-11-02 00:30 EST; the week before started in EDT.
  EXPECT_EQ(ny->start_of_week(utc(2026, 11, 2, 5, 30)), utc(2026, 11, 2, 5));
  EXPECT_EQ(ny->start_of_week(utc(2026, 11, 1, 12)), utc(2026, 10, 26, 4));
  // Sydney's Monday begins on Sunday, UTC.
  EXPECT_EQ(zone("Australia/Sydney")->start_of_week(utc(2026, 7, 6, 2)), utc(2026, 7, 5, 14));
}

TEST(TimeZoneStarts, MonthAroundTransitions) {
  auto ny = zone("America/New_York");
  ASSERT_NE(ny, nullptr);
  EXPECT_EQ(ny->start_of_month(utc(2026, 3, 15)), utc(2026, 3, 1, 5));        // began in EST
  EXPECT_EQ(ny->start_of_month(utc(2026, 11, 15)), utc(2026, 11, 1, 4));      // began in EDT
  EXPECT_EQ(ny->start_of_month(utc(2026, 4, 1, 3, 59)), utc(2026, 3, 1, 5));  // Mar 31 23:59
  EXPECT_EQ(ny->start_of_month(utc(2026, 4, 1, 4)), utc(2026, 4, 1, 4));
  EXPECT_EQ(ny->start_of_month(utc(2026, 1, 1, 3)), utc(2025, 12, 1, 5));
  auto sydney = zone("Australia/Sydney");
  EXPECT_EQ(sydney->start_of_month(utc(2026, 4, 20)), utc(2026, 3, 31, 13));   // 1 Apr, AEDT
  EXPECT_EQ(sydney->start_of_month(utc(2026, 10, 20)), utc(2026, 9, 30, 14));  // 1 Oct, AEST
}

TEST(TimeZoneStarts, StartsNeverExceedTheInstantAndAreStable) {
  // Every quarter hour through 2026 in zones with awkward rules: start <= t, start_of(start) ==
  // start, and the start has the same local period as t.
  for (const char* name :
       {"America/New_York", "Australia/Lord_Howe", "America/Santiago", "Asia/Kathmandu",
        "Europe/Dublin", "America/Nuuk", "Australia/Eucla", "Asia/Kolkata"}) {
    auto z = zone(name);
    ASSERT_NE(z, nullptr);
    for (std::int64_t t = utc(2026, 1, 1); t < utc(2027, 1, 1); t += 900) {
      const auto lt = z->local(t);
      const std::int64_t day = z->start_of_day(t);
      const std::int64_t hour = z->start_of_hour(t);
      const std::int64_t month = z->start_of_month(t);
      const std::int64_t week = z->start_of_week(t);
      ASSERT_LE(day, t) << name << " " << t;
      ASSERT_LE(hour, t) << name << " " << t;
      ASSERT_LE(month, day) << name << " " << t;
      ASSERT_LE(week, day) << name << " " << t;
      ASSERT_GE(hour, day) << name << " " << t;
      ASSERT_EQ(z->start_of_day(day), day) << name << " " << t;
      ASSERT_EQ(z->start_of_hour(hour), hour) << name << " " << t;
      const auto ld = z->local(day);
      ASSERT_EQ(ld.day, lt.day) << name << " " << t;
      ASSERT_LE(ld.minute_of_day, 60) << name << " " << t;  // 00:00, or 01:00 after a jump
      ASSERT_EQ(z->local(month).day, 1) << name << " " << t;
      ASSERT_EQ(z->local(week).weekday, 1) << name << " " << t;
      ASSERT_EQ(z->local(hour).minute_of_day / 60, lt.minute_of_day / 60) << name << " " << t;
      // An hour has one offset: the one its label shows.
      ASSERT_EQ(z->offset_at(hour), z->offset_at(t)) << name << " " << t;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The footer, through generated files

TEST_F(SyntheticZones, SlimFileMatchesTheFullOne) {
  // What Debian's slim New York looks like: transitions stop in 2007, the footer does the rest.
  write("Slim/New_York", tzif({.times = {utc(2007, 3, 11, 7)},
                               .types = {1},
                               .utoffs = {kEst, kEdt},
                               .footer = "EST5EDT,M3.2.0,M11.1.0"}));
  auto slim = TimeZone::load("Slim/New_York");
  ASSERT_NE(slim, nullptr);
  EXPECT_EQ(slim->offset_at(utc(2026, 3, 8, 7) - 1), kEst);
  EXPECT_EQ(slim->offset_at(utc(2026, 3, 8, 7)), kEdt);
  EXPECT_EQ(slim->offset_at(utc(2026, 11, 1, 6) - 1), kEdt);
  EXPECT_EQ(slim->offset_at(utc(2026, 11, 1, 6)), kEst);

  ::unsetenv("TZDIR");
  auto full = zone("America/New_York");
  ::setenv("TZDIR", dir_.c_str(), 1);
  ASSERT_NE(full, nullptr);
  for (std::int64_t t = utc(2007, 3, 11, 7); t < utc(2045, 1, 1); t += 3 * 3600 + 7)
    ASSERT_EQ(slim->offset_at(t), full->offset_at(t)) << t;
  for (std::int64_t t = utc(2195, 1, 1); t < utc(2205, 1, 1); t += 3 * 3600 + 7)
    ASSERT_EQ(slim->offset_at(t), full->offset_at(t)) << t;
  for (std::int64_t t : {utc(2026, 3, 8, 17), utc(2026, 11, 1, 6, 30), utc(2090, 11, 5, 5, 30)}) {
    EXPECT_EQ(slim->start_of_day(t), full->start_of_day(t));
    EXPECT_EQ(slim->start_of_hour(t), full->start_of_hour(t));
  }
}

TEST_F(SyntheticZones, JulianDayForms) {
  // "Jn" never counts February 29: J60 is March 1 every year. "n" counts from 0 and does: day 59
  // is February 29 in a leap year. Both at 00:00 local standard time, UTC-3.
  auto julian = footer_zone("AAA3BBB,J60/0,J300/0", -3 * 3600);
  ASSERT_NE(julian, nullptr);
  EXPECT_EQ(julian->offset_at(utc(2024, 3, 1, 3) - 1), -3 * 3600);
  EXPECT_EQ(julian->offset_at(utc(2024, 3, 1, 3)), -2 * 3600);
  EXPECT_EQ(julian->offset_at(utc(2025, 3, 1, 3) - 1), -3 * 3600);
  EXPECT_EQ(julian->offset_at(utc(2025, 3, 1, 3)), -2 * 3600);
  // J300 is October 27 in any year; the change happens at 00:00 local DST = 02:00 UTC.
  EXPECT_EQ(julian->offset_at(utc(2024, 10, 27, 2) - 1), -2 * 3600);
  EXPECT_EQ(julian->offset_at(utc(2024, 10, 27, 2)), -3 * 3600);

  auto zero_based = footer_zone("AAA3BBB,59/0,299/0", -3 * 3600);
  ASSERT_NE(zero_based, nullptr);
  EXPECT_EQ(zero_based->offset_at(utc(2024, 2, 29, 3) - 1), -3 * 3600);
  EXPECT_EQ(zero_based->offset_at(utc(2024, 2, 29, 3)), -2 * 3600);
  EXPECT_EQ(zero_based->offset_at(utc(2025, 3, 1, 3) - 1), -3 * 3600);
  EXPECT_EQ(zero_based->offset_at(utc(2025, 3, 1, 3)), -2 * 3600);
  // Beyond the unrolled years, directly from the rule: 2400 is a leap year.
  EXPECT_EQ(zero_based->offset_at(utc(2400, 2, 29, 3) - 1), -3 * 3600);
  EXPECT_EQ(zero_based->offset_at(utc(2400, 2, 29, 3)), -2 * 3600);
}

TEST_F(SyntheticZones, NegativeAndOver24HourRuleTimes) {
  // Nuuk: DST from "the last Saturday of March at 24:00 minus 25 hours", written -1 on the Sunday.
  // 2026-03-29 -01:00 local (-02) = 2026-03-29 01:00 UTC; ends 2026-10-25 00:00 -01 = 01:00 UTC.
  auto nuuk = footer_zone("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", -2 * 3600);
  ASSERT_NE(nuuk, nullptr);
  EXPECT_EQ(nuuk->offset_at(utc(2026, 3, 29, 1) - 1), -2 * 3600);
  EXPECT_EQ(nuuk->offset_at(utc(2026, 3, 29, 1)), -1 * 3600);
  EXPECT_EQ(nuuk->offset_at(utc(2026, 10, 25, 1) - 1), -1 * 3600);
  EXPECT_EQ(nuuk->offset_at(utc(2026, 10, 25, 1)), -2 * 3600);
  // Jerusalem: the Friday before the last Sunday of March at 02:00, written as the fourth
  // Thursday at 26:00. 2026-03-26 26:00 IST = 2026-03-27 00:00 UTC.
  auto jerusalem = footer_zone("IST-2IDT,M3.4.4/26,M10.5.0", 2 * 3600);
  ASSERT_NE(jerusalem, nullptr);
  EXPECT_EQ(jerusalem->offset_at(utc(2026, 3, 27) - 1), 2 * 3600);
  EXPECT_EQ(jerusalem->offset_at(utc(2026, 3, 27)), 3 * 3600);
  // Both match the shipped zones.
  ::unsetenv("TZDIR");
  auto real_nuuk = zone("America/Nuuk");
  auto real_jerusalem = zone("Asia/Jerusalem");
  ::setenv("TZDIR", dir_.c_str(), 1);
  for (std::int64_t t = utc(2030, 1, 1); t < utc(2036, 1, 1); t += 2 * 3600 + 11) {
    ASSERT_EQ(nuuk->offset_at(t), real_nuuk->offset_at(t)) << t;
    ASSERT_EQ(jerusalem->offset_at(t), real_jerusalem->offset_at(t)) << t;
  }
}

TEST_F(SyntheticZones, ExplicitDstOffsetAndMinutes) {
  // Lord Howe: +10:30 standard, +11 DST; Chatham: +12:45 / +13:45 with changes at 2:45 and 3:45.
  auto lord_howe = footer_zone("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", 37'800);
  ASSERT_NE(lord_howe, nullptr);
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 10, 3, 15, 30) - 1), 37'800);
  EXPECT_EQ(lord_howe->offset_at(utc(2026, 10, 3, 15, 30)), 39'600);
  auto chatham = footer_zone("<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45", 45'900);
  ASSERT_NE(chatham, nullptr);
  // Last Sunday of September 2026 is the 27th: 02:45 +12:45 = 2026-09-26 14:00 UTC.
  EXPECT_EQ(chatham->offset_at(utc(2026, 9, 26, 14) - 1), 45'900);
  EXPECT_EQ(chatham->offset_at(utc(2026, 9, 26, 14)), 49'500);
}

TEST_F(SyntheticZones, DstAllYearAndDefaultRules) {
  // DST "ends" at the instant next year's starts: always DST.
  auto always = footer_zone("EST5EDT,0/0,J365/25", kEst);
  ASSERT_NE(always, nullptr);
  for (std::int64_t t : {utc(2030, 1, 1, 0, 30), utc(2030, 1, 1, 5), utc(2030, 7, 1),
                         utc(2030, 12, 31, 23), utc(2031, 1, 1, 5), utc(2500, 1, 1, 5)})
    EXPECT_EQ(always->offset_at(t), kEdt) << t;
  // No rule after the DST name: the US rules, DST one hour ahead.
  auto us_default = footer_zone("EST5EDT", kEst);
  ASSERT_NE(us_default, nullptr);
  EXPECT_EQ(us_default->offset_at(utc(2026, 3, 8, 7) - 1), kEst);
  EXPECT_EQ(us_default->offset_at(utc(2026, 3, 8, 7)), kEdt);
  EXPECT_EQ(us_default->offset_at(utc(2026, 11, 1, 6)), kEst);
  // Negative DST (Dublin: IST is standard, GMT the winter "DST").
  auto dublin = footer_zone("IST-1GMT0,M10.5.0,M3.5.0/1", 3600);
  ASSERT_NE(dublin, nullptr);
  EXPECT_EQ(dublin->offset_at(utc(2026, 1, 15)), 0);
  EXPECT_EQ(dublin->offset_at(utc(2026, 7, 15)), 3600);
  EXPECT_EQ(dublin->offset_at(utc(2300, 1, 15)), 0);
}

TEST_F(SyntheticZones, FixedFooterAfterTheLastTransition) {
  // Tehran: DST abolished; the footer's fixed "<+0330>-3:30" holds after the last transition.
  write("Test/Fixed", tzif({.times = {utc(2021, 3, 21, 20, 30), utc(2021, 9, 21, 19, 30)},
                            .types = {1, 0},
                            .utoffs = {12'600, 16'200},
                            .footer = "<+0330>-3:30"}));
  auto fixed = TimeZone::load("Test/Fixed");
  ASSERT_NE(fixed, nullptr);
  EXPECT_EQ(fixed->offset_at(utc(2021, 7, 1)), 16'200);
  EXPECT_EQ(fixed->offset_at(utc(2026, 7, 1)), 12'600);
  EXPECT_EQ(fixed->offset_at(utc(2600, 7, 1)), 12'600);
  // No transitions at all: the footer governs every instant.
  write("Test/OnlyFooter", tzif({.utoffs = {0}, .footer = "<+0545>-5:45"}));
  auto only_footer = TimeZone::load("Test/OnlyFooter");
  ASSERT_NE(only_footer, nullptr);
  EXPECT_EQ(only_footer->offset_at(utc(1900, 1, 1)), 20'700);
  EXPECT_EQ(only_footer->offset_at(utc(2026, 1, 1)), 20'700);
  write("Test/OnlyRule", tzif({.utoffs = {0}, .footer = "EST5EDT,M3.2.0,M11.1.0"}));
  auto only_rule = TimeZone::load("Test/OnlyRule");
  ASSERT_NE(only_rule, nullptr);
  EXPECT_EQ(only_rule->offset_at(utc(1950, 7, 1)), kEdt);
  EXPECT_EQ(only_rule->offset_at(utc(2026, 1, 1)), kEst);
  EXPECT_EQ(only_rule->start_of_day(utc(2026, 3, 8, 17)), utc(2026, 3, 8, 5));
}

TEST_F(SyntheticZones, LastTransitionStandsUntilTheFooterNextChanges) {
  // Ojinaga as an older zic writes it slim: CST from 2022-10-30 08:00 UTC, then US Central rules,
  // which alone would put 2022-10-30..11-06 in CDT. Like tzcode, keep CST until the rule's next
  // change (2023-03-12).
  write("Test/Ojinaga", tzif({.times = {utc(2022, 3, 13, 9), utc(2022, 10, 30, 8)},
                              .types = {1, 2},
                              .utoffs = {-25'200, -21'600, -21'600},
                              .footer = "CST6CDT,M3.2.0,M11.1.0"}));
  auto ojinaga = TimeZone::load("Test/Ojinaga");
  ASSERT_NE(ojinaga, nullptr);
  EXPECT_EQ(ojinaga->offset_at(utc(2022, 11, 1)), -21'600);
  EXPECT_EQ(ojinaga->offset_at(utc(2023, 3, 12, 8) - 1), -21'600);
  EXPECT_EQ(ojinaga->offset_at(utc(2023, 3, 12, 8)), -18'000);
}

TEST_F(SyntheticZones, VersionOneAndEmptyFooter) {
  write("Test/V1",
        tzif({.version = '\0', .times = {utc(2000, 1, 1)}, .types = {1}, .utoffs = {0, 7200}}));
  auto v1 = TimeZone::load("Test/V1");
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->offset_at(utc(1999, 1, 1)), 0);
  EXPECT_EQ(v1->offset_at(utc(2030, 1, 1)), 7200);
  write("Test/Empty",
        tzif({.times = {utc(2000, 1, 1)}, .types = {1}, .utoffs = {0, 7200}, .footer = ""}));
  auto empty = TimeZone::load("Test/Empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->offset_at(utc(2300, 1, 1)), 7200);
}

TEST_F(SyntheticZones, MalformedFilesAreRefused) {
  const TzifSpec good{
      .times = {utc(2000, 1, 1)}, .types = {1}, .utoffs = {0, 3600}, .footer = "<+01>-1"};
  write("Bad/Good", tzif(good));
  ASSERT_NE(TimeZone::load("Bad/Good"), nullptr);  // the baseline the variants break

  const std::string bytes = tzif(good);
  write("Bad/Truncated", bytes.substr(0, bytes.size() - 12));
  write("Bad/Magic", "TZuf" + bytes.substr(4));
  write("Bad/Text", "# not a zone\n");
  write("Bad/Empty", "");
  TzifSpec s = good;
  s.footer = std::nullopt;
  write("Bad/NoFooter", tzif(s));
  s = good;
  s.footer = "EST5EDT,M3.2.0/168,M11.1.0";  // rule times stop at 167 hours
  write("Bad/FooterTime", tzif(s));
  s.footer = "EST5EDT,M13.2.0,M11.1.0";
  write("Bad/FooterMonth", tzif(s));
  s.footer = "E5";
  write("Bad/FooterName", tzif(s));
  s = good;
  s.leapcnt = 1;  // "right/" zones count leap seconds
  write("Bad/Leap", tzif(s));
  s = good;
  s.times = {utc(2000, 1, 1), utc(1999, 1, 1)};
  s.types = {1, 0};
  write("Bad/Order", tzif(s));
  s = good;
  s.types = {2};  // no such time type
  write("Bad/Type", tzif(s));
  s = good;
  s.utoffs = {0, 100'000};  // beyond +-25 hours
  write("Bad/Offset", tzif(s));
  for (const char* name :
       {"Bad/Truncated", "Bad/Magic", "Bad/Text", "Bad/Empty", "Bad/NoFooter", "Bad/FooterTime",
        "Bad/FooterMonth", "Bad/FooterName", "Bad/Leap", "Bad/Order", "Bad/Type", "Bad/Offset"})
    EXPECT_EQ(TimeZone::load(name), nullptr) << name;
}

// ---------------------------------------------------------------------------------------------
// Cache

TEST(TimeZoneCache, ReturnsTheSameZoneAndRemembersMisses) {
  auto a = TimeZone::cached("Europe/Paris");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(TimeZone::cached("Europe/Paris"), a);
  EXPECT_EQ(TimeZone::cached("Nope/Zone"), nullptr);
  EXPECT_EQ(TimeZone::cached("Nope/Zone"), nullptr);
  EXPECT_EQ(TimeZone::cached("../etc/passwd"), nullptr);
}

TEST(TimeZoneCache, SharedAcrossThreads) {
  std::vector<std::shared_ptr<const TimeZone>> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, i] {
      for (int n = 0; n < 200; ++n) seen[i] = TimeZone::cached("Asia/Tokyo");
    });
  for (auto& t : threads) t.join();
  ASSERT_NE(seen[0], nullptr);
  for (const auto& z : seen) EXPECT_EQ(z, seen[0]);
}

TEST(TimeZoneCache, StaysBoundedAndKeepsRealZones) {
  for (int i = 0; i < 1500; ++i)
    EXPECT_EQ(TimeZone::cached("Nope/Zone" + std::to_string(i)), nullptr);
  auto berlin = TimeZone::cached("Europe/Berlin");
  ASSERT_NE(berlin, nullptr);
  EXPECT_EQ(TimeZone::cached("Europe/Berlin"), berlin);
}

// ---------------------------------------------------------------------------------------------
// schedule_open

json weekday_nine_to_five() {
  return json::parse(R"({"timezone": "America/New_York",
                         "hours": {"mon": [["09:00", "17:00"]]}})");
}

TEST(ScheduleOpen, NoScheduleIsAlwaysOpen) {
  const std::int64_t t = utc(2026, 3, 10, 3);
  EXPECT_TRUE(schedule_open(json(nullptr), t));
  EXPECT_TRUE(schedule_open(json::array(), t));
  EXPECT_TRUE(schedule_open(json("always"), t));
  EXPECT_TRUE(schedule_open(json::parse(R"({"timezone": "America/New_York"})"), t));
  EXPECT_TRUE(schedule_open(json::parse(R"({"timezone": "America/New_York", "hours": {}})"), t));
  EXPECT_TRUE(schedule_open(json::parse(R"({"timezone": "America/New_York", "hours": null})"), t));
}

TEST(ScheduleOpen, MondayNineToFiveInNewYork) {
  const json s = weekday_nine_to_five();
  // Monday 2026-03-09, EDT (UTC-4).
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 9, 12, 59)));  // 08:59
  EXPECT_TRUE(schedule_open(s, utc(2026, 3, 9, 13)));       // 09:00
  EXPECT_TRUE(schedule_open(s, utc(2026, 3, 9, 20, 59)));   // 16:59
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 9, 21)));      // 17:00: the end is exclusive
  // Monday 2026-01-05, EST (UTC-5): the same local hours move an hour in UTC.
  EXPECT_FALSE(schedule_open(s, utc(2026, 1, 5, 13, 30)));  // 08:30
  EXPECT_TRUE(schedule_open(s, utc(2026, 1, 5, 14)));       // 09:00
  EXPECT_TRUE(schedule_open(s, utc(2026, 1, 5, 21, 30)));   // 16:30
  // Tuesday is absent from "hours": closed all day.
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 10, 14)));
  // 2026-03-10 02:00 UTC is still Monday 22:00 in New York, after hours.
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 10, 2)));
}

TEST(ScheduleOpen, WeekdayComesFromLocalTime) {
  // Tuesday 2026-03-10 01:00 UTC is Monday 21:00 in New York; open until midnight local.
  const json s = json::parse(R"({"timezone": "America/New_York",
                                 "hours": {"mon": [["20:00", "24:00"]], "tue": []}})");
  EXPECT_TRUE(schedule_open(s, utc(2026, 3, 10, 1)));
  EXPECT_TRUE(schedule_open(s, utc(2026, 3, 10, 3, 59)));  // 23:59 Monday
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 10, 4)));     // 00:00 Tuesday: closed
}

TEST(ScheduleOpen, MidnightEndAndSeveralRanges) {
  const json s = json::parse(R"({"timezone": "Europe/London", "hours": {
      "fri": [["08:00", "12:00"], ["13:00", "24:00"]],
      "sat": [["00:00", "24:00"]],
      "sun": []}})");
  // Friday 2026-01-09 (GMT).
  EXPECT_TRUE(schedule_open(s, utc(2026, 1, 9, 11, 59)));
  EXPECT_FALSE(schedule_open(s, utc(2026, 1, 9, 12, 30)));  // lunch
  EXPECT_TRUE(schedule_open(s, utc(2026, 1, 9, 23, 59)));
  EXPECT_TRUE(schedule_open(s, utc(2026, 1, 10, 0)));  // Saturday
  EXPECT_TRUE(schedule_open(s, utc(2026, 1, 10, 23, 59)));
  EXPECT_FALSE(schedule_open(s, utc(2026, 1, 11, 0)));  // Sunday: an empty day is closed
  EXPECT_FALSE(schedule_open(s, utc(2026, 1, 12, 9)));  // Monday: absent
}

TEST(ScheduleOpen, UnknownZoneIsClosed) {
  for (const char* zone_name : {"Nope/Zone", "../etc/passwd", ""}) {
    json s = json::parse(R"({"hours": {"mon": [["00:00", "24:00"]]}})");
    s["timezone"] = zone_name;
    EXPECT_FALSE(schedule_open(s, utc(2026, 3, 9, 12))) << zone_name;
  }
  const json no_zone = json::parse(R"({"hours": {"mon": [["00:00", "24:00"]]}})");
  EXPECT_FALSE(schedule_open(no_zone, utc(2026, 3, 9, 12)));
}

TEST(ScheduleOpen, MalformedRangesAreIgnored) {
  const json s = json::parse(R"({"timezone": "UTC", "hours": {"mon": [
      ["17:00", "09:00"], ["9:00", "17:00"], ["09:00"], "09:00-17:00", ["09:00", "24:01"],
      ["24:00", "24:00"], [9, 17], ["10:00", "11:00"]]}})");
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 9, 9, 30)));
  EXPECT_TRUE(schedule_open(s, utc(2026, 3, 9, 10, 30)));
  EXPECT_FALSE(schedule_open(s, utc(2026, 3, 9, 16)));
  const json not_a_list = json::parse(R"({"timezone": "UTC", "hours": {"mon": "09:00-17:00"}})");
  EXPECT_FALSE(schedule_open(not_a_list, utc(2026, 3, 9, 12)));
}

}  // namespace
}  // namespace leadflow
