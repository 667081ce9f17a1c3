#include "json_field_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "leadflow/base/text.hpp"

namespace leadflow::json_fields {

using nlohmann::json;

bool has_control_chars(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7F; });
}

std::string join(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string at_index(std::string_view path, std::size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

const json* member(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

void Reader::fail(std::string field, std::string code, std::string message) {
  errors_.push_back(FieldError{std::move(field), std::move(code), std::move(message)});
}

bool Reader::object(const json& v, const std::string& path) {
  if (v.is_object()) return true;
  fail(path, "invalid_type", "must be an object");
  return false;
}

bool Reader::array(const json& v, const std::string& path, std::size_t max_items) {
  if (!v.is_array()) {
    fail(path, "invalid_type", "must be an array");
    return false;
  }
  if (v.size() > max_items) {
    fail(path, "too_long", "at most " + std::to_string(max_items) + " entries");
    return false;
  }
  return true;
}

void Reader::reject_unknown(const json& obj, const std::string& path,
                            std::initializer_list<std::string_view> known) {
  for (const auto& [key, v] : obj.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      fail(join(path, key), "unknown_field", "is not a known field");
}

// The member if present and not null.
const json* Reader::present(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

std::optional<std::string> Reader::text(const json& v, const std::string& path,
                                        std::size_t max_chars, bool non_empty) {
  if (v.is_null() && non_empty) {
    fail(path, "required", "is required");
    return std::nullopt;
  }
  if (!v.is_string()) {
    fail(path, "invalid_type", "must be a string");
    return std::nullopt;
  }
  const auto& s = v.get_ref<const std::string&>();
  if (non_empty && s.empty()) {
    fail(path, "required", "must not be empty");
    return std::nullopt;
  }
  // The one free-text rule: a name or a rule is read by people, in lists, logs and terminals
  // (no control character of any kind, no bidi override or other hidden formatting
  // character; the length in characters).
  if (auto refused = refuse_free_text(s, max_chars)) {
    fail(path, std::move(refused->code), std::move(refused->message));
    return std::nullopt;
  }
  return s;
}

// Index of the matching name.
std::optional<std::size_t> Reader::one_of(const json& v, const std::string& path,
                                          std::initializer_list<std::string_view> names) {
  if (!v.is_string()) {
    fail(path, "invalid_type", "must be a string");
    return std::nullopt;
  }
  const auto& s = v.get_ref<const std::string&>();
  std::string allowed;
  std::size_t i = 0;
  for (std::string_view n : names) {
    if (s == n) return i;
    allowed += (i++ == 0 ? "" : ", ");
    allowed += n;
  }
  fail(path, "invalid_format", "must be one of: " + allowed);
  return std::nullopt;
}

std::optional<std::int64_t> Reader::integer(const json& v, const std::string& path, std::int64_t lo,
                                            std::int64_t hi) {
  std::optional<std::int64_t> value;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    value = u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                ? std::numeric_limits<std::int64_t>::max()
                : static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    value = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    // JSON has one number type: 30.0 is an integer, 30.5 is not.
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15)
      value = static_cast<std::int64_t>(d);
  }
  if (!value) {
    fail(path, "invalid_type", "must be an integer");
    return std::nullopt;
  }
  if (*value < lo || *value > hi) {
    fail(path, "out_of_range",
         "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return std::nullopt;
  }
  return value;
}

std::optional<double> Reader::number(const json& v, const std::string& path, double lo, double hi) {
  if (!v.is_number()) {
    fail(path, "invalid_type", "must be a number");
    return std::nullopt;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "must be between %g and %g", lo, hi);
    fail(path, "out_of_range", msg);
    return std::nullopt;
  }
  return d;
}

// Dollars (a JSON number) to cents.
std::optional<Cents> Reader::money(const json& v, const std::string& path, bool positive) {
  if (!v.is_number()) {
    fail(path, "invalid_type", "must be a number (dollars)");
    return std::nullopt;
  }
  const auto cents = cents_from_decimal(v.get<double>());
  if (!cents || (positive && *cents <= 0)) {
    fail(path, "out_of_range",
         std::string(positive ? "must be greater than 0" : "must not be negative") +
             " and at most " + format_cents(kMaxPriceCents));
    return std::nullopt;
  }
  return cents;
}

}  // namespace leadflow::json_fields
