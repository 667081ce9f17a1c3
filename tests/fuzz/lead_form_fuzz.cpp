// The legacy form surface (POST /{seller_campaign_key}) as the front reads it: an urlencoded body
// through http::parse_urlencoded, or a multipart one through http::parse_multipart, into
// parse_lead_form the way surface_b.cpp hands it over (the path's key replaces any key in the
// body). Every result goes through lead_checks.hpp. The normalisers see the raw input too: each
// must accept its own output unchanged.
// Input: the body. It is read as urlencoded, and as multipart with the boundary "lfboundary".
// The campaign's vertical is steered by the body's SELLER_CAMPAIGN_KEY: a vertical's name is a
// campaign of that vertical, "retired" a campaign whose vertical is no longer configured, any
// other key an auto_insurance campaign.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "lead_checks.hpp"
#include "leadflow/http/forms.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/validation/validation.hpp"

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;
using leadflow::fuzz::check_parsed_lead;
using leadflow::fuzz::verticals;

constexpr std::string_view kMultipartType = "multipart/form-data; boundary=lfboundary";

std::string vertical_for(std::string_view key) {
  if (key == "retired") return "no_longer_configured";
  if (verticals().find(key) != nullptr) return std::string(key);
  return "auto_insurance";
}

// surface_b.cpp: the last SELLER_CAMPAIGN_KEY in the body is the key; the form's fields go to
// the validator without it, and the key (the path's, which authenticated) is added back.
void validate_form(const Fields& fields) {
  std::string key;
  for (const auto& [name, value] : fields)
    if (name == "SELLER_CAMPAIGN_KEY") key = value;
  Fields without_key;
  for (const auto& field : fields)
    if (field.first != "SELLER_CAMPAIGN_KEY") without_key.push_back(field);
  without_key.emplace_back("SELLER_CAMPAIGN_KEY", key);
  check_parsed_lead(leadflow::parse_lead_form(without_key, verticals(), vertical_for(key)));
  // And as sent, the key field included wherever it was.
  check_parsed_lead(leadflow::parse_lead_form(fields, verticals(), vertical_for(key)));
}

void check_normalisers(std::string_view text) {
  if (const std::string email = leadflow::normalize_email(text); !email.empty())
    FUZZ_CHECK(leadflow::normalize_email(email) == email);
  if (const std::string phone = leadflow::normalize_phone(text); !phone.empty()) {
    FUZZ_CHECK(phone.size() == 12 && phone.starts_with("+1"));
    FUZZ_CHECK(leadflow::normalize_phone(phone) == phone);
  }
  std::string zip, zip4;
  if (leadflow::normalize_zip(text, zip, zip4)) {
    FUZZ_CHECK(zip.size() == 5 && (zip4.empty() || zip4.size() == 4));
    std::string zip_again, zip4_again;
    FUZZ_CHECK(
        leadflow::normalize_zip(zip4.empty() ? zip : zip + "-" + zip4, zip_again, zip4_again));
    FUZZ_CHECK(zip_again == zip && zip4_again == zip4);
    const std::string_view state = leadflow::state_for_zip(zip);
    FUZZ_CHECK(state.empty() || state.size() == 2);
  }
  (void)leadflow::state_for_zip(text);
  (void)leadflow::is_valid_ip(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  Fields fields;
  leadflow::http::parse_urlencoded(body, fields);
  validate_form(fields);

  std::vector<leadflow::http::FormPart> parts;
  if (leadflow::http::parse_multipart(kMultipartType, body, parts)) {
    Fields from_parts;
    for (const auto& part : parts) {
      FUZZ_CHECK(!part.name.empty());
      from_parts.emplace_back(part.name, part.content);
    }
    validate_form(from_parts);
  }

  // Each line of the input as a value on its own, as a normaliser receives a form field.
  std::string_view rest = body;
  for (int lines = 0; lines < 8 && !rest.empty(); ++lines) {
    const std::size_t eol = rest.find('\n');
    check_normalisers(rest.substr(0, eol));
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
  return 0;
}
