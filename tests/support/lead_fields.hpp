#pragma once
// Lead's members, listed once for the tests, and a check that the list is complete: the lead's
// fields are copied by hand into the lead codec (queue payload), both stores' rows, each
// surface's validation and the buyer's post body, and a member added to Lead but missing from
// one of those copies would be dropped without an error. The tests that include this header
// (lead_fields_test.cpp, the store contract) fail when that happens.
//
// Adding a member to Lead: the static_assert below fails until the member is added to
// lead_fields(); then each of those tests says which copy still lacks it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/domain/lead.hpp"

namespace leadflow::testing_lead {

// The number of members of an aggregate: the most values it can be brace-initialised from.
struct AnyValue {
  template <class T>
  operator T() const;
};
template <class T, std::size_t... I>
constexpr bool brace_constructible(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyValue{})...}; };
}
template <class T, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (brace_constructible<T>(std::make_index_sequence<N + 1>{}))
    return member_count<T, N + 1>();
  else
    return N;
}

/// One member of Lead: its name, how to give it its value in lead_with_every_field(), how to
/// compare it between two leads, and how to copy it from one to another.
struct LeadField {
  std::string_view name;
  void (*set)(Lead&);
  bool (*same)(const Lead&, const Lead&);
  void (*copy)(Lead& to, const Lead& from);
};

#define LF_TEST_LEAD_FIELD(member, value)                                 \
  LeadField {                                                             \
#member, [](Lead& l) { l.member = value; },                             \
        [](const Lead& a, const Lead& b) { return a.member == b.member; },  \
        [](Lead& to, const Lead& from) { to.member = from.member; } \
  }

/// Every member of Lead, each with a value a valid lead may hold and none equal to the default.
inline const std::vector<LeadField>& lead_fields() {
  static const std::vector<LeadField> fields = {
      LF_TEST_LEAD_FIELD(id, "ld_01HF0000000000000000000000"),
      LF_TEST_LEAD_FIELD(seller_id, "sl_every_field"),
      LF_TEST_LEAD_FIELD(campaign_id, "cp_every_field"),
      LF_TEST_LEAD_FIELD(api_key_id, "key_every_field"),
      LF_TEST_LEAD_FIELD(surface, Surface::kCampaign),
      LF_TEST_LEAD_FIELD(first_name, "Zoë"),
      LF_TEST_LEAD_FIELD(last_name, "O'Brien"),
      LF_TEST_LEAD_FIELD(email, "zoe.obrien@example.com"),
      LF_TEST_LEAD_FIELD(phone, "+12125550123"),
      LF_TEST_LEAD_FIELD(zip_code, "10001"),
      LF_TEST_LEAD_FIELD(zip4, "1234"),
      LF_TEST_LEAD_FIELD(state, "NY"),
      LF_TEST_LEAD_FIELD(vertical, "auto_insurance"),
      LF_TEST_LEAD_FIELD(source, "facebook"),
      LF_TEST_LEAD_FIELD(landing_page, "https://example.com/quote?x=1"),
      LF_TEST_LEAD_FIELD(ip_address, "203.0.113.7"),
      LF_TEST_LEAD_FIELD(user_agent, "Mozilla/5.0 (X11; Linux x86_64)"),
      LF_TEST_LEAD_FIELD(trustedform_cert_url, "https://cert.trustedform.com/abc123"),
      LF_TEST_LEAD_FIELD(jornaya_leadid, "0D6A1E2C-1234-5678-9ABC-DEF012345678"),
      LF_TEST_LEAD_FIELD(tcpa_consent, std::optional<bool>(true)),
      LF_TEST_LEAD_FIELD(tcpa_consent_text, "I agree to be contacted."),
      LF_TEST_LEAD_FIELD(custom_fields,
                         (CustomFields{{"age", 42.0}, {"coverage", std::string("full")}})),
      LF_TEST_LEAD_FIELD(received_at_ms, 1'700'000'000'123),
      LF_TEST_LEAD_FIELD(sync_wait_ms, 3000),
      LF_TEST_LEAD_FIELD(test, true),
  };
  return fields;
}

#undef LF_TEST_LEAD_FIELD

static_assert(member_count<Lead>() == 25,
              "Lead's members changed: list every member in lead_fields() (tests/support/"
              "lead_fields.hpp), then make the tests that use it pass");

/// A lead with every member set (lead_fields()).
inline Lead lead_with_every_field() {
  Lead l;
  for (const auto& f : lead_fields()) f.set(l);
  return l;
}

/// `l` with the member `name` back at its default value.
inline Lead without_field(Lead l, std::string_view name) {
  for (const auto& f : lead_fields())
    if (f.name == name) f.copy(l, Lead{});
  return l;
}

/// The names of the members in which `a` and `b` differ.
inline std::vector<std::string> differing_fields(const Lead& a, const Lead& b) {
  std::vector<std::string> out;
  for (const auto& f : lead_fields())
    if (!f.same(a, b)) out.emplace_back(f.name);
  return out;
}

}  // namespace leadflow::testing_lead
