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
#include "field_checks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "leadflow/base/text.hpp"

namespace leadflow::validation {
namespace {

constexpr std::size_t kMaxErrors = 100;
constexpr std::size_t kMaxDisplayChars = 64;  // a hostile key is echoed back at most this long

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
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; });
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

constexpr const char* kBeyondInt64 =
    "integers must be between -9223372036854775808 and 9223372036854775807 (send a larger one "
    "as a string)";

// Whether a number is written as an integer, and its value: from the JSON (exact) or from text
// ("2019", "-7"; a leading "+" allowed). kBeyond: an integer outside int64's range.
enum class Whole { kNo, kYes, kBeyond };
Whole whole_number(const Input& v, std::string_view text, std::int64_t& out) {
  if (v.kind == Input::Kind::kNumber) {
    if (v.beyond_int64) return Whole::kBeyond;
    if (!v.integral) return Whole::kNo;
    out = v.integer;
    return Whole::kYes;
  }
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const std::string_view digits = !text.empty() && text.front() == '-' ? text.substr(1) : text;
  if (!all_digits(digits)) return Whole::kNo;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), out);
  if (res.ec == std::errc::result_out_of_range) return Whole::kBeyond;
  return res.ec == std::errc() && res.ptr == text.data() + text.size() ? Whole::kYes : Whole::kNo;
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

constexpr std::uint32_t bit(Std id) { return 1u << static_cast<unsigned>(id); }

}  // namespace

void LeadBuilder::campaign_vertical(std::string_view name) {
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

void LeadBuilder::field(std::string_view key, const Input& v) {
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
          shape_ == LeadShape::kApi ? "is not a lead field"
                                    : "is not a field of this campaign's vertical");
  }
}

void LeadBuilder::finish() {
  const auto required =
      shape_ == LeadShape::kApi ? std::begin(kApiRequired) : std::begin(kCampaignRequired);
  const auto required_end =
      shape_ == LeadShape::kApi ? std::end(kApiRequired) : std::end(kCampaignRequired);
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

std::optional<Std> LeadBuilder::lookup(std::string_view key) const {
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

std::string_view LeadBuilder::name_of(Std id) const {
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

std::string LeadBuilder::field_path(std::string_view name) const {
  if (shape_ == LeadShape::kApi) return "custom_fields." + std::string(name);
  return std::string(name);
}

void LeadBuilder::error(const Path& path, std::string_view code, std::string message) {
  if (!capped_) error(path.str(), code, std::move(message));
}

void LeadBuilder::error(std::string field, std::string_view code, std::string message) {
  if (capped_) return;
  if (out_.errors.size() >= kMaxErrors) {
    capped_ = true;
    out_.errors.push_back(
        {"body", "too_many_errors",
         "more than " + std::to_string(kMaxErrors) + " errors; later ones are not listed"});
    return;
  }
  out_.errors.push_back({std::move(field), std::string(code), std::move(message)});
}

const Vertical* LeadBuilder::find_vertical(std::string_view raw) const {
  raw = trim(raw);
  std::array<char, 64> lower{};
  if (raw.empty() || raw.size() > lower.size()) return nullptr;
  for (std::size_t i = 0; i < raw.size(); ++i) lower[i] = ascii_lower(raw[i]);
  return registry_.find(std::string_view(lower.data(), raw.size()));
}

void LeadBuilder::set_vertical(const Vertical* v) {
  vertical_ = v;
  vertical_seen_.clear();
  if (v == nullptr) return;
  const bool any_required = std::any_of(v->fields.begin(), v->fields.end(),
                                        [](const VerticalField& f) { return f.required; });
  if (any_required) vertical_seen_.assign(v->fields.size(), false);
}

void LeadBuilder::mark_vertical_seen(const VerticalField& spec) {
  if (vertical_seen_.empty()) return;
  const auto index = static_cast<std::size_t>(&spec - vertical_->fields.data());
  if (index < vertical_seen_.size()) vertical_seen_[index] = true;
}

LeadBuilder::Got LeadBuilder::text(const Path& path, const Input& v, std::size_t max_chars,
                                   bool allow_tab, std::string_view& out) {
  if (v.kind == Input::Kind::kNull) return Got::kAbsent;
  if (v.kind != Input::Kind::kString) {
    error(path, "invalid_type", "must be a string");
    return Got::kError;
  }
  return check_text(path, trim(v.text), max_chars, allow_tab, out);
}

LeadBuilder::Got LeadBuilder::check_text(const Path& path, std::string_view s,
                                         std::size_t max_chars, bool allow_tab,
                                         std::string_view& out) {
  if (s.empty()) return Got::kAbsent;
  const TextInfo info = inspect_text(s, allow_tab);
  if (info.problem != TextProblem::kNone) {
    error(path, "invalid_format", std::string(text_problem_message(info.problem)));
    return Got::kError;
  }
  if (info.chars > max_chars) {
    error(path, "too_long", "must be at most " + std::to_string(max_chars) + " characters");
    return Got::kError;
  }
  out = s;
  return Got::kValue;
}

LeadBuilder::Got LeadBuilder::required_text(const Path& path, const Input& v, std::size_t max_chars,
                                            std::string_view& out) {
  const Got got = text(path, v, max_chars, false, out);
  if (got == Got::kAbsent) error(path, "required", "is required");
  return got;
}

void LeadBuilder::standard(Std id, std::string_view key, const Input& v) {
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
      if (text(path, v, limits_.max_consent_text, true, s) == Got::kValue)
        lead_.tcpa_consent_text = s;
      break;
    case Std::kCustomFields:
      custom_fields(v);
      break;
    case Std::kTest:
      lead_.test = flag(path, v).value_or(false);
      break;
  }
}

void LeadBuilder::tcpa_consent(const Path& path, const Input& v) {
  if (auto b = flag(path, v)) lead_.tcpa_consent = *b;
}

std::optional<bool> LeadBuilder::flag(const Path& path, const Input& v) {
  switch (v.kind) {
    case Input::Kind::kNull:
      return std::nullopt;
    case Input::Kind::kBool:
      return v.boolean;
    case Input::Kind::kString:
      if (shape_ == LeadShape::kCampaign) {
        const std::string_view s = trim(v.text);
        if (s.empty()) return std::nullopt;
        if (auto b = parse_bool_text(s)) return *b;
        error(path, "invalid_type", "must be true or false");
        return std::nullopt;
      }
      break;
    case Input::Kind::kNumber:
      if (shape_ == LeadShape::kCampaign && (v.number == 0 || v.number == 1)) return v.number == 1;
      break;
    default:
      break;
  }
  error(path, "invalid_type",
        shape_ == LeadShape::kApi ? "must be a boolean" : "must be true or false");
  return std::nullopt;
}

void LeadBuilder::custom_fields(const Input& v) {
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
      if (n == 2)
        error("custom_fields." + display_key(key), "duplicate_field", "appears more than once");
      continue;
    }
    if (key.empty() || !valid_custom_key_chars(key)) {
      error("custom_fields." + display_key(key), "invalid_format",
            "keys must match [A-Za-z0-9_.-]");
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

void LeadBuilder::free_form(std::string_view key, const Input& v) {
  if (v.kind == Input::Kind::kNumber) {
    if (v.beyond_int64) {
      error("custom_fields." + std::string(key), "out_of_range", kBeyondInt64);
    } else if (v.integral) {
      lead_.custom_fields.emplace_back(std::string(key), v.integer);  // 2019 stays 2019
    } else if (std::isfinite(v.number)) {
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
          std::string(text_problem_message(info.problem)));
    return;
  }
  if (info.chars > limits_.max_custom_value) {
    error("custom_fields." + std::string(key), "too_long",
          "must be at most " + std::to_string(limits_.max_custom_value) + " characters");
    return;
  }
  lead_.custom_fields.emplace_back(std::string(key), std::string(s));
}

void LeadBuilder::typed(const Path& path, const Input& v, const VerticalField& spec,
                        bool top_level) {
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
    error(path, "invalid_type",
          top_level ? "must be a single value" : "values must be numbers or strings");
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
      std::string_view s;
      if (v.kind == Input::Kind::kNumber) {
        d = v.number;
      } else if (v.kind == Input::Kind::kString) {
        s = trim(v.text);
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
      std::int64_t whole = 0;
      Whole written = whole_number(v, s, whole);
      if (written == Whole::kBeyond) {
        error(path, "out_of_range", kBeyondInt64);
        return;
      }
      if (!std::isfinite(d) || (integer && std::trunc(d) != d)) {
        error(path, "invalid_type", kind_message);
        return;
      }
      if ((spec.min && d < *spec.min) || (spec.max && d > *spec.max)) {
        std::string message;
        if (spec.min && spec.max) {
          message =
              "must be between " + format_number(*spec.min) + " and " + format_number(*spec.max);
        } else if (spec.min) {
          message = "must be at least " + format_number(*spec.min);
        } else {
          message = "must be at most " + format_number(*spec.max);
        }
        error(path, "out_of_range", std::move(message));
        return;
      }
      // An integer field written 30.0 is the integer 30 (JSON has one number type).
      if (written == Whole::kNo && integer) {
        if (std::fabs(d) >= 9223372036854775808.0) {
          error(path, "out_of_range", kBeyondInt64);
          return;
        }
        whole = static_cast<std::int64_t>(d);
        written = Whole::kYes;
      }
      if (written == Whole::kYes)
        lead_.custom_fields.emplace_back(spec.name, whole);  // every digit kept
      else
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
              top_level ? "must be true or false"
                        : "must be \"true\" or \"false\" (values are numbers or strings)");
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

}  // namespace leadflow::validation
