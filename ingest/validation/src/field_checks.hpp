#pragma once
// The checks of a lead's fields, shared by the readers of each surface's body (readers.cpp):
// a reader turns every top-level field into an Input and feeds it to a LeadBuilder, which checks
// and normalises it into the ParsedLead and collects the errors in body order.
#include <simdjson.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/validation/validation.hpp"

namespace leadflow::validation {

/// The longest phone input looked at, before normalisation (a field check and normalize_phone).
inline constexpr std::size_t kMaxPhoneInput = 32;
/// The longest ZIP code input looked at, before normalisation.
inline constexpr std::size_t kMaxZipInput = 32;

/// A field's value, independent of where it came from (simdjson DOM or a form field).
struct Input {
  enum class Kind : std::uint8_t { kNull, kBool, kNumber, kString, kObject, kArray };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  // A number written as an integer: `integer` holds it exactly; `beyond_int64` when it is one
  // past int64's range (simdjson reads those up to 2^64 - 1; larger ones fail the parse).
  bool integral = false;
  bool beyond_int64 = false;
  std::int64_t integer = 0;
  std::string_view text;
  simdjson::dom::element element;  // kObject only
};

/// The Input of a simdjson value.
inline Input to_input(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  Input in;
  switch (e.type()) {
    case element_type::OBJECT:
      in.kind = Input::Kind::kObject;
      in.element = e;
      break;
    case element_type::ARRAY:
      in.kind = Input::Kind::kArray;
      break;
    case element_type::STRING:
      in.kind = Input::Kind::kString;
      if (e.get_string().get(in.text)) in.text = {};
      break;
    case element_type::INT64:
      in.integral = !e.get_int64().get(in.integer);
      in.kind = Input::Kind::kNumber;
      if (e.get_double().get(in.number)) in.number = 0;
      break;
    case element_type::UINT64:  // simdjson's type only for integers above int64's maximum
      in.beyond_int64 = true;
      [[fallthrough]];
    case element_type::DOUBLE:
      in.kind = Input::Kind::kNumber;
      if (e.get_double().get(in.number)) in.number = 0;
      break;
    case element_type::BOOL:
      in.kind = Input::Kind::kBool;
      if (e.get_bool().get(in.boolean)) in.boolean = false;
      break;
    case element_type::NULL_VALUE:
      in.kind = Input::Kind::kNull;
      break;
  }
  return in;
}

// Counts occurrences of keys. No allocation for up to kSmall distinct keys; beyond that a
// std::map keeps a hostile body with thousands of keys at O(n log n) (no hash flooding).
class KeyCounter {
 public:
  /// How many times `key` has been seen, this occurrence included.
  std::uint32_t add(std::string_view key) {
    if (overflow_.empty()) {
      for (std::size_t i = 0; i < small_size_; ++i) {
        if (small_[i].first == key) return ++small_[i].second;
      }
      if (small_size_ < kSmall) {
        small_[small_size_++] = {key, 1};
        return 1;
      }
      for (std::size_t i = 0; i < small_size_; ++i)
        overflow_.emplace(small_[i].first, small_[i].second);
      small_size_ = 0;
    }
    return ++overflow_[key];
  }

 private:
  static constexpr std::size_t kSmall = 16;
  std::array<std::pair<std::string_view, std::uint32_t>, kSmall> small_{};
  std::size_t small_size_ = 0;
  std::map<std::string_view, std::uint32_t> overflow_;
};

// The standard top-level fields, whatever each surface calls them.
enum class Std : std::uint8_t {
  kCampaignKey,
  kFirstName,
  kLastName,
  kEmail,
  kPhone,
  kZip,
  kVertical,
  kSource,
  kLandingPage,
  kIp,
  kUserAgent,
  kTrustedForm,
  kJornaya,
  kTcpaConsent,
  kTcpaText,
  kCustomFields,
  kTest,  // the post's own test mark (leadflow/domain/test_mode.hpp)
};

struct StdName {
  std::string_view name;
  Std id;
};

// Each surface's names of the standard fields (Surface A: POST /v1/leads; B: POST /api/v1/lead).
inline constexpr StdName kApiNames[] = {
    {"first_name", Std::kFirstName},
    {"last_name", Std::kLastName},
    {"email", Std::kEmail},
    {"phone", Std::kPhone},
    {"zip_code", Std::kZip},
    {"vertical", Std::kVertical},
    {"source", Std::kSource},
    {"landing_page", Std::kLandingPage},
    {"ip_address", Std::kIp},
    {"user_agent", Std::kUserAgent},
    {"custom_fields", Std::kCustomFields},
    {"trustedform_cert_url", Std::kTrustedForm},
    {"jornaya_leadid", Std::kJornaya},
    {"tcpa_consent", Std::kTcpaConsent},
    {"tcpa_consent_text", Std::kTcpaText},
    {"test", Std::kTest},
};

inline constexpr StdName kCampaignNames[] = {
    {"SELLER_CAMPAIGN_KEY", Std::kCampaignKey},
    {"first_name", Std::kFirstName},
    {"last_name", Std::kLastName},
    {"email_address", Std::kEmail},
    {"phone_home", Std::kPhone},
    {"zip_code", Std::kZip},
    {"source", Std::kSource},
    {"landing_page", Std::kLandingPage},
    {"ip_address", Std::kIp},
    {"user_agent", Std::kUserAgent},
    {"trustedform_cert_url", Std::kTrustedForm},
    {"jornaya_leadid", Std::kJornaya},
    {"tcpa_consent", Std::kTcpaConsent},
    {"tcpa_consent_text", Std::kTcpaText},
    {"test", Std::kTest},
};

// Required fields in the order their absence is reported.
inline constexpr Std kApiRequired[] = {Std::kFirstName, Std::kLastName, Std::kEmail,
                                       Std::kPhone,     Std::kZip,      Std::kVertical};
inline constexpr Std kCampaignRequired[] = {Std::kCampaignKey, Std::kFirstName, Std::kLastName,
                                            Std::kEmail,       Std::kPhone,     Std::kZip};

// An error path, materialised only when an error is reported ("custom_fields." + "age").
struct Path {
  std::string_view prefix;
  std::string_view name;
  std::string str() const {
    std::string out;
    out.reserve(prefix.size() + name.size());
    out.append(prefix).append(name);
    return out;
  }
};

/// Fed one top-level field at a time, fills a ParsedLead and its errors. One per body; used by
/// one thread.
class LeadBuilder {
 public:
  LeadBuilder(ParsedLead& out, LeadShape shape, bool form, const VerticalRegistry& registry,
              const ValidationLimits& limits)
      : out_(out),
        lead_(out.lead),
        shape_(shape),
        form_(form),
        registry_(registry),
        limits_(limits) {
    lead_.surface = shape == LeadShape::kApi ? Surface::kApi : Surface::kCampaign;
  }

  /// Surface A: the vertical named in the body (found before the fields are walked, so that
  /// custom_fields can be typed wherever "vertical" appears). Errors are reported in order later.
  void hint_vertical(std::string_view raw) { set_vertical(find_vertical(raw)); }

  /// Surface B: the campaign's vertical; "" while the campaign is not known yet.
  void campaign_vertical(std::string_view name);
  void field(std::string_view key, const Input& v);
  void finish();

 private:
  enum class Got { kAbsent, kValue, kError };
  std::optional<Std> lookup(std::string_view key) const;
  std::string_view name_of(Std id) const;
  std::string field_path(std::string_view name) const;
  void error(const Path& path, std::string_view code, std::string message);
  void error(std::string field, std::string_view code, std::string message);
  const Vertical* find_vertical(std::string_view raw) const;
  void set_vertical(const Vertical* v);
  void mark_vertical_seen(const VerticalField& spec);

  bool vertical_seen(std::size_t i) const { return i < vertical_seen_.size() && vertical_seen_[i]; }

  // A string value: trimmed, valid UTF-8, no control characters, at most max_chars code points.
  Got text(const Path& path, const Input& v, std::size_t max_chars, bool allow_tab,
           std::string_view& out);

  Got check_text(const Path& path, std::string_view s, std::size_t max_chars, bool allow_tab,
                 std::string_view& out);

  // A required string: absent (null or empty) is "required".
  Got required_text(const Path& path, const Input& v, std::size_t max_chars, std::string_view& out);
  void standard(Std id, std::string_view key, const Input& v);
  void tcpa_consent(const Path& path, const Input& v);
  // A boolean standard field: a JSON boolean; on Surface B also the words and 1/0 the form
  // post's fields take. nullopt when absent or refused (the error is reported).
  std::optional<bool> flag(const Path& path, const Input& v);
  void custom_fields(const Input& v);

  // A custom field the vertical does not define: a number or a string.
  void free_form(std::string_view key, const Input& v);

  // A field the vertical defines. `top_level` is Surface B: null is absent and a JSON boolean is
  // accepted; inside custom_fields (Surface A) values are numbers or strings only.
  void typed(const Path& path, const Input& v, const VerticalField& spec, bool top_level);
  ParsedLead& out_;
  Lead& lead_;
  const LeadShape shape_;
  const bool form_;
  const VerticalRegistry& registry_;
  const ValidationLimits& limits_;
  const Vertical* vertical_ = nullptr;
  std::vector<bool> vertical_seen_;  // only when the vertical has required fields
  std::uint32_t seen_ = 0;
  std::uint32_t duplicate_reported_ = 0;
  KeyCounter others_;
  bool vertical_unknown_ = false;  // Surface B before authentication: no vertical checks at all
  bool capped_ = false;
};

}  // namespace leadflow::validation
