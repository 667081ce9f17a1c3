// The standard fields of each surface, described from the tables and limits the checks use
// (field_checks.hpp), so that a campaign's specification says what the validator does.
#include <algorithm>
#include <iterator>

#include "field_checks.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {

namespace {

using validation::Std;

// Text limits come from ValidationLimits; what a valid value is, from the checks in
// field_checks.cpp (each sentence says what that check refuses).
StandardField describe(Std id, std::string_view name, const ValidationLimits& l) {
  switch (id) {
    case Std::kCampaignKey:
      return {name, true, "string", 0, "the campaign key (for the form post, the key in the path)"};
    case Std::kFirstName:
    case Std::kLastName:
      return {name, true, "string", l.max_name, "not empty once trimmed"};
    case Std::kEmail:
      return {name, true, "string", l.max_email,
              "an e-mail address; compared lowercased for duplicates"};
    case Std::kPhone:
      return {name, true, "string", validation::kMaxPhoneInput,
              "a valid 10-digit US phone number; punctuation, spaces and a leading 1 are dropped"};
    case Std::kZip:
      return {name, true, "string", validation::kMaxZipInput,
              "a US ZIP code, 12345 or 12345-6789, of an assigned area (the state is derived "
              "from it)"};
    case Std::kVertical:
      return {name, true, "string", 256, "one of the configured verticals"};
    case Std::kSource:
      return {name, false, "string", l.max_text, "free text: where the lead came from"};
    case Std::kLandingPage:
      return {name, false, "string", l.max_text, "free text: the page the person filled in"};
    case Std::kIp:
      return {name, false, "string", 64, "an IPv4 or IPv6 address"};
    case Std::kUserAgent:
      return {name, false, "string", l.max_user_agent, "the person's browser, as sent"};
    case Std::kTrustedForm:
      return {name, false, "string", l.max_text, "an http:// or https:// URL without spaces"};
    case Std::kJornaya:
      return {name, false, "string", l.max_text, "letters, digits and '-' only"};
    case Std::kTcpaConsent:
      return {name, false, "boolean", 0,
              "true or false (the form post also takes yes/no, on/off, 1/0)"};
    case Std::kTcpaText:
      return {name, false, "string", l.max_consent_text, "the consent wording the person saw"};
    case Std::kCustomFields:
      return {name, false, "object", 0, "the vertical's fields, and others of your own"};
    case Std::kTest:
      return {name, false, "boolean", 0,
              "true: a test lead, validated and stored as a test and offered to no buyer (the "
              "form post also takes yes/no, on/off, 1/0)"};
  }
  return {name, false, "string", 0, ""};
}

}  // namespace

std::vector<StandardField> standard_fields(LeadShape shape, const ValidationLimits& limits) {
  std::vector<StandardField> out;
  // Required or not is the checks' own list, whatever describe() says of the field.
  const auto add = [&](const auto& names, const auto& required) {
    for (const auto& n : names) {
      StandardField f = describe(n.id, n.name, limits);
      f.required = std::find(std::begin(required), std::end(required), n.id) != std::end(required);
      out.push_back(f);
    }
  };
  if (shape == LeadShape::kApi) {
    add(validation::kApiNames, validation::kApiRequired);
  } else {
    add(validation::kCampaignNames, validation::kCampaignRequired);
  }
  return out;
}

}  // namespace leadflow
