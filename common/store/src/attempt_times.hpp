#pragma once
// What the SQLite and PostgreSQL adapters share for attempt windows
// (Store::update_attempt_windows): a window's times are kept in one text column, decimal
// milliseconds separated by commas, oldest first. A window holds a handful of times (at most its
// limit), so one row per key, read and written whole under the row's lock, is simpler than a row
// per attempt.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leadflow::store_rows {

inline std::string encode_attempt_times(const std::vector<std::int64_t>& times) {
  std::string out;
  for (std::int64_t t : times) {
    if (!out.empty()) out += ',';
    out += std::to_string(t);
  }
  return out;
}

/// The times of `text`, oldest first; a piece that is not a number is skipped (a window the
/// adapter cannot read is one that counts less, never a failure of the store).
inline std::vector<std::int64_t> decode_attempt_times(std::string_view text) {
  std::vector<std::int64_t> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view piece = text.substr(0, comma);
    std::int64_t t = 0;
    auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), t);
    if (ec == std::errc{} && ptr == piece.data() + piece.size()) out.push_back(t);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The newest time of a window (its row's newest_at, by which quiet windows are forgotten).
inline std::int64_t newest_attempt_time(const std::vector<std::int64_t>& times) {
  return times.empty() ? 0 : *std::max_element(times.begin(), times.end());
}

}  // namespace leadflow::store_rows
