#pragma once
// What every validated lead must satisfy, whichever surface and reader it came through: its errors
// are bounded and readable, and a lead without errors is normalised (each normaliser leaves its
// field as it is) and crosses the queue unchanged (encode_lead, then decode_lead, gives it back).
// Shared by the JSON and the form harness.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow::fuzz {

inline const VerticalRegistry& verticals() {
  static const VerticalRegistry registry = VerticalRegistry::defaults();
  return registry;
}

// The queue form of a lead with its custom fields ordered by name: decode_lead gives them back
// in that order, whatever order the body had.
inline std::string canonical_encoding(Lead lead) {
  std::stable_sort(lead.custom_fields.begin(), lead.custom_fields.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return encode_lead(lead);
}

// `validated` false: a Surface B body read before its campaign was known (validated_for empty),
// whose lead is not filled in yet.
inline void check_parsed_lead(const ParsedLead& parsed, bool validated = true) {
  // At most 100 errors and one "too_many_errors" after them (field_checks.cpp).
  FUZZ_CHECK(parsed.errors.size() <= 101);
  if (parsed.malformed) {
    FUZZ_CHECK(parsed.errors.size() == 1 && parsed.errors[0].field == "body");
    return;
  }
  for (const FieldError& e : parsed.errors) {
    // A field is named in every error; the name is "" only for a body's key "" ({"": 1}).
    const bool named = !e.field.empty() || e.code == "unknown_field";
    if (!named || e.code.empty() || e.message.empty())
      std::fprintf(stderr, "error: field '%s' code '%s' message '%s'\n", e.field.c_str(),
                   e.code.c_str(), e.message.c_str());
    FUZZ_CHECK(named && !e.code.empty() && !e.message.empty());
    // Errors echo keys back to the seller; what is echoed is readable text.
    FUZZ_CHECK(valid_utf8(e.field) && valid_utf8(e.message));
  }
  if (!parsed.errors.empty() || !validated) return;

  const Lead& lead = parsed.lead;
  FUZZ_CHECK(!lead.email.empty() && normalize_email(lead.email) == lead.email);
  FUZZ_CHECK(!lead.phone.empty() && normalize_phone(lead.phone) == lead.phone);
  std::string zip, zip4;
  FUZZ_CHECK(normalize_zip(lead.zip_code, zip, zip4) && zip == lead.zip_code && zip4.empty());
  FUZZ_CHECK(lead.zip4.empty() || (lead.zip4.size() == 4 && all_digits(lead.zip4)));
  FUZZ_CHECK(lead.state == state_for_zip(lead.zip_code));
  FUZZ_CHECK(lead.ip_address.empty() || is_valid_ip(lead.ip_address));
  if (!lead.vertical.empty()) FUZZ_CHECK(verticals().find(lead.vertical) != nullptr);
  for (const auto& [name, value] : lead.custom_fields) FUZZ_CHECK(!name.empty());

  // The lead as the queue carries it to a worker.
  const std::string encoded = canonical_encoding(lead);
  const std::optional<Lead> decoded = decode_lead(encoded);
  FUZZ_CHECK(decoded.has_value());
  FUZZ_CHECK(canonical_encoding(*decoded) == encoded);
}

}  // namespace leadflow::fuzz
