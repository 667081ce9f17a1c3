#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/domain/field_error.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/verticals.hpp"

namespace leadflow {

/// Bounds on what a request may carry. Everything is bounded (SPEC §6).
struct ValidationLimits {
  std::size_t max_name = 100;  // first/last name
  std::size_t max_email = 254;
  std::size_t max_text = 512;  // source, landing_page, trustedform url, jornaya id
  std::size_t max_user_agent = 1024;
  std::size_t max_consent_text = 4096;
  std::size_t max_custom_fields = 50;
  std::size_t max_custom_key = 64;
  std::size_t max_custom_value = 1024;
  std::size_t max_depth = 8;  // JSON nesting; deeper is refused, never recursed
};

/// The field names a request uses. Surface A (POST /v1/leads) names email/phone and carries
/// vertical + custom_fields; Surface B (POST /api/v1/lead and the legacy form) names
/// email_address/phone_home, carries SELLER_CAMPAIGN_KEY, takes the vertical from the campaign,
/// and puts the vertical's fields at the top level.
enum class LeadShape { kApi, kCampaign };

struct ParsedLead {
  Lead lead;                 // normalised; meaningful only when errors is empty
  FieldErrors errors;        // every offending field, in body order
  std::string campaign_key;  // Surface B: SELLER_CAMPAIGN_KEY as sent ("" if absent)
  bool malformed = false;    // the body is not a JSON object at all (errors has one entry "body")
  /// Surface B: the vertical the lead was validated against. nullopt when the reader was told
  /// the campaign is not known yet (see VerticalOf): then only campaign_key and malformed hold.
  std::optional<std::string> validated_for;
};

/// Surface B's campaign vertical for a SELLER_CAMPAIGN_KEY as sent, asked in the middle of the
/// one parse of a body: the vertical to validate against ("" when there is no such campaign:
/// the lead is validated as one without a campaign), or nullopt when only a wait (a store
/// lookup) could say. Then the lead is left unvalidated and the caller finds the campaign first.
using VerticalOf = std::function<std::optional<std::string>(std::string_view key)>;

/// Parses and validates a JSON body (simdjson). `campaign_vertical` is the campaign's vertical for
/// kCampaign and ignored for kApi. Never throws; hostile input yields errors.
ParsedLead parse_lead_json(std::string_view body, LeadShape shape,
                           const VerticalRegistry& verticals, std::string_view campaign_vertical,
                           const ValidationLimits& limits = {});

/// A Surface B JSON body in one parse: SELLER_CAMPAIGN_KEY is read first and `vertical_of`
/// names the vertical the lead is validated against.
ParsedLead parse_campaign_lead_json(std::string_view body, const VerticalRegistry& verticals,
                                    const VerticalOf& vertical_of,
                                    const ValidationLimits& limits = {});

/// The same for a form post (urlencoded or multipart), all values strings; numbers in vertical
/// fields are converted by the field's type. Always kCampaign shape.
ParsedLead parse_lead_form(const std::vector<std::pair<std::string, std::string>>& fields,
                           const VerticalRegistry& verticals, std::string_view campaign_vertical,
                           const ValidationLimits& limits = {});

/// One standard (not vertical-specific) field of a surface's lead, as the checks above apply
/// it: for the specification a campaign hands to its seller's developers.
struct StandardField {
  std::string_view name;  // as the surface names it (Surface B: email_address, phone_home)
  bool required = false;
  std::string_view type;       // "string", "boolean", "object"
  std::size_t max_length = 0;  // of the text as sent; 0 where not a text
  std::string_view rule;       // what a valid value is, in a sentence
};
/// The standard fields of `shape`, in the order the surface lists them.
std::vector<StandardField> standard_fields(LeadShape shape, const ValidationLimits& limits = {});

/// Only SELLER_CAMPAIGN_KEY of a Surface B JSON body ("" when absent or not a string), so the key
/// can be authenticated before the body is validated against the campaign's vertical.
std::string peek_campaign_key(std::string_view json_body);

// Normalisers, exposed for tests and for buyer filters.
/// Lower-cased e-mail if syntactically valid (RFC 5321 limits, a dot-atom local part, a domain
/// with a dot and valid labels), else "".
std::string normalize_email(std::string_view in);
/// E.164 for a US/NANP number given as 10 digits, 11 digits starting with 1, or with common
/// punctuation ("(555) 123-4567", "+1 555.123.4567"). "" for impossible NANP numbers (area code
/// or exchange starting 0/1, N11 area codes, 555-01XX fictional range is allowed).
std::string normalize_phone(std::string_view in);

/// What one search box's text names (GET /v1/leads?q=): a lead id (exact), else an e-mail, else
/// a phone, the e-mail and phone normalised as a lead's own are (normalize_email,
/// normalize_phone), so "  Jane@Example.COM " and "(555) 123-4567" find what was posted; kNone
/// for anything else. Leading and trailing blanks are dropped first.
struct LeadSearchTerm {
  enum class Kind { kNone, kId, kEmail, kPhone };
  Kind kind = Kind::kNone;
  std::string value;  // the id, the normalised e-mail or the E.164 phone
};
LeadSearchTerm parse_lead_search(std::string_view q);
/// One entry of a suppression list's upload (docs/suppression.md): a SHA-256 already made by the
/// list's owner (64 hex digits, either case), else an e-mail, else a phone, normalised as a
/// lead's own are (normalize_email, normalize_phone), so that the fingerprint made of it meets
/// the lead's; kNone for anything else. One CSV cell: blanks and surrounding double quotes are
/// dropped first.
struct SuppressionEntry {
  enum class Kind { kNone, kSha256, kEmail, kPhone };
  Kind kind = Kind::kNone;
  std::string value;  // the hex digest, lower-cased; the normalised e-mail; the E.164 phone
};
SuppressionEntry parse_suppression_entry(std::string_view cell);
/// Splits "12345" or "12345-6789" into zip and zip4; false when malformed.
bool normalize_zip(std::string_view in, std::string& zip, std::string& zip4);
/// The USPS state for a five-digit ZIP by its three-digit prefix, or "" if unassigned.
std::string_view state_for_zip(std::string_view zip5);
/// Valid IPv4 or IPv6 text (inet_pton).
bool is_valid_ip(std::string_view in);

}  // namespace leadflow
