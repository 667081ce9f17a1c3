#pragma once
// Reading a JSON request body field by field, as the buyer parser (buyer_config.cpp) does: each
// reader checks one value's type, range and length and records what is wrong with it under the
// field's path ("delivery.timeout_ms"), so a body is answered with every offending field at once,
// never only the first.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/field_error.hpp"

namespace leadflow::json_fields {

/// Whether `s` holds an ASCII control character (below 0x20, or DEL).
bool has_control_chars(std::string_view s);
/// "path.key" ("key" at the top).
std::string join(std::string_view path, std::string_view key);
/// "path[i]".
std::string at_index(std::string_view path, std::size_t i);
/// The member `key` of `obj`, or nullptr.
const nlohmann::json* member(const nlohmann::json& obj, std::string_view key);

/// The readers of one body's fields, each returning nothing (and recording the error) when the
/// value will not do. A parser of a body derives from it.
class Reader {
 protected:
  using json = nlohmann::json;

  explicit Reader(FieldErrors& errors) : errors_(errors) {}

  /// Records an offending field: its path, a stable code and a message for people.
  void fail(std::string field, std::string code, std::string message);

  /// Whether `v` is an object / an array of at most `max_items`.
  bool object(const json& v, const std::string& path);
  bool array(const json& v, const std::string& path, std::size_t max_items);

  /// Records each member of `obj` not named in `known` as an unknown field.
  void reject_unknown(const json& obj, const std::string& path,
                      std::initializer_list<std::string_view> known);

  /// The member if present and not null.
  static const json* present(const json& obj, std::string_view key);

  /// A string read by people: no control or hidden formatting character, at most `max_chars`
  /// characters; `non_empty` refuses null and "".
  std::optional<std::string> text(const json& v, const std::string& path, std::size_t max_chars,
                                  bool non_empty);

  /// The index in `names` of the string `v`.
  std::optional<std::size_t> one_of(const json& v, const std::string& path,
                                    std::initializer_list<std::string_view> names);

  /// An integer in [lo, hi]; 30.0 counts as one, 30.5 does not.
  std::optional<std::int64_t> integer(const json& v, const std::string& path, std::int64_t lo,
                                      std::int64_t hi);

  /// A finite number in [lo, hi].
  std::optional<double> number(const json& v, const std::string& path, double lo, double hi);

  /// Dollars (a JSON number) to cents: above 0 if `positive`, else not negative; at most
  /// kMaxPriceCents.
  std::optional<Cents> money(const json& v, const std::string& path, bool positive);

  FieldErrors& errors_;
};

}  // namespace leadflow::json_fields
