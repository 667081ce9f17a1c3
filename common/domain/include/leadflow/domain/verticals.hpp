#pragma once
#include <cstdint>
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
  bool operator==(const ReofferPolicy&) const = default;
};

struct Campaign;

/// A re-offer policy from its JSON ({"delays_seconds": [900, 7200], "window_hours": 48}; null:
/// none), checked as LEADFLOW_VERTICALS's: 1 to 10 increasing delays of 1 s to 365 days, an
/// optional window of 1 to 87,600 hours. With `allow_none` (a campaign's own policy), no delays
/// ({"delays_seconds": []}) is a policy too: never offered again. Returns "" or the error,
/// starting with the member at fault under `path` ("reoffer.delays_seconds: must increase").
std::string read_reoffer_policy(const nlohmann::json& j, ReofferPolicy& out,
                                const std::string& path, bool allow_none);
/// The policy as read_reoffer_policy reads it ({"delays_seconds": []} for none).
nlohmann::json reoffer_policy_json(const ReofferPolicy& p);

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

/// A vertical's re-offer policy set by the operator (docs/reoffers.md), kept in the store: it
/// replaces the configured one (LEADFLOW_VERTICALS's) until the operator resets it. A reset
/// keeps the row, not `active`, so that the setting's `version` keeps growing through resets
/// (docs/versions.md): a vertical never set is at version 0.
struct VerticalReoffer {
  std::string vertical;
  ReofferPolicy policy;
  std::int64_t set_at_ms = 0;
  std::int64_t version = 1;
  bool active = true;  // false: reset, the configured policy applies
  bool operator==(const VerticalReoffer&) const = default;
};

/// The setting of `vertical` among `rows` (AccountsStore::list_vertical_reoffers), reset or not;
/// nullptr when the operator never set one.
const VerticalReoffer* vertical_setting(const std::vector<VerticalReoffer>& rows,
                                        std::string_view vertical);
/// The policy the operator set for `vertical` and has not reset, or nullptr: the one test of
/// whether a vertical follows the operator's policy rather than the configured one.
const VerticalReoffer* operator_policy(const std::vector<VerticalReoffer>& rows,
                                       std::string_view vertical);

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
  /// to_json with the vertical's effective re-offer policy (reoffer_policy_of) as `reoffer`,
  /// and where it comes from: `reoffer_source` ("configured" or "operator"), the configured one
  /// (`configured_reoffer`), when the operator set its own (`reoffer_set_at`, RFC 3339; null)
  /// and the setting's version (`reoffer_version`: 0 never set). `setting`: the vertical's row
  /// (vertical_setting), reset or not, or nullptr.
  nlohmann::json to_json(const Vertical& v, const VerticalReoffer* setting) const;

 private:
  std::map<std::string, Vertical, std::less<>> verticals_;
};

/// Which re-offer policy a lead follows (docs/reoffers.md): its campaign's own where the campaign
/// has one (even one of no re-offer), else its vertical's effective one: the operator's
/// (`operators`, the policy set for `v`; nullptr for none) where set, else the configured one.
/// A lead of no campaign (Surface A) follows its vertical's.
const ReofferPolicy& reoffer_policy_of(const Vertical& v, const Campaign* c,
                                       const ReofferPolicy* operators);

}  // namespace leadflow
