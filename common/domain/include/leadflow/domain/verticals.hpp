#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace leadflow {

/// A typed field a vertical defines for custom_fields (Surface A) or top-level fields (Surface B).
struct VerticalField {
  enum class Type { kString, kNumber, kInteger, kBoolean, kEnum };
  std::string name;
  Type type = Type::kString;
  bool required = false;
  std::optional<double> min;  // numbers: inclusive bounds; strings: length bounds
  std::optional<double> max;
  std::vector<std::string> values;  // kEnum
  std::string description;
};

/// Second chances (docs/reoffers.md): a lead of the vertical nobody bought live is offered again
/// to buyers of aged leads at its receipt plus each delay, in order, while inside `window_s` of
/// its receipt (and its vertical's consent window). No delays: never offered again.
struct ReofferPolicy {
  std::vector<std::int64_t> delays_s;  // increasing, each 1 s .. 365 days
  std::int64_t window_s = 0;           // 0: the consent window alone bounds them
};

/// A line of business and the rules its leads follow.
struct Vertical {
  std::string name;
  std::vector<VerticalField> fields;
  int duplicate_lookback_days = 30;
  int max_sales = 1;  // 1: exclusive; N: may be shared with up to N buyers
  /// How long after its receipt a lead may still be sold (the person's consent): never offered
  /// again past it.
  int consent_days = 30;
  ReofferPolicy reoffer{};

  const VerticalField* field(std::string_view name) const;
};

/// The set of verticals leads may name. Read-only after construction, so safe to share between
/// threads. The defaults are the eleven of SPEC §2, with typed optional fields and no required
/// custom field; an operator file (LEADFLOW_VERTICALS, JSON) replaces or adds verticals.
class VerticalRegistry {
 public:
  static VerticalRegistry defaults();
  /// Merges a JSON document {"verticals": [{"name", "fields": [...], "duplicate_lookback_days",
  /// "max_sales"}]} over the defaults. Returns an error message, or "" on success.
  std::string load_json(const nlohmann::json& doc);
  /// load_json of the file at `path` (LEADFLOW_VERTICALS). Returns an error message, or "".
  std::string load_file(const std::string& path);

  const Vertical* find(std::string_view name) const;
  std::vector<std::string> names() const;
  nlohmann::json to_json(const Vertical& v) const;  // GET /api/v1/fields/{vertical}

 private:
  std::map<std::string, Vertical, std::less<>> verticals_;
};

}  // namespace leadflow
