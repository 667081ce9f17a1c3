// The reader's hours, days, weeks and months (stretches.hpp).
#include "leadflow/reports/stretches.hpp"

#include <cstdlib>

#include "leadflow/reports/rollup.hpp"

namespace leadflow::reports {
namespace {

std::string two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

std::int64_t start_s(const TimeZone& tz, TimeCut cut, std::int64_t unix_s) {
  switch (cut) {
    case TimeCut::kHour:
      return tz.start_of_hour(unix_s);
    case TimeCut::kWeek:
      return tz.start_of_week(unix_s);
    case TimeCut::kMonth:
      return tz.start_of_month(unix_s);
    case TimeCut::kDay:
    case TimeCut::kNone:
      break;
  }
  return tz.start_of_day(unix_s);
}

}  // namespace

std::string offset_text(int seconds) {
  const char sign = seconds < 0 ? '-' : '+';
  const int m = std::abs(seconds) / 60;
  return std::string(1, sign) + two(m / 60) + ":" + two(m % 60);
}

std::string local_date(const TimeZone& tz, std::int64_t at_ms) {
  const TimeZone::LocalTime t = tz.local(at_ms / 1000);
  return std::to_string(t.year) + "-" + two(t.month) + "-" + two(t.day);
}

Stretch stretch_of(const TimeZone& tz, TimeCut cut, std::int64_t at_ms) {
  const std::int64_t start = start_s(tz, cut, at_ms / 1000);
  const TimeZone::LocalTime t = tz.local(start);
  std::string label = std::to_string(t.year) + "-" + two(t.month);
  if (cut != TimeCut::kMonth) label += "-" + two(t.day);
  if (cut == TimeCut::kHour)
    // With the offset: the hour a DST change repeats is two different hours.
    label += "T" + two(t.minute_of_day / 60) + ":" + two(t.minute_of_day % 60) +
             offset_text(tz.offset_at(start));
  return {start * 1000, std::move(label)};
}

std::vector<std::int64_t> stretch_cuts(const TimeZone& tz, TimeCut cut, std::int64_t from_ms,
                                       std::int64_t to_ms) {
  std::vector<std::int64_t> cuts;
  if (cut == TimeCut::kNone || from_ms >= to_ms) return cuts;
  std::int64_t current = start_s(tz, cut, from_ms / 1000);
  for (std::int64_t t = from_ms + kRollupBucketMs; t < to_ms; t += kRollupBucketMs) {
    const std::int64_t start = start_s(tz, cut, t / 1000);
    if (start != current) cuts.push_back(t);
    current = start;
  }
  return cuts;
}

std::int64_t local_midnight_ms(const TimeZone& tz, std::int64_t days) {
  // Noon of that date is inside it whatever the zone's offset; its day starts at midnight.
  const std::int64_t noon_utc = days * 86'400 + 43'200;
  return tz.start_of_day(noon_utc - tz.offset_at(noon_utc)) * 1000;
}

}  // namespace leadflow::reports
