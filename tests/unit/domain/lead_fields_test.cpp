// Every copy of the lead's fields carries every member of Lead: the queue payload, each
// surface's validation, the API view and the buyer's post body (the stores: the store contract's
// StoresEveryLeadField). lead_fields.hpp fails to compile when Lead gains a member it does not
// list, so a new member cannot be forgotten by one of these copies without a test failing.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "lead_fields.hpp"
#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/validation/validation.hpp"
#include "leadflow/visibility/projections.hpp"

namespace leadflow {
namespace {

using nlohmann::json;
using testing_lead::differing_fields;
using testing_lead::lead_fields;
using testing_lead::lead_with_every_field;
using testing_lead::without_field;

const VerticalRegistry& lead_fields_registry() {
  static const VerticalRegistry r = VerticalRegistry::defaults();
  return r;
}

bool is_member(const std::string& name) {
  for (const auto& f : lead_fields())
    if (f.name == name) return true;
  return false;
}

// Members a copy leaves out on purpose must still be members (a rename would hide a gap).
void expect_members(const std::set<std::string>& names) {
  for (const auto& n : names) EXPECT_TRUE(is_member(n)) << n << " is not a member of Lead";
}

TEST(LeadFields, TheListNamesEveryMemberOnce) {
  EXPECT_EQ(lead_fields().size(), testing_lead::member_count<Lead>());
  std::set<std::string_view> names;
  for (const auto& f : lead_fields()) EXPECT_TRUE(names.insert(f.name).second) << f.name;
  // Each value differs from the default, so a copy that drops a member is seen dropping it.
  const Lead full = lead_with_every_field();
  EXPECT_EQ(differing_fields(full, Lead{}).size(), lead_fields().size());
}

TEST(LeadFields, TheQueuePayloadCarriesEveryMember) {
  const Lead full = lead_with_every_field();
  const auto decoded = decode_lead(encode_lead(full));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(differing_fields(full, *decoded), std::vector<std::string>{})
      << "members lost between encode_lead and decode_lead (lead_codec.cpp)";
}

// Which members a body fills: every member but those the intake sets after validation.
void expect_read_from_body(const ParsedLead& parsed, const std::set<std::string>& not_from_body,
                           const char* surface) {
  ASSERT_TRUE(parsed.errors.empty())
      << parsed.errors.front().field << ": " << parsed.errors.front().message;
  expect_members(not_from_body);
  for (const auto& f : lead_fields()) {
    if (not_from_body.count(std::string(f.name))) continue;
    EXPECT_FALSE(f.same(parsed.lead, Lead{}))
        << f.name << " is a member of Lead that " << surface
        << " validation does not fill: read it from the body (field_checks.cpp) or, if the "
           "intake sets it, list it here";
  }
}

TEST(LeadFields, SurfaceAValidationReadsEveryBodyMember) {
  const json body = {{"first_name", "Zoë"},
                     {"last_name", "O'Brien"},
                     {"email", "Zoe.OBrien@example.com"},
                     {"phone", "(212) 555-0123"},
                     {"zip_code", "10001-1234"},
                     {"vertical", "auto_insurance"},
                     {"source", "facebook"},
                     {"landing_page", "https://example.com/quote?x=1"},
                     {"ip_address", "203.0.113.7"},
                     {"user_agent", "Mozilla/5.0 (X11; Linux x86_64)"},
                     {"trustedform_cert_url", "https://cert.trustedform.com/abc123"},
                     {"jornaya_leadid", "0D6A1E2C-1234-5678-9ABC-DEF012345678"},
                     {"tcpa_consent", true},
                     {"tcpa_consent_text", "I agree to be contacted."},
                     {"custom_fields", {{"age", 42}}},
                     {"test", true}};
  const ParsedLead parsed =
      parse_lead_json(body.dump(), LeadShape::kApi, lead_fields_registry(), "", ValidationLimits{});
  // surface: kApi, the default, is what Surface A sets.
  expect_read_from_body(
      parsed,
      {"id", "seller_id", "campaign_id", "api_key_id", "surface", "received_at_ms", "sync_wait_ms"},
      "Surface A");
}

TEST(LeadFields, SurfaceBValidationReadsEveryBodyMember) {
  const json body = {{"SELLER_CAMPAIGN_KEY", "ck_every_field"},
                     {"first_name", "Zoë"},
                     {"last_name", "O'Brien"},
                     {"email_address", "Zoe.OBrien@example.com"},
                     {"phone_home", "2125550123"},
                     {"zip_code", "100011234"},
                     {"source", "facebook"},
                     {"landing_page", "https://example.com/quote?x=1"},
                     {"ip_address", "203.0.113.7"},
                     {"user_agent", "Mozilla/5.0 (X11; Linux x86_64)"},
                     {"trustedform_cert_url", "https://cert.trustedform.com/abc123"},
                     {"jornaya_leadid", "0D6A1E2C-1234-5678-9ABC-DEF012345678"},
                     {"tcpa_consent", "yes"},
                     {"tcpa_consent_text", "I agree to be contacted."},
                     {"test", "yes"},
                     {"utility_provider", "PG&E"}};  // a field of the campaign's vertical
  const ParsedLead parsed = parse_lead_json(body.dump(), LeadShape::kCampaign,
                                            lead_fields_registry(), "solar", ValidationLimits{});
  // vertical comes from the campaign; the key identifies the campaign, the intake sets its id.
  expect_read_from_body(
      parsed, {"id", "seller_id", "campaign_id", "api_key_id", "received_at_ms", "sync_wait_ms"},
      "Surface B");
}

// For a one-way copy: clearing a member must change what the copy produces.
template <class Render>
void expect_every_member_shown(Render render, const std::set<std::string>& left_out,
                               const char* copy) {
  expect_members(left_out);
  const Lead full = lead_with_every_field();
  const std::string with_all = render(full);
  for (const auto& f : lead_fields()) {
    const std::string name(f.name);
    if (left_out.count(name)) continue;
    EXPECT_NE(render(without_field(full, name)), with_all)
        << name << " is a member of Lead that " << copy << " does not carry";
  }
}

TEST(LeadFields, TheApiViewShowsEveryMember) {
  expect_every_member_shown(
      [](const Lead& l) {
        LeadRecord r;
        r.lead = l;
        return lead_record_to_json(r, /*with_attempts=*/false).dump();
      },
      // Internal: which key and surface took it in, and how long its request waited.
      {"api_key_id", "surface", "sync_wait_ms"}, "the API view (lead_record_to_json)");
}

TEST(LeadFields, TheOperatorsProjectionShowsEveryMember) {
  // The API's answers are the projections (leadflow/visibility/projections.hpp): the operator's
  // must carry every member, or a new field would never reach anyone.
  expect_every_member_shown(
      [](const Lead& l) {
        LeadRecord r;
        r.lead = l;
        return project_lead(Viewer{}, r, SellerLabels{"secret", {}}, LeadDetail::kFull).dump();
      },
      {"api_key_id", "surface", "sync_wait_ms"}, "the operator's projection (project_lead)");
}

TEST(LeadFields, TheBuyersPostCarriesEveryMember) {
  Buyer buyer;
  buyer.post_url = "https://buyer.example.com/post";
  expect_every_member_shown(
      [&](const Lead& l) {
        const HttpRequest r = make_post_request(buyer, l, "pg_1", 1500);
        std::string all = r.body;
        for (const auto& [name, value] : r.headers) all += "\n" + name + ": " + value;
        return all;
      },
      // Who sold it and how it came in are the seller's business, not the buyer's; a test lead is
      // never posted (leadflow/domain/test_mode.hpp).
      {"seller_id", "campaign_id", "api_key_id", "surface", "received_at_ms", "sync_wait_ms",
       "test"},
      "the buyer's post body (make_post_request)");
}

}  // namespace
}  // namespace leadflow
