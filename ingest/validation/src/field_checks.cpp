// Lead parsing and validation for Surface A (POST /v1/leads), Surface B (POST /api/v1/lead) and the
// legacy form (POST /{seller_campaign_key}).
//
// Decisions where SPEC and seed are silent:
// - Error codes: "required", "invalid_type", "invalid_format", "too_long", "out_of_range",
//   "not_allowed", "unknown_field", "duplicate_field"; for the body as a whole (field "body"):
//   "invalid_json" and "too_deep" (both with malformed = true), and "too_many_errors".
// - Errors are reported in body order, then missing required fields in a fixed order. They are
//   capped at 100 (a hostile body with 10,000 unknown keys must not produce a response larger
//   than itself); past the cap one last {"body", "too_many_errors"} entry is added.
// - JSON nesting: the root object is depth 1; a body with more than max_depth levels of
//   non-empty objects/arrays is refused whole ("too_deep"). simdjson's DOM parser enforces the
//   bound iteratively while parsing, so nothing recurses on input depth.
// - Numbers simdjson cannot represent (1e400, integers beyond 64 bits) make the body
//   "invalid_json": the whole document is refused, not just the field.
// - Strings are trimmed of ASCII whitespace. A value that is empty after trimming, or JSON null,
//   counts as absent: "required" for a required field, ignored for an optional one (a null
//   custom_fields value is the exception: "invalid_type", values are numbers or strings).
// - Every string must be valid UTF-8 without C0/C1 control characters or DEL; only user_agent
//   and tcpa_consent_text may contain tabs. Lengths are counted in Unicode code points.
// - Standard fields are typed strictly: zip_code 12345 (a number) is "invalid_type". On Surface
//   B (JSON and form) tcpa_consent may also be "true/false/yes/no/on/off/1/0" or 1/0; on
//   Surface A it must be a JSON boolean.
// - vertical is matched case-insensitively and stored in its canonical lower-case form.
// - ZIP: "12345", "12345-6789" or "123456789". A prefix USPS never assigned is "not_allowed"
//   ("unassigned ZIP code"); malformed text is "invalid_format".
// - Phone: NANP only (see normalize_phone). "(555) 123-4567" is refused: exchange 123 starts
//   with 1, which NANP never assigns. 555-01XX numbers such as (212) 555-0123 are accepted.
// - E-mail: ASCII only (no SMTPUTF8 local parts), dot-atom local part <= 64, domain with at least
//   two labels, labels [A-Za-z0-9-] not starting or ending with '-', a top-level label that is
//   not all digits; no IP literals, no quoted local parts. The whole address is lower-cased.
// - trustedform_cert_url must start with http:// or https://; jornaya_leadid is [A-Za-z0-9-].
// - SELLER_CAMPAIGN_KEY is trimmed; it is required in a Surface B JSON body but optional in a
//   form post, whose key travels in the path (POST /{seller_campaign_key}). A JSON body posted to
//   the legacy path without the key gets "required" on SELLER_CAMPAIGN_KEY: the handler should
//   drop that error (or inject the path key) there.
// - custom_fields (Surface A) is free-form: any key matching [A-Za-z0-9_.-]{1,max_custom_key}
//   with a number or string value. Empty strings are not stored. A key the vertical defines is
//   typed: number/integer accept a JSON number or a numeric string (stored as a number);
//   integer must be whole; boolean accepts "true/false/yes/no/on/off/1/0" or 1/0 and is stored
//   as the string "true"/"false" (a JSON true/false is "invalid_type" there: custom_fields values
//   are numbers or strings); enum is matched case-insensitively and stored canonically (an
//   integral number matches its decimal text, so term_length 20 matches "20"); string length
//   bounds use the field's min/max. Wrong kind: "invalid_type"; bounds: "out_of_range"
//   (string too long: "too_long"); enum miss: "not_allowed".
// - Surface B: the vertical's fields sit at the top level, are typed as above (a JSON boolean
//   is accepted for boolean fields there), and any other name is "unknown_field". If the
//   campaign's vertical is not in the registry, SELLER_CAMPAIGN_KEY gets "not_allowed". An empty
//   campaign_vertical means the campaign is not known yet (a body without a usable key, parsed
//   only to list its errors): the vertical is not checked and other names are not reported.
// - Duplicate keys (top level or in custom_fields) are "duplicate_field", once per key; the first
//   occurrence is the one validated.
#include "leadflow/validation/validation.hpp"

#include <arpa/inet.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "leadflow/base/text.hpp"

namespace leadflow {
namespace {

constexpr std::size_t kMaxErrors = 100;
constexpr std::size_t kMaxDisplayChars = 64;      // a hostile key is echoed back at most this long
constexpr std::size_t kLargeBody = 1024 * 1024;   // bodies above this do not grow the thread cache
constexpr std::size_t kMaxPhoneInput = 32;
constexpr std::size_t kMaxZipInput = 32;

// ---------------------------------------------------------------------------------------------
// Text helpers

// A key as it may be echoed in an error: valid UTF-8, no control characters, bounded.
std::string display_key(std::string_view key) {
  std::string out;
  std::size_t i = 0;
  std::size_t chars = 0;
  while (i < key.size()) {
    if (chars == kMaxDisplayChars) {
      out += "...";
      break;
    }
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(key, i, cp);
    if (len == 0 || is_control_code_point(cp, false)) {
      out += '?';
      i += len == 0 ? 1 : len;
    } else {
      out.append(key.substr(i, len));
      i += len;
    }
    ++chars;
  }
  return out;
}

bool valid_custom_key_chars(std::string_view key) {
  return std::all_of(key.begin(), key.end(), [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

std::string join_values(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

std::string format_number(double d) {
  std::array<char, 32> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  return std::string(buf.data(), res.ptr);
}

// A decimal number as text ("12", "-3.5", "1e5"); no hex, inf or nan; must be finite.
bool parse_number(std::string_view s, double& out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  if (s.empty() || !(is_digit(s.front()) || s.front() == '-' || s.front() == '.')) return false;
  for (char c : s) {
    if (!(is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) return false;
  }
  double d = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), d, std::chars_format::general);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(d)) return false;
  out = d;
  return true;
}

std::optional<bool> parse_bool_text(std::string_view s) {
  static constexpr std::string_view kTrue[] = {"true", "yes", "y", "on", "1"};
  static constexpr std::string_view kFalse[] = {"false", "no", "n", "off", "0"};
  for (auto t : kTrue) {
    if (iequals(s, t)) return true;
  }
  for (auto f : kFalse) {
    if (iequals(s, f)) return false;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Input values, independent of where they came from (simdjson DOM or a form field).

struct Input {
  enum class Kind : std::uint8_t { kNull, kBool, kNumber, kString, kObject, kArray };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string_view text;
  simdjson::dom::element element;  // kObject only
};

Input to_input(simdjson::dom::element e) {
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
    case element_type::UINT64:
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
      for (std::size_t i = 0; i < small_size_; ++i) overflow_.emplace(small_[i].first, small_[i].second);
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

// ---------------------------------------------------------------------------------------------
// Standard top-level fields

enum class Std : std::uint8_t {
  kCampaignKey, kFirstName, kLastName, kEmail, kPhone, kZip, kVertical, kSource, kLandingPage, kIp,
  kUserAgent, kTrustedForm, kJornaya, kTcpaConsent, kTcpaText, kCustomFields,
};

struct StdName {
  std::string_view name;
  Std id;
};

constexpr StdName kApiNames[] = {
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
};

constexpr StdName kCampaignNames[] = {
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
};

// Required fields in the order their absence is reported.
constexpr Std kApiRequired[] = {Std::kFirstName, Std::kLastName, Std::kEmail, Std::kPhone, Std::kZip, Std::kVertical};
constexpr Std kCampaignRequired[] = {Std::kCampaignKey, Std::kFirstName, Std::kLastName,
                                     Std::kEmail,       Std::kPhone,     Std::kZip};

constexpr std::uint32_t bit(Std id) { return 1u << static_cast<unsigned>(id); }

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

// ---------------------------------------------------------------------------------------------
// The builder: fed one top-level field at a time, fills ParsedLead and its errors.

class LeadBuilder {
 public:
  LeadBuilder(ParsedLead& out, LeadShape shape, bool form, const VerticalRegistry& registry,
              const ValidationLimits& limits)
      : out_(out), lead_(out.lead), shape_(shape), form_(form), registry_(registry), limits_(limits) {
    lead_.surface = shape == LeadShape::kApi ? Surface::kApi : Surface::kCampaign;
  }

  /// Surface A: the vertical named in the body (found before the fields are walked, so that
  /// custom_fields can be typed wherever "vertical" appears). Errors are reported in order later.
  void hint_vertical(std::string_view raw) { set_vertical(find_vertical(raw)); }

  /// Surface B: the campaign's vertical; "" while the campaign is not known yet.
  void campaign_vertical(std::string_view name) {
    if (name.empty()) {
      vertical_unknown_ = true;
      return;
    }
    const Vertical* v = registry_.find(name);
    set_vertical(v);
    if (v != nullptr) {
      lead_.vertical = v->name;
    } else {
      error("SELLER_CAMPAIGN_KEY", "not_allowed",
            "the campaign's vertical \"" + display_key(name) + "\" is not configured");
    }
  }

  void field(std::string_view key, const Input& v) {
    if (auto id = lookup(key)) {
      const std::uint32_t b = bit(*id);
      if (seen_ & b) {
        if (!(duplicate_reported_ & b)) {
          duplicate_reported_ |= b;
          error(std::string(key), "duplicate_field", "appears more than once");
        }
        return;
      }
      seen_ |= b;
      standard(*id, key, v);
      return;
    }
    const std::uint32_t n = others_.add(key);
    if (shape_ == LeadShape::kCampaign && vertical_ != nullptr) {
      if (const VerticalField* spec = vertical_->field(key)) {
        if (n == 1) {
          typed(Path{{}, key}, v, *spec, /*top_level=*/true);
        } else if (n == 2) {
          error(std::string(key), "duplicate_field", "appears more than once");
        }
        return;
      }
    }
    if (vertical_unknown_) return;  // may be a field of the campaign's vertical
    if (n == 1) {
      error(display_key(key), "unknown_field",
            shape_ == LeadShape::kApi ? "is not a lead field" : "is not a field of this campaign's vertical");
    }
  }

  void finish() {
    const auto required = shape_ == LeadShape::kApi ? std::begin(kApiRequired) : std::begin(kCampaignRequired);
    const auto required_end = shape_ == LeadShape::kApi ? std::end(kApiRequired) : std::end(kCampaignRequired);
    for (auto it = required; it != required_end; ++it) {
      if (*it == Std::kCampaignKey && form_) continue;  // the legacy form carries it in the path
      if (!(seen_ & bit(*it))) error(std::string(name_of(*it)), "required", "is required");
    }
    if (vertical_ != nullptr) {
      for (std::size_t i = 0; i < vertical_->fields.size(); ++i) {
        const VerticalField& f = vertical_->fields[i];
        if (f.required && !vertical_seen(i)) error(field_path(f.name), "required", "is required");
      }
    }
  }

 private:
  enum class Got { kAbsent, kValue, kError };

  std::optional<Std> lookup(std::string_view key) const {
    if (shape_ == LeadShape::kApi) {
      for (const auto& n : kApiNames) {
        if (n.name == key) return n.id;
      }
    } else {
      for (const auto& n : kCampaignNames) {
        if (n.name == key) return n.id;
      }
    }
    return std::nullopt;
  }

  std::string_view name_of(Std id) const {
    if (shape_ == LeadShape::kApi) {
      for (const auto& n : kApiNames) {
        if (n.id == id) return n.name;
      }
    } else {
      for (const auto& n : kCampaignNames) {
        if (n.id == id) return n.name;
      }
    }
    return "body";
  }

  std::string field_path(std::string_view name) const {
    if (shape_ == LeadShape::kApi) return "custom_fields." + std::string(name);
    return std::string(name);
  }

  void error(const Path& path, std::string_view code, std::string message) {
    if (!capped_) error(path.str(), code, std::move(message));
  }

  void error(std::string field, std::string_view code, std::string message) {
    if (capped_) return;
    if (out_.errors.size() >= kMaxErrors) {
      capped_ = true;
      out_.errors.push_back({"body", "too_many_errors",
                             "more than " + std::to_string(kMaxErrors) + " errors; later ones are not listed"});
      return;
    }
    out_.errors.push_back({std::move(field), std::string(code), std::move(message)});
  }

  const Vertical* find_vertical(std::string_view raw) const {
    raw = trim(raw);
    std::array<char, 64> lower{};
    if (raw.empty() || raw.size() > lower.size()) return nullptr;
    for (std::size_t i = 0; i < raw.size(); ++i) lower[i] = ascii_lower(raw[i]);
    return registry_.find(std::string_view(lower.data(), raw.size()));
  }

  void set_vertical(const Vertical* v) {
    vertical_ = v;
    vertical_seen_.clear();
    if (v == nullptr) return;
    const bool any_required =
        std::any_of(v->fields.begin(), v->fields.end(), [](const VerticalField& f) { return f.required; });
    if (any_required) vertical_seen_.assign(v->fields.size(), false);
  }

  void mark_vertical_seen(const VerticalField& spec) {
    if (vertical_seen_.empty()) return;
    const auto index = static_cast<std::size_t>(&spec - vertical_->fields.data());
    if (index < vertical_seen_.size()) vertical_seen_[index] = true;
  }

  bool vertical_seen(std::size_t i) const { return i < vertical_seen_.size() && vertical_seen_[i]; }

  // A string value: trimmed, valid UTF-8, no control characters, at most max_chars code points.
  Got text(const Path& path, const Input& v, std::size_t max_chars, bool allow_tab, std::string_view& out) {
    if (v.kind == Input::Kind::kNull) return Got::kAbsent;
    if (v.kind != Input::Kind::kString) {
      error(path, "invalid_type", "must be a string");
      return Got::kError;
    }
    return check_text(path, trim(v.text), max_chars, allow_tab, out);
  }

  Got check_text(const Path& path, std::string_view s, std::size_t max_chars, bool allow_tab,
                 std::string_view& out) {
    if (s.empty()) return Got::kAbsent;
    const TextInfo info = inspect_text(s, allow_tab);
    if (info.problem == TextProblem::kBadUtf8) {
      error(path, "invalid_format", "is not valid UTF-8");
      return Got::kError;
    }
    if (info.problem == TextProblem::kControl) {
      error(path, "invalid_format", "must not contain control characters");
      return Got::kError;
    }
    if (info.chars > max_chars) {
      error(path, "too_long", "must be at most " + std::to_string(max_chars) + " characters");
      return Got::kError;
    }
    out = s;
    return Got::kValue;
  }

  // A required string: absent (null or empty) is "required".
  Got required_text(const Path& path, const Input& v, std::size_t max_chars, std::string_view& out) {
    const Got got = text(path, v, max_chars, false, out);
    if (got == Got::kAbsent) error(path, "required", "is required");
    return got;
  }

  void standard(Std id, std::string_view key, const Input& v) {
    const Path path{{}, key};
    std::string_view s;
    switch (id) {
      case Std::kCampaignKey:
        if (v.kind == Input::Kind::kNull) {
          error(path, "required", "is required");
        } else if (v.kind != Input::Kind::kString) {
          error(path, "invalid_type", "must be a string");
        } else {
          out_.campaign_key = std::string(trim(v.text));
          if (out_.campaign_key.empty()) error(path, "required", "is required");
        }
        break;
      case Std::kFirstName:
        if (required_text(path, v, limits_.max_name, s) == Got::kValue) lead_.first_name = s;
        break;
      case Std::kLastName:
        if (required_text(path, v, limits_.max_name, s) == Got::kValue) lead_.last_name = s;
        break;
      case Std::kEmail:
        if (required_text(path, v, limits_.max_email, s) == Got::kValue) {
          lead_.email = normalize_email(s);
          if (lead_.email.empty()) error(path, "invalid_format", "is not a valid e-mail address");
        }
        break;
      case Std::kPhone:
        if (required_text(path, v, kMaxPhoneInput, s) == Got::kValue) {
          lead_.phone = normalize_phone(s);
          if (lead_.phone.empty()) {
            error(path, "invalid_format", "must be a valid 10-digit US phone number");
          }
        }
        break;
      case Std::kZip:
        if (required_text(path, v, kMaxZipInput, s) == Got::kValue) {
          if (!normalize_zip(s, lead_.zip_code, lead_.zip4)) {
            error(path, "invalid_format", "must be a ZIP code (12345 or 12345-6789)");
          } else {
            lead_.state = state_for_zip(lead_.zip_code);
            if (lead_.state.empty()) error(path, "not_allowed", "unassigned ZIP code");
          }
        }
        break;
      case Std::kVertical:
        if (required_text(path, v, 64 * 4, s) == Got::kValue) {
          if (const Vertical* found = find_vertical(s)) {
            lead_.vertical = found->name;
          } else {
            error(path, "not_allowed", "must be one of: " + join_values(registry_.names()));
          }
        }
        break;
      case Std::kSource:
        if (text(path, v, limits_.max_text, false, s) == Got::kValue) lead_.source = s;
        break;
      case Std::kLandingPage:
        if (text(path, v, limits_.max_text, false, s) == Got::kValue) lead_.landing_page = s;
        break;
      case Std::kIp:
        if (text(path, v, 64, false, s) == Got::kValue) {
          if (is_valid_ip(s)) {
            lead_.ip_address = s;
          } else {
            error(path, "invalid_format", "must be an IPv4 or IPv6 address");
          }
        }
        break;
      case Std::kUserAgent:
        if (text(path, v, limits_.max_user_agent, true, s) == Got::kValue) lead_.user_agent = s;
        break;
      case Std::kTrustedForm:
        if (text(path, v, limits_.max_text, false, s) == Got::kValue) {
          const bool http = s.size() > 7 && iequals(s.substr(0, 7), "http://");
          const bool https = s.size() > 8 && iequals(s.substr(0, 8), "https://");
          if ((http || https) && s.find(' ') == std::string_view::npos) {
            lead_.trustedform_cert_url = s;
          } else {
            error(path, "invalid_format", "must be an http(s) URL");
          }
        }
        break;
      case Std::kJornaya:
        if (text(path, v, limits_.max_text, false, s) == Got::kValue) {
          if (std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '-'; })) {
            lead_.jornaya_leadid = s;
          } else {
            error(path, "invalid_format", "must contain only letters, digits and '-'");
          }
        }
        break;
      case Std::kTcpaConsent:
        tcpa_consent(path, v);
        break;
      case Std::kTcpaText:
        if (text(path, v, limits_.max_consent_text, true, s) == Got::kValue) lead_.tcpa_consent_text = s;
        break;
      case Std::kCustomFields:
        custom_fields(v);
        break;
    }
  }

  void tcpa_consent(const Path& path, const Input& v) {
    switch (v.kind) {
      case Input::Kind::kNull:
        return;
      case Input::Kind::kBool:
        lead_.tcpa_consent = v.boolean;
        return;
      case Input::Kind::kString:
        if (shape_ == LeadShape::kCampaign) {
          const std::string_view s = trim(v.text);
          if (s.empty()) return;
          if (auto b = parse_bool_text(s)) {
            lead_.tcpa_consent = *b;
            return;
          }
          error(path, "invalid_type", "must be true or false");
          return;
        }
        break;
      case Input::Kind::kNumber:
        if (shape_ == LeadShape::kCampaign && (v.number == 0 || v.number == 1)) {
          lead_.tcpa_consent = v.number == 1;
          return;
        }
        break;
      default:
        break;
    }
    error(path, "invalid_type", shape_ == LeadShape::kApi ? "must be a boolean" : "must be true or false");
  }

  void custom_fields(const Input& v) {
    if (v.kind == Input::Kind::kNull) return;
    simdjson::dom::object obj;
    if (v.kind != Input::Kind::kObject || v.element.get_object().get(obj)) {
      error("custom_fields", "invalid_type", "must be an object");
      return;
    }
    std::size_t count = 0;
    for (auto kv : obj) {
      (void)kv;
      ++count;
    }
    if (count > limits_.max_custom_fields) {
      error("custom_fields", "out_of_range",
            "must have at most " + std::to_string(limits_.max_custom_fields) + " fields");
    }
    KeyCounter keys;
    lead_.custom_fields.reserve(std::min(count, limits_.max_custom_fields));
    for (simdjson::dom::key_value_pair kv : obj) {
      const std::string_view key = kv.key;
      const std::uint32_t n = keys.add(key);
      if (n > 1) {
        if (n == 2) error("custom_fields." + display_key(key), "duplicate_field", "appears more than once");
        continue;
      }
      if (key.empty() || !valid_custom_key_chars(key)) {
        error("custom_fields." + display_key(key), "invalid_format", "keys must match [A-Za-z0-9_.-]");
        continue;
      }
      if (key.size() > limits_.max_custom_key) {
        error("custom_fields." + display_key(key), "too_long",
              "keys must be at most " + std::to_string(limits_.max_custom_key) + " characters");
        continue;
      }
      const Input value = to_input(kv.value);
      if (vertical_ != nullptr) {
        if (const VerticalField* spec = vertical_->field(key)) {
          typed(Path{"custom_fields.", key}, value, *spec, /*top_level=*/false);
          continue;
        }
      }
      free_form(key, value);
    }
  }

  // A custom field the vertical does not define: a number or a string.
  void free_form(std::string_view key, const Input& v) {
    if (v.kind == Input::Kind::kNumber) {
      if (std::isfinite(v.number)) {
        lead_.custom_fields.emplace_back(std::string(key), v.number);
      } else {
        error("custom_fields." + std::string(key), "invalid_type", "must be a finite number");
      }
      return;
    }
    if (v.kind != Input::Kind::kString) {
      error("custom_fields." + std::string(key), "invalid_type", "values must be numbers or strings");
      return;
    }
    const std::string_view s = trim(v.text);
    if (s.empty()) return;
    const TextInfo info = inspect_text(s, false);
    if (info.problem != TextProblem::kNone) {
      error("custom_fields." + std::string(key), "invalid_format",
            info.problem == TextProblem::kBadUtf8 ? "is not valid UTF-8" : "must not contain control characters");
      return;
    }
    if (info.chars > limits_.max_custom_value) {
      error("custom_fields." + std::string(key), "too_long",
            "must be at most " + std::to_string(limits_.max_custom_value) + " characters");
      return;
    }
    lead_.custom_fields.emplace_back(std::string(key), std::string(s));
  }

  // A field the vertical defines. `top_level` is Surface B: null is absent and a JSON boolean is
  // accepted; inside custom_fields (Surface A) values are numbers or strings only.
  void typed(const Path& path, const Input& v, const VerticalField& spec, bool top_level) {
    mark_vertical_seen(spec);
    auto absent = [&] {
      if (spec.required) error(path, "required", "is required");
    };
    if (v.kind == Input::Kind::kNull) {
      if (top_level) {
        absent();
      } else {
        error(path, "invalid_type", "values must be numbers or strings");
      }
      return;
    }
    if (v.kind == Input::Kind::kObject || v.kind == Input::Kind::kArray) {
      error(path, "invalid_type", top_level ? "must be a single value" : "values must be numbers or strings");
      return;
    }
    switch (spec.type) {
      case VerticalField::Type::kString: {
        if (v.kind != Input::Kind::kString) {
          error(path, "invalid_type", "must be a string");
          return;
        }
        std::size_t max_chars = limits_.max_custom_value;
        if (spec.max && *spec.max >= 0 && *spec.max < static_cast<double>(max_chars)) {
          max_chars = static_cast<std::size_t>(*spec.max);
        }
        std::string_view s;
        const Got got = check_text(path, trim(v.text), max_chars, false, s);
        if (got == Got::kAbsent) absent();
        if (got != Got::kValue) return;
        if (spec.min && static_cast<double>(inspect_text(s, false).chars) < *spec.min) {
          error(path, "out_of_range", "must be at least " + format_number(*spec.min) + " characters");
          return;
        }
        lead_.custom_fields.emplace_back(spec.name, std::string(s));
        return;
      }
      case VerticalField::Type::kNumber:
      case VerticalField::Type::kInteger: {
        const bool integer = spec.type == VerticalField::Type::kInteger;
        const char* kind_message = integer ? "must be a whole number" : "must be a number";
        double d = 0;
        if (v.kind == Input::Kind::kNumber) {
          d = v.number;
        } else if (v.kind == Input::Kind::kString) {
          const std::string_view s = trim(v.text);
          if (s.empty()) {
            absent();
            return;
          }
          if (s.size() > 64 || !parse_number(s, d)) {
            error(path, "invalid_type", kind_message);
            return;
          }
        } else {
          error(path, "invalid_type", kind_message);
          return;
        }
        if (!std::isfinite(d) || (integer && std::trunc(d) != d)) {
          error(path, "invalid_type", kind_message);
          return;
        }
        if ((spec.min && d < *spec.min) || (spec.max && d > *spec.max)) {
          std::string message;
          if (spec.min && spec.max) {
            message = "must be between " + format_number(*spec.min) + " and " + format_number(*spec.max);
          } else if (spec.min) {
            message = "must be at least " + format_number(*spec.min);
          } else {
            message = "must be at most " + format_number(*spec.max);
          }
          error(path, "out_of_range", std::move(message));
          return;
        }
        lead_.custom_fields.emplace_back(spec.name, d == 0 ? 0.0 : d);  // no "-0"
        return;
      }
      case VerticalField::Type::kBoolean: {
        std::optional<bool> b;
        if (v.kind == Input::Kind::kBool && top_level) {
          b = v.boolean;
        } else if (v.kind == Input::Kind::kNumber && (v.number == 0 || v.number == 1)) {
          b = v.number == 1;
        } else if (v.kind == Input::Kind::kString) {
          const std::string_view s = trim(v.text);
          if (s.empty()) {
            absent();
            return;
          }
          b = parse_bool_text(s);
        }
        if (!b) {
          error(path, "invalid_type",
                top_level ? "must be true or false" : "must be \"true\" or \"false\" (values are numbers or strings)");
          return;
        }
        lead_.custom_fields.emplace_back(spec.name, std::string(*b ? "true" : "false"));
        return;
      }
      case VerticalField::Type::kEnum: {
        std::string number_text;
        std::string_view s;
        if (v.kind == Input::Kind::kString) {
          s = trim(v.text);
          if (s.empty()) {
            absent();
            return;
          }
        } else if (v.kind == Input::Kind::kNumber && std::trunc(v.number) == v.number &&
                   std::fabs(v.number) < 1e15) {
          number_text = std::to_string(static_cast<long long>(v.number));
          s = number_text;
        } else {
          error(path, "invalid_type", "must be a string");
          return;
        }
        for (const auto& allowed : spec.values) {
          if (iequals(s, allowed)) {
            lead_.custom_fields.emplace_back(spec.name, allowed);
            return;
          }
        }
        error(path, "not_allowed", "must be one of: " + join_values(spec.values));
        return;
      }
    }
  }

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

// ---------------------------------------------------------------------------------------------
// simdjson plumbing: one parser and one padded buffer per thread, reused across requests.

struct JsonScratch {
  simdjson::dom::parser dom;
  simdjson::ondemand::parser ondemand;
  std::string buffer;
};

JsonScratch& scratch() {
  thread_local JsonScratch s;
  return s;
}

// Copies `body` into `buffer` followed by SIMDJSON_PADDING readable bytes.
void fill_padded(std::string& buffer, std::string_view body) {
  const std::size_t need = body.size() + simdjson::SIMDJSON_PADDING;
  if (buffer.size() < need) buffer.resize(need);
  if (!body.empty()) std::memcpy(buffer.data(), body.data(), body.size());
  std::memset(buffer.data() + body.size(), 0, simdjson::SIMDJSON_PADDING);
}

void set_malformed(ParsedLead& out, std::string_view code, std::string message) {
  out.malformed = true;
  out.errors.clear();
  out.errors.push_back({"body", std::string(code), std::move(message)});
}

void report_parse_error(ParsedLead& out, simdjson::error_code err, std::size_t max_depth) {
  switch (err) {
    case simdjson::DEPTH_ERROR:
      set_malformed(out, "too_deep", "JSON nesting deeper than " + std::to_string(max_depth) + " levels");
      return;
    case simdjson::EMPTY:
      set_malformed(out, "invalid_json", "the body is empty");
      return;
    case simdjson::UTF8_ERROR:
      set_malformed(out, "invalid_json", "the body is not valid UTF-8");
      return;
    case simdjson::NUMBER_ERROR:
      set_malformed(out, "invalid_json", "the body holds a number that is malformed or out of range");
      return;
    case simdjson::STRING_ERROR:
    case simdjson::UNESCAPED_CHARS:
    case simdjson::UNCLOSED_STRING:
      set_malformed(out, "invalid_json", "the body holds a malformed string");
      return;
    case simdjson::CAPACITY:
    case simdjson::MEMALLOC:
      set_malformed(out, "invalid_json", "the body is too large");
      return;
    default:
      set_malformed(out, "invalid_json", "the body is not valid JSON");
      return;
  }
}

ParsedLead internal_failure() {
  ParsedLead out;
  out.malformed = true;
  out.errors.push_back({"body", "invalid_json", "the body could not be processed"});
  return out;
}

void walk(simdjson::dom::object root, LeadBuilder& builder) {
  for (simdjson::dom::key_value_pair kv : root) builder.field(kv.key, to_input(kv.value));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public entry points

ParsedLead parse_lead_json(std::string_view body, LeadShape shape, const VerticalRegistry& verticals,
                           std::string_view campaign_vertical, const ValidationLimits& limits) {
  try {
    ParsedLead out;
    out.lead.surface = shape == LeadShape::kApi ? Surface::kApi : Surface::kCampaign;
    const std::size_t max_depth = std::max<std::size_t>(limits.max_depth, 1);
    // simdjson refuses a document once non-empty containers nest max_depth deep (root = 1), so
    // its bound is ours plus one.
    const std::size_t parser_depth = max_depth + 1;

    JsonScratch& tls = scratch();
    std::optional<simdjson::dom::parser> large_parser;
    std::string large_buffer;
    simdjson::dom::parser* parser = &tls.dom;
    std::string* buffer = &tls.buffer;
    if (body.size() > kLargeBody) {  // keep the thread cache small; a one-off parser instead
      large_parser.emplace();
      parser = &*large_parser;
      buffer = &large_buffer;
    }
    if (parser->max_depth() != parser_depth || parser->capacity() < body.size()) {
      const std::size_t capacity = std::max<std::size_t>({body.size(), parser->capacity(), 64 * 1024});
      if (auto err = parser->allocate(capacity, parser_depth); err) {
        report_parse_error(out, err, max_depth);
        return out;
      }
    }
    fill_padded(*buffer, body);

    simdjson::dom::element root;
    if (auto err = parser->parse(buffer->data(), body.size(), false).get(root); err) {
      report_parse_error(out, err, max_depth);
      return out;
    }
    simdjson::dom::object obj;
    if (root.get_object().get(obj)) {
      set_malformed(out, "invalid_json", "the body must be a JSON object");
      return out;
    }

    LeadBuilder builder(out, shape, /*form=*/false, verticals, limits);
    if (shape == LeadShape::kApi) {
      for (simdjson::dom::key_value_pair kv : obj) {
        if (kv.key == "vertical") {
          std::string_view v;
          if (!kv.value.get_string().get(v)) builder.hint_vertical(v);
          break;
        }
      }
    } else {
      builder.campaign_vertical(campaign_vertical);
    }
    walk(obj, builder);
    builder.finish();
    return out;
  } catch (...) {
    try {
      return internal_failure();
    } catch (...) {
      return ParsedLead{};
    }
  }
}

ParsedLead parse_lead_form(const std::vector<std::pair<std::string, std::string>>& fields,
                           const VerticalRegistry& verticals, std::string_view campaign_vertical,
                           const ValidationLimits& limits) {
  try {
    ParsedLead out;
    LeadBuilder builder(out, LeadShape::kCampaign, /*form=*/true, verticals, limits);
    builder.campaign_vertical(campaign_vertical);
    for (const auto& [name, value] : fields) {
      Input in;
      in.kind = Input::Kind::kString;
      in.text = value;
      builder.field(name, in);
    }
    builder.finish();
    return out;
  } catch (...) {
    try {
      return internal_failure();
    } catch (...) {
      return ParsedLead{};
    }
  }
}

std::string peek_campaign_key(std::string_view json_body) {
  try {
    JsonScratch& tls = scratch();
    std::optional<simdjson::ondemand::parser> large_parser;
    std::string large_buffer;
    simdjson::ondemand::parser* parser = &tls.ondemand;
    std::string* buffer = &tls.buffer;
    if (json_body.size() > kLargeBody) {  // keep the thread cache small
      large_parser.emplace();
      parser = &*large_parser;
      buffer = &large_buffer;
    }
    fill_padded(*buffer, json_body);
    simdjson::ondemand::document doc;
    if (parser->iterate(buffer->data(), json_body.size(), buffer->size()).get(doc)) return {};
    simdjson::ondemand::object obj;
    if (doc.get_object().get(obj)) return {};
    for (auto field_result : obj) {
      simdjson::ondemand::field field;
      if (std::move(field_result).get(field)) return {};
      std::string_view key;
      if (field.unescaped_key().get(key)) return {};
      if (key != "SELLER_CAMPAIGN_KEY") continue;
      std::string_view value;
      if (field.value().get_string().get(value)) return {};
      return std::string(trim(value));
    }
    return {};
  } catch (...) {
    return {};
  }
}

std::string normalize_email(std::string_view in) {
  const std::string_view s = trim(in);
  if (s.empty() || s.size() > 254) return {};
  const std::size_t at = s.find('@');
  if (at == std::string_view::npos || at == 0 || at > 64) return {};
  const std::string_view local = s.substr(0, at);
  const std::string_view domain = s.substr(at + 1);
  if (domain.empty() || domain.size() > 253) return {};

  // Local part: dot-atom (RFC 5322 atext separated by single dots).
  static constexpr std::string_view kAtextSpecials = "!#$%&'*+-/=?^_`{|}~";
  bool after_dot = true;
  for (char c : local) {
    if (c == '.') {
      if (after_dot) return {};
      after_dot = true;
    } else if (is_alnum(c) || kAtextSpecials.find(c) != std::string_view::npos) {
      after_dot = false;
    } else {
      return {};
    }
  }
  if (after_dot) return {};

  // Domain: LDH labels of 1..63, at least two, the last one not all digits.
  std::size_t labels = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = domain.find('.', start);
    const std::string_view label = domain.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return {};
    bool all_digits = true;
    for (char c : label) {
      if (!(is_alnum(c) || c == '-')) return {};
      if (!is_digit(c)) all_digits = false;
    }
    ++labels;
    if (dot == std::string_view::npos) {
      if (all_digits || label.size() < 2) return {};
      break;
    }
    start = dot + 1;
  }
  if (labels < 2) return {};

  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string normalize_phone(std::string_view in) {
  const std::string_view s = trim(in);
  if (s.empty() || s.size() > kMaxPhoneInput) return {};
  std::array<char, 11> digits{};
  std::size_t count = 0;
  bool plus = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (is_digit(c)) {
      if (count == digits.size()) return {};
      digits[count++] = c;
    } else if (c == '+') {
      if (i != 0) return {};
      plus = true;
    } else if (c != ' ' && c != '(' && c != ')' && c != '-' && c != '.') {
      return {};
    }
  }
  const char* d = digits.data();
  if (count == 11) {
    if (digits[0] != '1') return {};
    ++d;
  } else if (count != 10 || plus) {  // "+" announces a country code, and only +1 is NANP
    return {};
  }
  // NPA (area code): [2-9] and not N11; NXX (exchange): [2-9].
  if (d[0] < '2' || (d[1] == '1' && d[2] == '1')) return {};
  if (d[3] < '2') return {};
  std::string out;
  out.reserve(12);
  out += "+1";
  out.append(d, 10);
  return out;
}

bool normalize_zip(std::string_view in, std::string& zip, std::string& zip4) {
  const std::string_view s = trim(in);
  if (s.size() == 5 && all_digits(s)) {
    zip.assign(s);
    zip4.clear();
    return true;
  }
  if (s.size() == 10 && s[5] == '-' && all_digits(s.substr(0, 5)) && all_digits(s.substr(6))) {
    zip.assign(s.substr(0, 5));
    zip4.assign(s.substr(6));
    return true;
  }
  if (s.size() == 9 && all_digits(s)) {
    zip.assign(s.substr(0, 5));
    zip4.assign(s.substr(5));
    return true;
  }
  zip.clear();
  zip4.clear();
  return false;
}

bool is_valid_ip(std::string_view in) {
  if (in.empty() || in.size() > 45) return false;  // INET6_ADDRSTRLEN - 1
  if (in.find('\0') != std::string_view::npos) return false;
  std::array<char, 46> text{};
  std::memcpy(text.data(), in.data(), in.size());
  std::array<unsigned char, 16> addr{};
  return inet_pton(AF_INET, text.data(), addr.data()) == 1 || inet_pton(AF_INET6, text.data(), addr.data()) == 1;
}

}  // namespace leadflow
