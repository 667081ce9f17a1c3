#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leadflow {

/// "2026-11-22T06:32:25.123Z" for a Unix time in milliseconds.
std::string format_rfc3339_ms(std::int64_t unix_ms);
/// RFC 3339 date-time ("2026-11-22T06:32:25Z", fractional seconds and offsets allowed) or a
/// plain date ("2026-11-22", midnight UTC) to Unix milliseconds.
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text);
/// Days since 1970-01-01 for a civil date (proleptic Gregorian), and back.
std::int64_t days_from_civil(int y, unsigned m, unsigned d);
struct CivilDate {
  int year;
  unsigned month, day;
};
CivilDate civil_from_days(std::int64_t days);

}  // namespace leadflow
