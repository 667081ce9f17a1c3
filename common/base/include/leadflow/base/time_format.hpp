#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leadflow {

/// A day of Unix time, in milliseconds.
inline constexpr std::int64_t kDayMs = 86'400'000;

/// "2026-11-22T06:32:25.123Z" for a Unix time in milliseconds.
std::string format_rfc3339_ms(std::int64_t unix_ms);
/// RFC 3339 date-time ("2026-11-22T06:32:25Z", fractional seconds and offsets allowed) or a
/// plain date ("2026-11-22", midnight UTC) to Unix milliseconds.
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text);
/// Days since 1970-01-01 for a civil date (proleptic Gregorian), and back.
std::int64_t days_from_civil(int y, unsigned m, unsigned d);
/// Whether a year of the proleptic Gregorian calendar is a leap year, and a month's days (1..12).
bool is_leap_year(int y);
unsigned days_in_month(int y, unsigned m);
struct CivilDate {
  int year;
  unsigned month, day;
};
CivilDate civil_from_days(std::int64_t days);

}  // namespace leadflow
