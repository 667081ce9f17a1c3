// Lead parsing and validation: normalisers, Surface A and B JSON bodies, form posts, hostile input.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <variant>

#include "leadflow/domain/verticals.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

const VerticalRegistry& validation_registry() {
  static const VerticalRegistry r = VerticalRegistry::defaults();
  return r;
}

json valid_api_body() {
  return json{{"first_name", "John"},      {"last_name", "Doe"},  {"email", "john.doe@example.com"},
              {"phone", "(555) 234-5678"}, {"zip_code", "90210"}, {"vertical", "auto_insurance"}};
}

json valid_campaign_body() {
  return json{
      {"SELLER_CAMPAIGN_KEY", "ck_test_123"}, {"first_name", "Jane"},       {"last_name", "Roe"},
      {"email_address", "Jane@Example.com"},  {"phone_home", "5552345678"}, {"zip_code", "10001"}};
}

ParsedLead api(const std::string& body, const ValidationLimits& limits = {}) {
  return parse_lead_json(body, LeadShape::kApi, validation_registry(), "", limits);
}
ParsedLead api(const json& body) { return api(body.dump()); }

ParsedLead campaign(const std::string& body, std::string_view vertical = "solar",
                    const VerticalRegistry& reg = validation_registry()) {
  return parse_lead_json(body, LeadShape::kCampaign, reg, vertical);
}
ParsedLead campaign(const json& body, std::string_view vertical = "solar") {
  return campaign(body.dump(), vertical);
}

using Form = std::vector<std::pair<std::string, std::string>>;

Form valid_form() {
  return {{"first_name", "Jane"},
          {"last_name", "Roe"},
          {"email_address", "jane@example.com"},
          {"phone_home", "555-234-5678"},
          {"zip_code", "10001-1234"}};
}

const FieldError* find_error(const ParsedLead& p, std::string_view field) {
  for (const auto& e : p.errors) {
    if (e.field == field) return &e;
  }
  return nullptr;
}

bool has_error(const ParsedLead& p, std::string_view field, std::string_view code) {
  for (const auto& e : p.errors) {
    if (e.field == field && e.code == code) return true;
  }
  return false;
}

std::string errors_text(const ParsedLead& p) {
  std::string out;
  for (const auto& e : p.errors) out += e.field + ":" + e.code + " (" + e.message + ")\n";
  return out;
}

const CustomValue* custom(const Lead& lead, std::string_view name) {
  for (const auto& [k, v] : lead.custom_fields) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string custom_string(const Lead& lead, std::string_view name) {
  const CustomValue* v = custom(lead, name);
  if (v == nullptr || !std::holds_alternative<std::string>(*v)) return "<absent or not a string>";
  return std::get<std::string>(*v);
}

double custom_number(const Lead& lead, std::string_view name) {
  const CustomValue* v = custom(lead, name);
  if (v != nullptr && std::holds_alternative<std::int64_t>(*v))
    return static_cast<double>(std::get<std::int64_t>(*v));
  if (v == nullptr || !std::holds_alternative<double>(*v)) return std::nan("");
  return std::get<double>(*v);
}

// The value when it is kept as an integer (written without a fraction or exponent).
std::optional<std::int64_t> custom_integer(const Lead& lead, std::string_view name) {
  const CustomValue* v = custom(lead, name);
  if (v == nullptr || !std::holds_alternative<std::int64_t>(*v)) return std::nullopt;
  return std::get<std::int64_t>(*v);
}

void expect_malformed(const ParsedLead& p, std::string_view code) {
  EXPECT_TRUE(p.malformed);
  ASSERT_EQ(p.errors.size(), 1u) << errors_text(p);
  EXPECT_EQ(p.errors[0].field, "body");
  EXPECT_EQ(p.errors[0].code, code);
  EXPECT_FALSE(p.errors[0].message.empty());
}

// A registry whose auto_insurance requires vehicle_year and whose solar requires home_owner.
VerticalRegistry registry_with_required() {
  VerticalRegistry r = VerticalRegistry::defaults();
  const std::string err = r.load_json(json::parse(R"({"verticals": [
      {"name": "auto_insurance", "fields": [{"name": "vehicle_year", "required": true}]},
      {"name": "solar", "fields": [{"name": "home_owner", "required": true}]}]})"));
  EXPECT_EQ(err, "");
  return r;
}

// ---------------------------------------------------------------------------------------------
// normalize_email

TEST(NormalizeEmailTest, LowerCasesAndTrimsValidAddresses) {
  EXPECT_EQ(normalize_email("John.Doe+Tag@Example.COM"), "john.doe+tag@example.com");
  EXPECT_EQ(normalize_email("  a@b.co \t"), "a@b.co");
  EXPECT_EQ(normalize_email("user@sub.domain.co.uk"), "user@sub.domain.co.uk");
  EXPECT_EQ(normalize_email("o'brien_x-y@my-host.example"), "o'brien_x-y@my-host.example");
  EXPECT_EQ(normalize_email("a!#$%&'*+-/=?^_`{|}~@x.io"), "a!#$%&'*+-/=?^_`{|}~@x.io");
  EXPECT_EQ(normalize_email("x@xn--80ak6aa92e.xn--p1ai"), "x@xn--80ak6aa92e.xn--p1ai");
  EXPECT_EQ(normalize_email("x@123.example.com"), "x@123.example.com");
}

TEST(NormalizeEmailTest, RejectsInvalidSyntax) {
  for (const char* bad : {"",
                          "   ",
                          "plain",
                          "@example.com",
                          "user@",
                          "user@localhost",
                          "a..b@example.com",
                          ".a@example.com",
                          "a.@example.com",
                          "a b@example.com",
                          "a@b@example.com",
                          "a@-example.com",
                          "a@example-.com",
                          "a@example..com",
                          "a@.example.com",
                          "a@example.com.",
                          "a@example.c",
                          "a@1.2.3.4",
                          "a@[1.2.3.4]",
                          "\"a\"@example.com",
                          "a@exa_mple.com",
                          "a(b)@example.com",
                          "a@example.com,",
                          "a,b@example.com"}) {
    EXPECT_EQ(normalize_email(bad), "") << bad;
  }
}

TEST(NormalizeEmailTest, RejectsNonAsciiAndControlCharacters) {
  EXPECT_EQ(normalize_email("jos\xC3\xA9@example.com"), "");
  EXPECT_EQ(normalize_email("a@ex\xC3\xA4mple.com"), "");
  EXPECT_EQ(normalize_email(std::string("a\0b@example.com", 15)), "");
  EXPECT_EQ(normalize_email("a\x01@example.com"), "");
}

TEST(NormalizeEmailTest, EnforcesRfc5321Lengths) {
  const std::string local64(64, 'a');
  EXPECT_EQ(normalize_email(local64 + "@example.com"), local64 + "@example.com");
  EXPECT_EQ(normalize_email(std::string(65, 'a') + "@example.com"), "");
  const std::string label63(63, 'b');
  EXPECT_EQ(normalize_email("a@" + label63 + ".com"), "a@" + label63 + ".com");
  EXPECT_EQ(normalize_email("a@" + std::string(64, 'b') + ".com"), "");
  // 254 in all is the most an address may have.
  std::string domain =
      std::string(63, 'c') + "." + std::string(63, 'd') + "." + std::string(63, 'e') + ".";
  std::string at254 = std::string(254 - 2 - domain.size() - 3, 'x') + "@" + domain + "com";
  // local part of 254 - 1 - (domain+com) characters
  at254 = std::string(254 - 1 - (domain.size() + 3), 'x') + "@" + domain + "com";
  ASSERT_EQ(at254.size(), 254u);
  EXPECT_EQ(normalize_email(at254), at254);
  EXPECT_EQ(normalize_email("x" + at254), "");
}

// ---------------------------------------------------------------------------------------------
// normalize_phone

TEST(NormalizePhoneTest, AcceptsCommonUsFormats) {
  EXPECT_EQ(normalize_phone("5552345678"), "+15552345678");
  EXPECT_EQ(normalize_phone("(555) 234-5678"), "+15552345678");
  EXPECT_EQ(normalize_phone("555-234-5678"), "+15552345678");
  EXPECT_EQ(normalize_phone("555.234.5678"), "+15552345678");
  EXPECT_EQ(normalize_phone("+1 555.234.5678"), "+15552345678");
  EXPECT_EQ(normalize_phone("+15552345678"), "+15552345678");
  EXPECT_EQ(normalize_phone("1-555-234-5678"), "+15552345678");
  EXPECT_EQ(normalize_phone("1 (555) 234 5678"), "+15552345678");
  EXPECT_EQ(normalize_phone("  2125551234  "), "+12125551234");
}

TEST(NormalizePhoneTest, AllowsFictional555Numbers) {
  EXPECT_EQ(normalize_phone("(212) 555-0123"), "+12125550123");
  EXPECT_EQ(normalize_phone("310-555-0199"), "+13105550199");
}

TEST(NormalizePhoneTest, RejectsImpossibleNanpNumbers) {
  EXPECT_EQ(normalize_phone("0552345678"), "");      // area code starts with 0
  EXPECT_EQ(normalize_phone("1552345678"), "");      // area code starts with 1 (10 digits)
  EXPECT_EQ(normalize_phone("11552345678"), "");     // ditto after the country code
  EXPECT_EQ(normalize_phone("5550345678"), "");      // exchange starts with 0
  EXPECT_EQ(normalize_phone("(555) 123-4567"), "");  // exchange starts with 1
  EXPECT_EQ(normalize_phone("911-234-5678"), "");    // N11 area code
  EXPECT_EQ(normalize_phone("411 234 5678"), "");
  EXPECT_EQ(normalize_phone("211-234-5678"), "");
}

TEST(NormalizePhoneTest, RejectsWrongLengthsAndForeignNumbers) {
  for (const char* bad :
       {"", "555234567", "555-234-567", "555234567890", "25552345678", "+5552345678",
        "+44 20 7946 0958", "+1 555 234 567", "555-234-5678 ext 12", "555_234_5678", "555/234/5678",
        "5552345678+", "555-234-5678x", "phone", "+", "()"}) {
    EXPECT_EQ(normalize_phone(bad), "") << bad;
  }
  EXPECT_EQ(normalize_phone(std::string(40, ' ') + "5552345678"), "+15552345678");  // trimmed first
  EXPECT_EQ(normalize_phone("5-5-5-2-3-4-5-6-7-8-----------------------"), "");  // > 32 characters
}

// ---------------------------------------------------------------------------------------------
// normalize_zip, state_for_zip

TEST(NormalizeZipTest, SplitsZipAndZip4) {
  std::string zip, zip4;
  ASSERT_TRUE(normalize_zip("90210", zip, zip4));
  EXPECT_EQ(zip, "90210");
  EXPECT_EQ(zip4, "");
  ASSERT_TRUE(normalize_zip("12345-6789", zip, zip4));
  EXPECT_EQ(zip, "12345");
  EXPECT_EQ(zip4, "6789");
  ASSERT_TRUE(normalize_zip(" 123456789 ", zip, zip4));
  EXPECT_EQ(zip, "12345");
  EXPECT_EQ(zip4, "6789");
}

TEST(NormalizeZipTest, RejectsMalformedAndClearsOutputs) {
  for (const char* bad :
       {"", "1234", "123456", "12345-678", "12345-67890", "12345_6789", "12345 6789", "abcde",
        "12a45", "12345-", "-12345", "1234-56789", "１２３４５"}) {
    std::string zip = "x", zip4 = "y";
    EXPECT_FALSE(normalize_zip(bad, zip, zip4)) << bad;
    EXPECT_EQ(zip, "") << bad;
    EXPECT_EQ(zip4, "") << bad;
  }
}

TEST(StateForZipTest, MapsPrefixesToStates) {
  const std::pair<const char*, const char*> cases[] = {
      {"00501", "NY"}, {"00601", "PR"}, {"00802", "VI"}, {"00901", "PR"}, {"02108", "MA"},
      {"02903", "RI"}, {"03301", "NH"}, {"04101", "ME"}, {"05401", "VT"}, {"05501", "MA"},
      {"06103", "CT"}, {"06901", "CT"}, {"07001", "NJ"}, {"08901", "NJ"}, {"09012", "AE"},
      {"09801", "AE"}, {"10001", "NY"}, {"14901", "NY"}, {"15213", "PA"}, {"19901", "DE"},
      {"20001", "DC"}, {"20101", "VA"}, {"20500", "DC"}, {"21201", "MD"}, {"22201", "VA"},
      {"25301", "WV"}, {"27601", "NC"}, {"29201", "SC"}, {"30301", "GA"}, {"32801", "FL"},
      {"34001", "AA"}, {"34101", "FL"}, {"35203", "AL"}, {"37201", "TN"}, {"39201", "MS"},
      {"39901", "GA"}, {"40202", "KY"}, {"43215", "OH"}, {"46204", "IN"}, {"48201", "MI"},
      {"50309", "IA"}, {"53202", "WI"}, {"55401", "MN"}, {"56901", "DC"}, {"57101", "SD"},
      {"58102", "ND"}, {"59601", "MT"}, {"60601", "IL"}, {"63101", "MO"}, {"66101", "KS"},
      {"68102", "NE"}, {"70112", "LA"}, {"72201", "AR"}, {"73102", "OK"}, {"73301", "TX"},
      {"74103", "OK"}, {"75201", "TX"}, {"79901", "TX"}, {"80202", "CO"}, {"82001", "WY"},
      {"83702", "ID"}, {"84101", "UT"}, {"85001", "AZ"}, {"87101", "NM"}, {"88510", "TX"},
      {"89101", "NV"}, {"90210", "CA"}, {"96161", "CA"}, {"96201", "AP"}, {"96601", "AP"},
      {"96801", "HI"}, {"96910", "GU"}, {"97201", "OR"}, {"98101", "WA"}, {"99401", "WA"},
      {"99501", "AK"}, {"99950", "AK"},
  };
  for (const auto& [zip, state] : cases) EXPECT_EQ(state_for_zip(zip), state) << zip;
}

TEST(StateForZipTest, UnassignedPrefixesAndBadInputGiveEmpty) {
  for (const char* zip :
       {"00000", "00123", "00401", "09901", "21301", "26901", "34301", "42801", "52901", "56801",
        "69401", "69901", "71501", "73201", "81701", "86601", "88601", "89901", "90901", "98701"}) {
    EXPECT_EQ(state_for_zip(zip), "") << zip;
  }
  EXPECT_EQ(state_for_zip(""), "");
  EXPECT_EQ(state_for_zip("9"), "");
  EXPECT_EQ(state_for_zip("ab123"), "");
  EXPECT_EQ(state_for_zip("902"), "CA");  // a prefix alone is enough
}

TEST(StateForZipTest, EveryPrefixIsEmptyOrATwoLetterCode) {
  int assigned = 0;
  for (int p = 0; p < 1000; ++p) {
    char zip[16];
    std::snprintf(zip, sizeof zip, "%03d00", p);
    const std::string_view s = state_for_zip(zip);
    if (s.empty()) continue;
    ++assigned;
    ASSERT_EQ(s.size(), 2u) << zip;
    EXPECT_TRUE(s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z') << zip;
  }
  EXPECT_GT(assigned, 880);
  EXPECT_LT(assigned, 960);
}

// ---------------------------------------------------------------------------------------------
// is_valid_ip

TEST(IsValidIpTest, AcceptsIpv4AndIpv6) {
  for (const char* ip :
       {"192.168.0.1", "8.8.8.8", "0.0.0.0", "255.255.255.255", "::1", "::", "2001:db8::1",
        "2001:0db8:0000:0000:0000:ff00:0042:8329", "::ffff:192.0.2.1", "FE80::1"}) {
    EXPECT_TRUE(is_valid_ip(ip)) << ip;
  }
}

TEST(IsValidIpTest, RejectsEverythingElse) {
  for (const char* ip :
       {"", "256.1.1.1", "1.2.3", "1.2.3.4.5", "1.2.3.4 ", " 1.2.3.4", "a.b.c.d", "localhost",
        "2001:db8::1::2", "2001:db8::1%eth0", "12345::", "1.2.3.4/24", "[::1]"}) {
    EXPECT_FALSE(is_valid_ip(ip)) << ip;
  }
  EXPECT_FALSE(is_valid_ip(std::string("1.2.3.4\0", 8)));
  EXPECT_FALSE(is_valid_ip(std::string(100, '1')));
}

// ---------------------------------------------------------------------------------------------
// Surface A: POST /v1/leads

TEST(ParseApiLeadTest, ValidMinimalLeadIsNormalised) {
  json body = valid_api_body();
  body["email"] = "  John.Doe@Example.COM ";
  body["first_name"] = "  John ";
  body["zip_code"] = "90210-1234";
  body["vertical"] = "Auto_Insurance";
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_FALSE(p.malformed);
  EXPECT_EQ(p.lead.surface, Surface::kApi);
  EXPECT_EQ(p.lead.first_name, "John");
  EXPECT_EQ(p.lead.last_name, "Doe");
  EXPECT_EQ(p.lead.email, "john.doe@example.com");
  EXPECT_EQ(p.lead.phone, "+15552345678");
  EXPECT_EQ(p.lead.zip_code, "90210");
  EXPECT_EQ(p.lead.zip4, "1234");
  EXPECT_EQ(p.lead.state, "CA");
  EXPECT_EQ(p.lead.vertical, "auto_insurance");
  EXPECT_FALSE(p.lead.tcpa_consent.has_value());
  EXPECT_TRUE(p.lead.custom_fields.empty());
  EXPECT_EQ(p.campaign_key, "");
}

TEST(ParseApiLeadTest, AllOptionalFieldsAreKept) {
  json body = valid_api_body();
  body["source"] = "google_ads";
  body["landing_page"] = "lp-42";
  body["ip_address"] = "2001:db8::1";
  body["user_agent"] = "Mozilla/5.0\t(X11)";
  body["trustedform_cert_url"] =
      "https://cert.trustedform.com/0123456789abcdef0123456789abcdef01234567";
  body["jornaya_leadid"] = "ABCDEF01-2345-6789-ABCD-EF0123456789";
  body["tcpa_consent"] = true;
  body["tcpa_consent_text"] = "By clicking\tSubmit I agree...";
  body["custom_fields"] = {{"vehicle_year", 2018}, {"age_band", "25-34"}, {"score", 7.5}};
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.lead.source, "google_ads");
  EXPECT_EQ(p.lead.landing_page, "lp-42");
  EXPECT_EQ(p.lead.ip_address, "2001:db8::1");
  EXPECT_EQ(p.lead.user_agent, "Mozilla/5.0\t(X11)");
  EXPECT_EQ(p.lead.trustedform_cert_url,
            "https://cert.trustedform.com/0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(p.lead.jornaya_leadid, "ABCDEF01-2345-6789-ABCD-EF0123456789");
  ASSERT_TRUE(p.lead.tcpa_consent.has_value());
  EXPECT_TRUE(*p.lead.tcpa_consent);
  EXPECT_EQ(p.lead.tcpa_consent_text, "By clicking\tSubmit I agree...");
  ASSERT_EQ(p.lead.custom_fields.size(), 3u);
  // nlohmann orders object keys alphabetically; body order is what is kept.
  EXPECT_EQ(p.lead.custom_fields[0].first, "age_band");
  EXPECT_EQ(p.lead.custom_fields[1].first, "score");
  EXPECT_EQ(p.lead.custom_fields[2].first, "vehicle_year");
  EXPECT_EQ(custom_string(p.lead, "age_band"), "25-34");
  EXPECT_EQ(custom_number(p.lead, "score"), 7.5);
  EXPECT_EQ(custom_number(p.lead, "vehicle_year"), 2018.0);
}

TEST(ParseApiLeadTest, CustomFieldsKeepBodyOrder) {
  const ParsedLead p = api(
      std::string(R"({"first_name":"A","last_name":"B","email":"a@b.co","phone":"5552345678",)") +
      R"("zip_code":"10001","vertical":"legal","custom_fields":{"z":1,"a":"x","m":2}})");
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  ASSERT_EQ(p.lead.custom_fields.size(), 3u);
  EXPECT_EQ(p.lead.custom_fields[0].first, "z");
  EXPECT_EQ(p.lead.custom_fields[1].first, "a");
  EXPECT_EQ(p.lead.custom_fields[2].first, "m");
}

TEST(ParseApiLeadTest, EveryMissingRequiredFieldIsReported) {
  const ParsedLead p = api(std::string("{}"));
  EXPECT_FALSE(p.malformed);
  ASSERT_EQ(p.errors.size(), 6u) << errors_text(p);
  const char* expected[] = {"first_name", "last_name", "email", "phone", "zip_code", "vertical"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p.errors[i].field, expected[i]);
    EXPECT_EQ(p.errors[i].code, "required");
  }
}

TEST(ParseApiLeadTest, EmptyWhitespaceAndNullRequiredFieldsAreRequired) {
  json body = valid_api_body();
  body["first_name"] = "";
  body["last_name"] = "   \t ";
  body["email"] = nullptr;
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "first_name", "required")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "last_name", "required"));
  EXPECT_TRUE(has_error(p, "email", "required"));
  EXPECT_EQ(p.errors.size(), 3u) << errors_text(p);
}

TEST(ParseApiLeadTest, NullOrEmptyOptionalFieldsAreAbsent) {
  json body = valid_api_body();
  body["source"] = nullptr;
  body["landing_page"] = "";
  body["tcpa_consent"] = nullptr;
  body["custom_fields"] = nullptr;
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.lead.source, "");
  EXPECT_FALSE(p.lead.tcpa_consent.has_value());
}

TEST(ParseApiLeadTest, WrongJsonTypesAreInvalidType) {
  json body = valid_api_body();
  body["first_name"] = 5;
  body["last_name"] = json::array({"Doe"});
  body["phone"] = 5552345678LL;
  body["zip_code"] = 90210;
  body["source"] = true;
  body["tcpa_consent"] = "yes";  // Surface A wants a JSON boolean
  body["custom_fields"] = json::array();
  body["ip_address"] = json::object();
  const ParsedLead p = api(body);
  for (const char* f : {"first_name", "last_name", "phone", "zip_code", "source", "tcpa_consent",
                        "custom_fields", "ip_address"}) {
    EXPECT_TRUE(has_error(p, f, "invalid_type")) << f << "\n" << errors_text(p);
  }
  EXPECT_EQ(p.errors.size(), 8u) << errors_text(p);
}

TEST(ParseApiLeadTest, UnknownTopLevelFieldsAreEachReported) {
  json body = valid_api_body();
  body["favourite_colour"] = "blue";
  body["email_address"] = "x@y.com";  // a Surface B name
  body["SELLER_CAMPAIGN_KEY"] = "abc";
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "favourite_colour", "unknown_field")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "email_address", "unknown_field"));
  EXPECT_TRUE(has_error(p, "SELLER_CAMPAIGN_KEY", "unknown_field"));
  EXPECT_EQ(p.errors.size(), 3u);
  EXPECT_EQ(p.campaign_key, "");
}

TEST(ParseApiLeadTest, UnknownVerticalListsTheAllowedOnes) {
  json body = valid_api_body();
  body["vertical"] = "timeshares";
  const ParsedLead p = api(body);
  const FieldError* e = find_error(p, "vertical");
  ASSERT_NE(e, nullptr) << errors_text(p);
  EXPECT_EQ(e->code, "not_allowed");
  for (const auto& name : validation_registry().names())
    EXPECT_NE(e->message.find(name), std::string::npos) << name;
}

TEST(ParseApiLeadTest, FieldFormatErrors) {
  json body = valid_api_body();
  body["email"] = "not-an-email";
  body["phone"] = "(555) 123-4567";
  body["zip_code"] = "9021";
  body["ip_address"] = "300.1.1.1";
  body["trustedform_cert_url"] = "cert.trustedform.com/abc";
  body["jornaya_leadid"] = "abc def";
  const ParsedLead p = api(body);
  for (const char* f :
       {"email", "phone", "zip_code", "ip_address", "trustedform_cert_url", "jornaya_leadid"}) {
    EXPECT_TRUE(has_error(p, f, "invalid_format")) << f << "\n" << errors_text(p);
  }
  EXPECT_EQ(p.errors.size(), 6u);
}

TEST(ParseApiLeadTest, UnassignedZipIsNotAllowed) {
  json body = valid_api_body();
  body["zip_code"] = "00001";
  const ParsedLead p = api(body);
  const FieldError* e = find_error(p, "zip_code");
  ASSERT_NE(e, nullptr) << errors_text(p);
  EXPECT_EQ(e->code, "not_allowed");
  EXPECT_EQ(e->message, "unassigned ZIP code");
}

TEST(ParseApiLeadTest, LengthLimitsCountCharacters) {
  json body = valid_api_body();
  body["first_name"] = std::string(100, 'a');
  std::string hundred_e_acute;
  for (int i = 0; i < 100; ++i) hundred_e_acute += "\xC3\xA9";  // 200 bytes, 100 characters
  body["last_name"] = hundred_e_acute;
  ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.lead.last_name, hundred_e_acute);

  body["first_name"] = std::string(101, 'a');
  body["last_name"] = hundred_e_acute + "\xC3\xA9";
  body["source"] = std::string(513, 's');
  body["landing_page"] = std::string(513, 'l');
  body["user_agent"] = std::string(1025, 'u');
  body["tcpa_consent_text"] = std::string(4097, 't');
  body["email"] = std::string(250, 'a') + "@b.com";
  p = api(body);
  for (const char* f : {"first_name", "last_name", "source", "landing_page", "user_agent",
                        "tcpa_consent_text", "email"}) {
    EXPECT_TRUE(has_error(p, f, "too_long")) << f << "\n" << errors_text(p);
  }
}

TEST(ParseApiLeadTest, ConfigurableLimitsApply) {
  ValidationLimits limits;
  limits.max_name = 3;
  limits.max_custom_fields = 1;
  json body = valid_api_body();
  body["first_name"] = "Jon";
  body["last_name"] = "Does";
  body["custom_fields"] = {{"a", 1}, {"b", 2}};
  const ParsedLead p = api(body.dump(), limits);
  EXPECT_FALSE(has_error(p, "first_name", "too_long"));
  EXPECT_TRUE(has_error(p, "last_name", "too_long")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields", "out_of_range"));
}

TEST(ParseApiLeadTest, ControlCharactersAreRefused) {
  json body = valid_api_body();
  body["first_name"] = std::string("Jo\0hn", 5);
  body["last_name"] =
      "Do\x01"
      "e";
  body["source"] = "tab\there";  // tabs only in user_agent and consent text
  body["landing_page"] = "del\x7f";
  body["jornaya_leadid"] = "x\xC2\x85y";  // U+0085, a C1 control
  body["user_agent"] = "line\nbreak";
  const ParsedLead p = api(body);
  for (const char* f :
       {"first_name", "last_name", "source", "landing_page", "jornaya_leadid", "user_agent"}) {
    EXPECT_TRUE(has_error(p, f, "invalid_format")) << f << "\n" << errors_text(p);
  }
}

TEST(ParseApiLeadTest, EscapedNulInJsonStringIsRefused) {
  const ParsedLead p =
      api(std::string(R"({"first_name":"a\u0000b","last_name":"B","email":"a@b.co",)") +
          R"("phone":"5552345678","zip_code":"10001","vertical":"solar"})");
  EXPECT_TRUE(has_error(p, "first_name", "invalid_format")) << errors_text(p);
}

TEST(ParseApiLeadTest, TrailingNewlineIsTrimmedNotRefused) {
  json body = valid_api_body();
  body["first_name"] = "John\r\n";
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.lead.first_name, "John");
}

TEST(ParseApiLeadTest, EveryOffendingFieldIsReportedInBodyOrder) {
  const std::string body =
      R"({"first_name":"","last_name":7,"email":"bad","phone":"123","zip_code":"x","vertical":"nope",)"
      R"("ip_address":"1.2.3","extra":1,"custom_fields":{"ok":1,"bad key":2,"flag":true}})";
  const ParsedLead p = api(body);
  const std::pair<const char*, const char*> expected[] = {
      {"first_name", "required"},
      {"last_name", "invalid_type"},
      {"email", "invalid_format"},
      {"phone", "invalid_format"},
      {"zip_code", "invalid_format"},
      {"vertical", "not_allowed"},
      {"ip_address", "invalid_format"},
      {"extra", "unknown_field"},
      {"custom_fields.bad key", "invalid_format"},
      {"custom_fields.flag", "invalid_type"},
  };
  ASSERT_EQ(p.errors.size(), std::size(expected)) << errors_text(p);
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(p.errors[i].field, expected[i].first) << i;
    EXPECT_EQ(p.errors[i].code, expected[i].second) << i;
    EXPECT_FALSE(p.errors[i].message.empty());
  }
}

TEST(ParseApiLeadTest, DuplicateKeysAreReportedOnce) {
  const ParsedLead p = api(std::string(
      R"({"first_name":"A","first_name":"B","first_name":"C","last_name":"B","email":"a@b.co","phone":"5552345678",)"
      R"("zip_code":"10001","vertical":"solar","custom_fields":{"x":1,"x":2,"x":3},"junk":1,"junk":2})"));
  EXPECT_TRUE(has_error(p, "first_name", "duplicate_field")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields.x", "duplicate_field"));
  EXPECT_TRUE(has_error(p, "junk", "unknown_field"));
  EXPECT_EQ(p.errors.size(), 3u) << errors_text(p);
  EXPECT_EQ(p.lead.first_name, "A");  // the first occurrence is the one validated
}

// ---------------------------------------------------------------------------------------------
// Surface A: custom_fields

TEST(CustomFieldsTest, FreeFormValuesAreNumbersOrStrings) {
  json body = valid_api_body();
  body["vertical"] = "legal";
  body["custom_fields"] = {
      {"ref", "  abc  "}, {"n", -3.25}, {"big", 1e300}, {"empty", "   "}, {"u.x-y_Z9", "ok"}};
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(custom_string(p.lead, "ref"), "abc");
  EXPECT_EQ(custom_number(p.lead, "n"), -3.25);
  EXPECT_EQ(custom_number(p.lead, "big"), 1e300);
  EXPECT_EQ(custom(p.lead, "empty"), nullptr);  // empty strings are not stored
  EXPECT_EQ(custom_string(p.lead, "u.x-y_Z9"), "ok");
}

TEST(CustomFieldsTest, NumbersAreKeptAsWrittenIntegersExactly) {
  const ParsedLead p = api(
      std::string(R"({"first_name":"A","last_name":"B","email":"a@b.co","phone":"5552345678",)") +
      R"("zip_code":"10001","vertical":"legal","custom_fields":{"year":2019,)" +
      R"("id":9007199254740993,"low":-9223372036854775808,"high":9223372036854775807,)" +
      R"("rate":2019.0,"part":0.1}})");
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(custom_integer(p.lead, "year"), 2019);
  EXPECT_EQ(custom_integer(p.lead, "id"), 9007199254740993);  // past 2^53, every digit
  EXPECT_EQ(custom_integer(p.lead, "low"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(custom_integer(p.lead, "high"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(custom_integer(p.lead, "rate"), std::nullopt);  // written with a fraction
  EXPECT_EQ(custom_number(p.lead, "rate"), 2019.0);
  EXPECT_EQ(custom_number(p.lead, "part"), 0.1);
}

TEST(CustomFieldsTest, AnIntegerBeyondInt64IsOutOfRange) {
  const ParsedLead p = api(
      std::string(R"({"first_name":"A","last_name":"B","email":"a@b.co","phone":"5552345678",)") +
      R"("zip_code":"10001","vertical":"legal","custom_fields":{"big":9223372036854775808}})");
  EXPECT_TRUE(has_error(p, "custom_fields.big", "out_of_range")) << errors_text(p);
}

TEST(CustomFieldsTest, ATypedIntegerIsKeptAsAnIntegerWhateverItsSpelling) {
  json body = valid_api_body();
  body["vertical"] = "auto_insurance";
  body["custom_fields"] = {{"vehicle_year", "2019"}, {"driver_age", 40.0}};
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(custom_integer(p.lead, "vehicle_year"), 2019);
  EXPECT_EQ(custom_integer(p.lead, "driver_age"), 40);
}

TEST(CustomFieldsTest, NonScalarValuesAreInvalidType) {
  const ParsedLead p = api(
      std::string(R"({"first_name":"A","last_name":"B","email":"a@b.co","phone":"5552345678",)") +
      R"("zip_code":"10001","vertical":"legal","custom_fields":{"o":{"a":1},"a":[1],"t":true,"f":false,"z":null}})");
  for (const char* f : {"custom_fields.o", "custom_fields.a", "custom_fields.t", "custom_fields.f",
                        "custom_fields.z"}) {
    EXPECT_TRUE(has_error(p, f, "invalid_type")) << f << "\n" << errors_text(p);
  }
  EXPECT_EQ(p.errors.size(), 5u);
}

TEST(CustomFieldsTest, KeysAreChecked) {
  json body = valid_api_body();
  body["custom_fields"] = {{"bad key", 1},
                           {"", 2},
                           {"k\xC3\xA9y", 3},
                           {std::string(64, 'k'), 4},
                           {std::string(65, 'q'), 5}};
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "custom_fields.bad key", "invalid_format")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields.", "invalid_format"));
  EXPECT_TRUE(has_error(p, "custom_fields.k\xC3\xA9y", "invalid_format"));
  EXPECT_TRUE(
      has_error(p, "custom_fields." + std::string(65, 'q').substr(0, 64) + "...", "too_long"));
  EXPECT_EQ(p.errors.size(), 4u) << errors_text(p);
  EXPECT_NE(custom(p.lead, std::string(64, 'k')), nullptr);
}

TEST(CustomFieldsTest, CountAndValueSizeAreBounded) {
  json body = valid_api_body();
  json fields = json::object();
  for (int i = 0; i < 50; ++i) fields["f" + std::to_string(i)] = i;
  body["custom_fields"] = fields;
  EXPECT_TRUE(api(body).errors.empty());

  fields["f50"] = 50;
  fields["long"] = std::string(1025, 'v');
  body["custom_fields"] = fields;
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "custom_fields", "out_of_range")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields.long", "too_long"));

  body["custom_fields"] = {{"v", std::string(1024, 'v')}};
  EXPECT_TRUE(api(body).errors.empty());
}

TEST(CustomFieldsTest, StringValuesMustBeCleanText) {
  json body = valid_api_body();
  body["custom_fields"] = {{"a", "x\ty"}, {"b", std::string("x\0y", 3)}};
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "custom_fields.a", "invalid_format")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields.b", "invalid_format"));
}

TEST(CustomFieldsTest, VerticalFieldsAreTyped) {
  json body = valid_api_body();  // auto_insurance
  body["custom_fields"] = {{"vehicle_year", "2015"},  {"currently_insured", "Yes"},
                           {"credit_rating", "GOOD"}, {"vehicle_make", "Toyota"},
                           {"home_owner", 0},         {"driver_age", 40.0}};
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(custom_number(p.lead, "vehicle_year"), 2015.0);
  EXPECT_EQ(custom_string(p.lead, "currently_insured"), "true");
  EXPECT_EQ(custom_string(p.lead, "credit_rating"), "good");
  EXPECT_EQ(custom_string(p.lead, "vehicle_make"), "Toyota");
  EXPECT_EQ(custom_string(p.lead, "home_owner"), "false");
  EXPECT_EQ(custom_number(p.lead, "driver_age"), 40.0);
}

TEST(CustomFieldsTest, VerticalFieldViolations) {
  json body = valid_api_body();
  body["custom_fields"] = {{"vehicle_year", 2015.5},
                           {"driver_age", 15},
                           {"vehicle_count", "two"},
                           {"currently_insured", true},
                           {"home_owner", "maybe"},
                           {"credit_rating", "great"},
                           {"vehicle_make", std::string(51, 'm')},
                           {"vehicle_model", 3},
                           {"accidents_last_3_years", "1e400"}};
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_year", "invalid_type")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields.driver_age", "out_of_range"));
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_count", "invalid_type"));
  EXPECT_TRUE(has_error(p, "custom_fields.currently_insured",
                        "invalid_type"));  // JSON bool not allowed here
  EXPECT_TRUE(has_error(p, "custom_fields.home_owner", "invalid_type"));
  EXPECT_TRUE(has_error(p, "custom_fields.credit_rating", "not_allowed"));
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_make", "too_long"));
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_model", "invalid_type"));
  EXPECT_TRUE(has_error(p, "custom_fields.accidents_last_3_years", "invalid_type"));
  EXPECT_EQ(p.errors.size(), 9u) << errors_text(p);
  const FieldError* e = find_error(p, "custom_fields.credit_rating");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->message.find("excellent, good, fair, poor"), std::string::npos) << e->message;
  e = find_error(p, "custom_fields.driver_age");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->message, "must be between 16 and 120");
}

TEST(CustomFieldsTest, EnumMatchesIntegralNumbers) {
  json body = valid_api_body();
  body["vertical"] = "life_insurance";
  body["custom_fields"] = {{"term_length", 20}, {"policy_type", "Term"}};
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(custom_string(p.lead, "term_length"), "20");
  EXPECT_EQ(custom_string(p.lead, "policy_type"), "term");
}

TEST(CustomFieldsTest, TypedWhereverVerticalAppears) {
  const ParsedLead p = api(
      std::string(R"({"custom_fields":{"vehicle_year":"old"},"first_name":"A","last_name":"B",)") +
      R"("email":"a@b.co","phone":"5552345678","zip_code":"10001","vertical":"auto_insurance"})");
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_year", "invalid_type")) << errors_text(p);
}

TEST(CustomFieldsTest, FieldsOfOtherVerticalsAreFreeForm) {
  json body = valid_api_body();
  body["vertical"] = "legal";
  body["custom_fields"] = {{"vehicle_year", "old"}};
  const ParsedLead p = api(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(custom_string(p.lead, "vehicle_year"), "old");
}

TEST(CustomFieldsTest, RequiredVerticalFieldsComeFromTheRegistry) {
  const VerticalRegistry reg = registry_with_required();
  json body = valid_api_body();
  auto parse = [&](const json& b) { return parse_lead_json(b.dump(), LeadShape::kApi, reg, ""); };

  ParsedLead p = parse(body);  // no custom_fields at all
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_year", "required")) << errors_text(p);
  EXPECT_EQ(p.errors.size(), 1u);

  body["custom_fields"] = {{"vehicle_year", " "}};
  p = parse(body);
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_year", "required")) << errors_text(p);
  EXPECT_EQ(p.errors.size(), 1u);

  body["custom_fields"] = {{"vehicle_year", 1850}};  // present but invalid: only out_of_range
  p = parse(body);
  EXPECT_TRUE(has_error(p, "custom_fields.vehicle_year", "out_of_range")) << errors_text(p);
  EXPECT_EQ(p.errors.size(), 1u);

  body["custom_fields"] = {{"vehicle_year", 2020}};
  EXPECT_TRUE(parse(body).errors.empty());
}

// ---------------------------------------------------------------------------------------------
// Hostile input (Surface A and B)

TEST(HostileInputTest, InvalidJsonIsMalformed) {
  for (const std::string body :
       {"", "   ", "{", "}", "not json", "{\"a\":}", "{\"a\" 1}", "{'a':1}", "{} x", "{\"a\":1,}",
        "{\"a\":01}", "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":-}", "{\"a\":\"\\x\"}",
        "{\"a\":\"\\ud800\"}", "{\"a\":1e400}", "{\"a\":123456789012345678901234567890}",
        "{\"a\":\"unterminated}"}) {
    const ParsedLead p = api(body);
    SCOPED_TRACE(body);
    expect_malformed(p, "invalid_json");
  }
}

TEST(HostileInputTest, NonObjectRootIsMalformed) {
  for (const std::string body : {"[]", "[1,2]", "\"str\"", "null", "true", "123"}) {
    SCOPED_TRACE(body);
    expect_malformed(api(body), "invalid_json");
    expect_malformed(campaign(body), "invalid_json");
  }
}

TEST(HostileInputTest, InvalidUtf8AndNulBytesAreMalformed) {
  expect_malformed(api(std::string("{\"first_name\":\"\xC3\x28\"}")), "invalid_json");
  expect_malformed(api(std::string("{\"first_name\":\"\xFF\"}")), "invalid_json");
  expect_malformed(api(std::string("{\"first_name\":\"\xED\xA0\x80\"}")),
                   "invalid_json");  // encoded surrogate
  expect_malformed(api(std::string("{\"a\":1}\0", 8)), "invalid_json");
  expect_malformed(api(std::string("{\0\"a\":1}", 8)), "invalid_json");
}

TEST(HostileInputTest, RawControlCharacterInsideStringNeverPasses) {
  const ParsedLead p =
      api(std::string("{\"first_name\":\"a\x01"
                      "b\"}"));
  EXPECT_FALSE(p.errors.empty());
  EXPECT_TRUE(p.malformed || has_error(p, "first_name", "invalid_format")) << errors_text(p);
}

std::string nested_arrays(int levels) {
  return std::string(static_cast<std::size_t>(levels), '[') + "1" +
         std::string(static_cast<std::size_t>(levels), ']');
}

TEST(HostileInputTest, NestingIsBoundedByMaxDepth) {
  // Root (1) + custom_fields (2) + six arrays (3..8) = depth 8: parsed, the value is refused.
  ParsedLead p = api(R"({"custom_fields":{"a":)" + nested_arrays(6) + "}}");
  EXPECT_FALSE(p.malformed) << errors_text(p);
  EXPECT_TRUE(has_error(p, "custom_fields.a", "invalid_type")) << errors_text(p);
  // Depth 9: refused whole.
  expect_malformed(api(R"({"custom_fields":{"a":)" + nested_arrays(7) + "}}"), "too_deep");
  // A smaller bound is honoured too.
  ValidationLimits limits;
  limits.max_depth = 2;
  EXPECT_FALSE(api(R"({"custom_fields":{"a":1}})", limits).malformed);
  expect_malformed(api(R"({"custom_fields":{"a":[1]}})", limits), "too_deep");
}

TEST(HostileInputTest, VeryDeepNestingDoesNotRecurse) {
  const std::string deep = "{\"a\":" + nested_arrays(200000) + "}";
  expect_malformed(api(deep), "too_deep");
  EXPECT_TRUE(api(std::string(500000, '[')).malformed);
  EXPECT_TRUE(api(std::string(500000, '{')).malformed);
  EXPECT_EQ(peek_campaign_key(deep), "");
}

TEST(HostileInputTest, ExtremelyLongStringsAreTooLong) {
  json body = valid_api_body();
  body["first_name"] = std::string(2 * 1024 * 1024, 'a');  // beyond the thread cache size
  ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "first_name", "too_long")) << errors_text(p);
  EXPECT_EQ(p.errors.size(), 1u);
  // The next, small request still works on the same thread.
  p = api(valid_api_body());
  EXPECT_TRUE(p.errors.empty()) << errors_text(p);
}

TEST(HostileInputTest, TenThousandUnknownKeysAreCappedQuickly) {
  std::string body = "{";
  for (int i = 0; i < 10000; ++i)
    body += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  body += "\"first_name\":\"A\"}";
  const auto start = std::chrono::steady_clock::now();
  const ParsedLead p = api(body);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(2));
  ASSERT_EQ(p.errors.size(), 101u);
  EXPECT_EQ(p.errors[0].field, "k0");
  EXPECT_EQ(p.errors[0].code, "unknown_field");
  EXPECT_EQ(p.errors.back().field, "body");
  EXPECT_EQ(p.errors.back().code, "too_many_errors");
}

TEST(HostileInputTest, TenThousandCustomKeysAreBounded) {
  std::string fields;
  for (int i = 0; i < 10000; ++i)
    fields += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":1";
  json base = valid_api_body();
  std::string body = base.dump();
  body.pop_back();
  body += ",\"custom_fields\":{" + fields + "}}";
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "custom_fields", "out_of_range")) << errors_text(p).substr(0, 500);
  EXPECT_LE(p.errors.size(), 101u);
}

TEST(HostileInputTest, TenThousandDuplicateKeys) {
  std::string body = "{";
  for (int i = 0; i < 10000; ++i) body += "\"dup\":1,";
  for (int i = 0; i < 10000; ++i) body += "\"email\":\"a@b.co\",";
  body += "\"custom_fields\":{";
  for (int i = 0; i < 10000; ++i) body += std::string(i ? "," : "") + "\"x\":1";
  body += "}}";
  const ParsedLead p = api(body);
  EXPECT_TRUE(has_error(p, "dup", "unknown_field")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "email", "duplicate_field"));
  EXPECT_TRUE(has_error(p, "custom_fields.x", "duplicate_field"));
  EXPECT_TRUE(has_error(p, "custom_fields", "out_of_range"));
  EXPECT_LT(p.errors.size(), 12u) << errors_text(p);
}

TEST(HostileInputTest, HostileKeysAreSanitisedInErrors) {
  const std::string long_key(5000, 'k');
  const ParsedLead p = api("{\"" + long_key + "\":1,\"a\\u0001b\":2}");
  ASSERT_GE(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].field, std::string(64, 'k') + "...");
  EXPECT_EQ(p.errors[1].field, "a?b");
}

TEST(HostileInputTest, RandomMutationsNeverThrow) {
  json body = valid_api_body();
  body["custom_fields"] = {{"vehicle_year", 2010}, {"a", "b"}, {"n", 1.5}};
  body["tcpa_consent"] = true;
  const std::string seed_api = body.dump();
  const std::string seed_campaign = valid_campaign_body().dump();
  std::mt19937 rng(12345);
  const char interesting[] = {'{',  '}',    '[',    ']',    '"', '\\', ',', ':',
                              '\0', '\x01', '\x80', '\xFF', 'e', '-',  '0'};
  for (int i = 0; i < 4000; ++i) {
    std::string s = (i % 2) ? seed_api : seed_campaign;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const std::size_t pos = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[pos] = interesting[rng() % sizeof interesting];
          break;
        case 1:
          s.erase(pos, 1 + rng() % 8);
          break;
        case 2:
          s.insert(pos, 1, interesting[rng() % sizeof interesting]);
          break;
        default:
          s.resize(pos);
          break;
      }
    }
    ParsedLead p;
    EXPECT_NO_THROW(p = parse_lead_json(s, (i % 2) ? LeadShape::kApi : LeadShape::kCampaign,
                                        validation_registry(), "solar"));
    if (p.malformed) {
      EXPECT_EQ(p.errors.size(), 1u);
    }
    EXPECT_NO_THROW((void)peek_campaign_key(s));
  }
}

// ---------------------------------------------------------------------------------------------
// peek_campaign_key

TEST(PeekCampaignKeyTest, ReadsOnlyTheTopLevelKey) {
  EXPECT_EQ(peek_campaign_key(valid_campaign_body().dump()), "ck_test_123");
  EXPECT_EQ(
      peek_campaign_key(R"({"x":{"SELLER_CAMPAIGN_KEY":"inner"},"SELLER_CAMPAIGN_KEY":" outer "})"),
      "outer");
  EXPECT_EQ(peek_campaign_key(R"({"SELLER\u005fCAMPAIGN_KEY":"escaped"})"), "escaped");
  EXPECT_EQ(peek_campaign_key(R"({"SELLER_CAMPAIGN_KEY":"first","SELLER_CAMPAIGN_KEY":"second"})"),
            "first");
}

TEST(PeekCampaignKeyTest, AbsentOrUnusableGivesEmpty) {
  for (const std::string body :
       {"", "{}", "[]", "\"SELLER_CAMPAIGN_KEY\"", R"({"SELLER_CAMPAIGN_KEY":5})",
        R"({"SELLER_CAMPAIGN_KEY":null})", R"({"x":{"SELLER_CAMPAIGN_KEY":"inner"}})",
        R"({"seller_campaign_key":"lower"})", "{\"SELLER_CAMPAIGN_KEY\":\"\xFF\"}", "{"}) {
    EXPECT_EQ(peek_campaign_key(body), "") << body;
  }
}

// ---------------------------------------------------------------------------------------------
// Surface B: POST /api/v1/lead

TEST(ParseCampaignLeadTest, ValidLeadWithTopLevelVerticalFields) {
  json body = valid_campaign_body();
  body["monthly_electric_bill"] = 150.5;
  body["home_owner"] = true;  // a JSON boolean is fine at the top level
  body["roof_shade"] = "Partial_Shade";
  body["roof_age"] = "12";
  body["tcpa_consent"] = "yes";
  body["source"] = "fb";
  const ParsedLead p = campaign(body);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.campaign_key, "ck_test_123");
  EXPECT_EQ(p.lead.surface, Surface::kCampaign);
  EXPECT_EQ(p.lead.vertical, "solar");
  EXPECT_EQ(p.lead.email, "jane@example.com");
  EXPECT_EQ(p.lead.phone, "+15552345678");
  EXPECT_EQ(p.lead.state, "NY");
  EXPECT_EQ(p.lead.source, "fb");
  ASSERT_TRUE(p.lead.tcpa_consent.has_value());
  EXPECT_TRUE(*p.lead.tcpa_consent);
  EXPECT_EQ(custom_number(p.lead, "monthly_electric_bill"), 150.5);
  EXPECT_EQ(custom_string(p.lead, "home_owner"), "true");
  EXPECT_EQ(custom_string(p.lead, "roof_shade"), "partial_shade");
  EXPECT_EQ(custom_number(p.lead, "roof_age"), 12.0);
  EXPECT_EQ(p.lead.custom_fields.size(), 4u);
}

TEST(ParseCampaignLeadTest, OneParseAsksForTheKeysVerticalOnce) {
  json body = valid_campaign_body();
  body["SELLER_CAMPAIGN_KEY"] = "  ck_test_123 ";
  body["monthly_electric_bill"] = 150.5;
  int asked = 0;
  std::string asked_for;
  const ParsedLead p =
      parse_campaign_lead_json(body.dump(), validation_registry(), [&](std::string_view key) {
        ++asked;
        asked_for = std::string(key);
        return std::optional<std::string>("solar");
      });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(asked_for, "ck_test_123");  // trimmed, as the key check sees it
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.validated_for, std::optional<std::string>("solar"));
  EXPECT_EQ(p.lead.vertical, "solar");
  EXPECT_EQ(custom_number(p.lead, "monthly_electric_bill"), 150.5);
  // The same lead as a parse told the vertical up front.
  const ParsedLead direct = campaign(body, "solar");
  EXPECT_EQ(direct.lead.email, p.lead.email);
  EXPECT_EQ(direct.lead.custom_fields.size(), p.lead.custom_fields.size());
}

TEST(ParseCampaignLeadTest, AnUnknownCampaignLeavesTheLeadUnvalidated) {
  json body = valid_campaign_body();
  body["no_such_field"] = 1;  // would be an error, once validated
  const ParsedLead p =
      parse_campaign_lead_json(body.dump(), validation_registry(),
                               [](std::string_view) { return std::optional<std::string>(); });
  EXPECT_FALSE(p.malformed);
  EXPECT_FALSE(p.validated_for.has_value());
  EXPECT_EQ(p.campaign_key, "ck_test_123");
  EXPECT_TRUE(p.errors.empty());
  // Without a campaign ("" from the resolver) the body is validated as one whose vertical is
  // not known: its standard fields are checked, other names are not reported.
  body.erase("phone_home");
  const ParsedLead none =
      parse_campaign_lead_json(body.dump(), validation_registry(),
                               [](std::string_view) { return std::optional<std::string>(""); });
  EXPECT_EQ(none.validated_for, std::optional<std::string>(""));
  ASSERT_EQ(none.errors.size(), 1u) << errors_text(none);
  EXPECT_EQ(none.errors[0].field, "phone_home");
}

TEST(ParseCampaignLeadTest, AnUnreadableBodyIsMalformedWhateverTheCampaign) {
  int asked = 0;
  const ParsedLead p = parse_campaign_lead_json("{\"SELLER_CAMPAIGN_KEY\": ", validation_registry(),
                                                [&](std::string_view) {
                                                  ++asked;
                                                  return std::optional<std::string>("solar");
                                                });
  EXPECT_TRUE(p.malformed);
  EXPECT_EQ(asked, 0);
}

TEST(ParseCampaignLeadTest, MissingFieldsUseSurfaceBNames) {
  const ParsedLead p = campaign(std::string("{}"));
  ASSERT_EQ(p.errors.size(), 6u) << errors_text(p);
  const char* expected[] = {"SELLER_CAMPAIGN_KEY", "first_name", "last_name",
                            "email_address",       "phone_home", "zip_code"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p.errors[i].field, expected[i]);
    EXPECT_EQ(p.errors[i].code, "required");
  }
}

TEST(ParseCampaignLeadTest, SurfaceANamesAndOtherFieldsAreUnknown) {
  json body = valid_campaign_body();
  body["email"] = "a@b.co";
  body["vertical"] = "solar";
  body["custom_fields"] = json::object();
  body["vehicle_year"] = 2010;  // a field of another vertical
  const ParsedLead p = campaign(body);
  for (const char* f : {"email", "vertical", "custom_fields", "vehicle_year"}) {
    EXPECT_TRUE(has_error(p, f, "unknown_field")) << f << "\n" << errors_text(p);
  }
  EXPECT_EQ(p.errors.size(), 4u);
}

TEST(ParseCampaignLeadTest, ErrorsUseSurfaceBPaths) {
  json body = valid_campaign_body();
  body["email_address"] = "bad@";
  body["phone_home"] = "123";
  body["monthly_electric_bill"] = -5;
  body["home_owner"] = "sometimes";
  body["roof_shade"] = json::array({"no_shade"});
  body["tcpa_consent"] = "perhaps";
  const ParsedLead p = campaign(body);
  EXPECT_TRUE(has_error(p, "email_address", "invalid_format")) << errors_text(p);
  EXPECT_TRUE(has_error(p, "phone_home", "invalid_format"));
  EXPECT_TRUE(has_error(p, "monthly_electric_bill", "out_of_range"));
  EXPECT_TRUE(has_error(p, "home_owner", "invalid_type"));
  EXPECT_TRUE(has_error(p, "roof_shade", "invalid_type"));
  EXPECT_TRUE(has_error(p, "tcpa_consent", "invalid_type"));
  EXPECT_EQ(p.errors.size(), 6u);
}

TEST(ParseCampaignLeadTest, CampaignKeyHandling) {
  json body = valid_campaign_body();
  body["SELLER_CAMPAIGN_KEY"] = "  ck_abc  ";
  EXPECT_EQ(campaign(body).campaign_key, "ck_abc");
  body["SELLER_CAMPAIGN_KEY"] = 42;
  EXPECT_TRUE(has_error(campaign(body), "SELLER_CAMPAIGN_KEY", "invalid_type"));
  body["SELLER_CAMPAIGN_KEY"] = "";
  EXPECT_TRUE(has_error(campaign(body), "SELLER_CAMPAIGN_KEY", "required"));
  body["SELLER_CAMPAIGN_KEY"] = nullptr;
  EXPECT_TRUE(has_error(campaign(body), "SELLER_CAMPAIGN_KEY", "required"));
}

TEST(ParseCampaignLeadTest, TcpaConsentAcceptsBooleanWords) {
  json body = valid_campaign_body();
  for (const auto& [value, expected] : std::vector<std::pair<json, bool>>{{true, true},
                                                                          {false, false},
                                                                          {"TRUE", true},
                                                                          {"no", false},
                                                                          {"on", true},
                                                                          {"0", false},
                                                                          {1, true},
                                                                          {0, false}}) {
    body["tcpa_consent"] = value;
    const ParsedLead p = campaign(body);
    ASSERT_TRUE(p.errors.empty()) << value.dump() << "\n" << errors_text(p);
    ASSERT_TRUE(p.lead.tcpa_consent.has_value());
    EXPECT_EQ(*p.lead.tcpa_consent, expected) << value.dump();
  }
  body["tcpa_consent"] = 2;
  EXPECT_TRUE(has_error(campaign(body), "tcpa_consent", "invalid_type"));
}

TEST(ParseCampaignLeadTest, UnknownCampaignVerticalIsReported) {
  const ParsedLead p = campaign(valid_campaign_body(), "timeshares");
  EXPECT_TRUE(has_error(p, "SELLER_CAMPAIGN_KEY", "not_allowed")) << errors_text(p);
}

TEST(ParseCampaignLeadTest, EmptyCampaignVerticalSkipsVerticalChecks) {
  // The handler parses a keyless body before it knows the campaign, only to list its errors.
  json body = valid_campaign_body();
  body.erase("SELLER_CAMPAIGN_KEY");
  body["email_address"] = "bad";
  body["home_owner"] = "yes";
  const ParsedLead p = campaign(body, "");
  ASSERT_EQ(p.errors.size(), 2u) << errors_text(p);
  EXPECT_TRUE(has_error(p, "email_address", "invalid_format"));
  EXPECT_TRUE(has_error(p, "SELLER_CAMPAIGN_KEY", "required"));
}

TEST(ParseCampaignLeadTest, RequiredVerticalFieldsAtTopLevel) {
  const VerticalRegistry reg = registry_with_required();
  json body = valid_campaign_body();
  ParsedLead p = parse_lead_json(body.dump(), LeadShape::kCampaign, reg, "solar");
  EXPECT_TRUE(has_error(p, "home_owner", "required")) << errors_text(p);
  EXPECT_EQ(p.errors.size(), 1u);
  body["home_owner"] = nullptr;
  p = parse_lead_json(body.dump(), LeadShape::kCampaign, reg, "solar");
  EXPECT_TRUE(has_error(p, "home_owner", "required")) << errors_text(p);
  EXPECT_EQ(p.errors.size(), 1u);
  body["home_owner"] = "yes";
  p = parse_lead_json(body.dump(), LeadShape::kCampaign, reg, "solar");
  EXPECT_TRUE(p.errors.empty()) << errors_text(p);
}

TEST(ParseCampaignLeadTest, DuplicateVerticalFieldIsReported) {
  std::string body = valid_campaign_body().dump();
  body.pop_back();
  body += R"(,"roof_age":1,"roof_age":2})";
  const ParsedLead p = campaign(body);
  EXPECT_TRUE(has_error(p, "roof_age", "duplicate_field")) << errors_text(p);
  EXPECT_EQ(custom_number(p.lead, "roof_age"), 1.0);
}

// ---------------------------------------------------------------------------------------------
// Form posts (legacy POST /{seller_campaign_key})

ParsedLead form(const Form& fields, std::string_view vertical = "solar") {
  return parse_lead_form(fields, validation_registry(), vertical);
}

TEST(ParseLeadFormTest, ValidFormConvertsTypedFields) {
  Form f = valid_form();
  f.emplace_back("monthly_electric_bill", " 212.75 ");
  f.emplace_back("home_owner", "on");
  f.emplace_back("roof_shade", "no_shade");
  f.emplace_back("roof_age", "+7");
  f.emplace_back("tcpa_consent", "1");
  f.emplace_back("ip_address", "203.0.113.9");
  const ParsedLead p = form(f);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.lead.surface, Surface::kCampaign);
  EXPECT_EQ(p.lead.vertical, "solar");
  EXPECT_EQ(p.lead.zip_code, "10001");
  EXPECT_EQ(p.lead.zip4, "1234");
  EXPECT_EQ(p.lead.state, "NY");
  EXPECT_EQ(custom_number(p.lead, "monthly_electric_bill"), 212.75);
  EXPECT_EQ(custom_string(p.lead, "home_owner"), "true");
  EXPECT_EQ(custom_number(p.lead, "roof_age"), 7.0);
  ASSERT_TRUE(p.lead.tcpa_consent.has_value());
  EXPECT_TRUE(*p.lead.tcpa_consent);
  EXPECT_EQ(p.campaign_key, "");  // the key is in the path for form posts
}

TEST(ParseLeadFormTest, CampaignKeyIsOptionalButCopied) {
  Form f = valid_form();
  f.emplace_back("SELLER_CAMPAIGN_KEY", "ck_form");
  const ParsedLead p = form(f);
  ASSERT_TRUE(p.errors.empty()) << errors_text(p);
  EXPECT_EQ(p.campaign_key, "ck_form");
}

TEST(ParseLeadFormTest, TcpaConsentWords) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, bool>>{{"true", true},
                                                                                {"false", false},
                                                                                {"1", true},
                                                                                {"0", false},
                                                                                {"Yes", true},
                                                                                {"no", false},
                                                                                {"on", true}}) {
    Form f = valid_form();
    f.emplace_back("tcpa_consent", text);
    const ParsedLead p = form(f);
    ASSERT_TRUE(p.errors.empty()) << text << errors_text(p);
    EXPECT_EQ(p.lead.tcpa_consent, expected) << text;
  }
  Form f = valid_form();
  f.emplace_back("tcpa_consent", "checked");
  EXPECT_TRUE(has_error(form(f), "tcpa_consent", "invalid_type"));
}

TEST(ParseLeadFormTest, FieldErrors) {
  Form f = {{"first_name", ""},
            {"email_address", "x"},
            {"phone_home", "911-234-5678"},
            {"zip_code", "ABCDE"},
            {"roof_age", "7.5"},
            {"monthly_electric_bill", "$100"},
            {"roof_shade", "cloudy"},
            {"mystery", "1"},
            {"last_name", "Ok"},
            {"last_name", "Again"},
            {"user_agent", "bad\xFF utf8"},
            {"bad\xFFkey", "v"}};
  const ParsedLead p = form(f);
  const std::pair<const char*, const char*> expected[] = {
      {"first_name", "required"},       {"email_address", "invalid_format"},
      {"phone_home", "invalid_format"}, {"zip_code", "invalid_format"},
      {"roof_age", "invalid_type"},     {"monthly_electric_bill", "invalid_type"},
      {"roof_shade", "not_allowed"},    {"mystery", "unknown_field"},
      {"last_name", "duplicate_field"}, {"user_agent", "invalid_format"},
      {"bad?key", "unknown_field"},
  };
  ASSERT_EQ(p.errors.size(), std::size(expected)) << errors_text(p);
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(p.errors[i].field, expected[i].first) << i;
    EXPECT_EQ(p.errors[i].code, expected[i].second) << i;
  }
}

TEST(ParseLeadFormTest, NumbersRejectNonDecimalText) {
  for (const char* bad :
       {"nan", "inf", "-infinity", "0x10", "1e999", "1,000", "12abc", "--1", ""}) {
    Form f = valid_form();
    f.emplace_back("monthly_electric_bill", bad);
    const ParsedLead p = form(f);
    if (std::string_view(bad).empty()) {
      EXPECT_TRUE(p.errors.empty()) << errors_text(p);  // empty is absent
    } else {
      EXPECT_TRUE(has_error(p, "monthly_electric_bill", "invalid_type")) << bad << "\n"
                                                                         << errors_text(p);
    }
  }
}

TEST(ParseLeadFormTest, ManyFieldsAreCapped) {
  Form f = valid_form();
  for (int i = 0; i < 10000; ++i) f.emplace_back("x" + std::to_string(i), "v");
  const ParsedLead p = form(f);
  ASSERT_EQ(p.errors.size(), 101u);
  EXPECT_EQ(p.errors.back().code, "too_many_errors");
}

TEST(ParseLeadFormTest, UnknownCampaignVertical) {
  EXPECT_TRUE(has_error(form(valid_form(), "timeshares"), "SELLER_CAMPAIGN_KEY", "not_allowed"));
}

}  // namespace
}  // namespace leadflow
