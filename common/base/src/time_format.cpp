#include "leadflow/base/time_format.hpp"

#include <cstdio>

#include "leadflow/base/text.hpp"

namespace leadflow {
namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!is_digit(s[i])) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

bool is_leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap_year(y) ? 29 : kDays[m - 1];
}

// Howard Hinnant's civil-from-days, for dates without calling into the C time zone machinery.
CivilDate civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int>(yoe + era * 400 + (m <= 2)), m, d};
}

std::int64_t days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::string format_rfc3339_ms(std::int64_t unix_ms) {
  std::int64_t days = unix_ms / 86'400'000;
  std::int64_t rem = unix_ms % 86'400'000;
  if (rem < 0) {
    rem += 86'400'000;
    --days;
  }
  const auto [y, m, d] = civil_from_days(days);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", y, m, d,
                static_cast<int>(rem / 3'600'000), static_cast<int>(rem / 60'000 % 60),
                static_cast<int>(rem / 1000 % 60), static_cast<int>(rem % 1000));
  return buf;
}

std::optional<std::int64_t> parse_rfc3339_ms(std::string_view s) {
  int y, mo, d;
  if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || static_cast<unsigned>(d) > days_in_month(y, mo))
    return std::nullopt;
  std::int64_t ms = days_from_civil(y, mo, d) * 86'400'000;
  if (s.size() == 10) return ms;
  int h, mi, sec;
  if ((s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, 11, 2, h) || s.size() < 19 ||
      s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, sec))
    return std::nullopt;
  if (h > 23 || mi > 59 || sec > 60) return std::nullopt;
  ms += (h * 3600LL + mi * 60LL + sec) * 1000;
  std::size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 100, frac = 0;
    const std::size_t start = pos;
    while (pos < s.size() && is_digit(s[pos])) {
      frac += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
    ms += frac;
  }
  if (pos >= s.size()) return std::nullopt;  // RFC 3339 requires an offset
  if (s[pos] == 'Z' || s[pos] == 'z') return pos + 1 == s.size() ? std::optional(ms) : std::nullopt;
  if (s[pos] != '+' && s[pos] != '-') return std::nullopt;
  int oh, om;
  if (pos + 6 != s.size() || !digits(s, pos + 1, 2, oh) || s[pos + 3] != ':' ||
      !digits(s, pos + 4, 2, om) || oh > 23 || om > 59)
    return std::nullopt;
  const std::int64_t offset = (oh * 60LL + om) * 60'000;
  return s[pos] == '+' ? ms - offset : ms + offset;
}

}  // namespace leadflow
