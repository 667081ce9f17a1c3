#include "csv.hpp"

#include <string_view>

namespace leadflow {

using nlohmann::json;

std::string csv_field(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
  if (!s.empty() && v.is_string() && std::string_view("=+-@\t\r").find(s[0]) != std::string::npos)
    s.insert(s.begin(), '\'');
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_table(const std::vector<std::string>& columns, const json& rows) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
  out += "\r\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      out += (i ? "," : "") + csv_field(row.value(columns[i], json(nullptr)));
    out += "\r\n";
  }
  return out;
}

}  // namespace leadflow
