#pragma once
#include <string>
#include <string_view>

namespace leadflow {

/// Appends `s` as a JSON string literal (quotes included). Control characters are escaped;
/// invalid UTF-8 is not repaired, so callers pass validated text.
void append_json_string(std::string& out, std::string_view s);
/// Appends the shortest text that reads back as exactly `v` (finite values only).
void append_json_number(std::string& out, double v);

}  // namespace leadflow
