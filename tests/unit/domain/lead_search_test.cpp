// The search keys (leadflow/domain/lead_search.hpp) and the search box's terms
// (parse_lead_search): what GET /v1/leads?q= matches.
#include "leadflow/domain/lead_search.hpp"

#include <gtest/gtest.h>

#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

TEST(LeadSearch, AKeyIsStablePerSecretFieldAndValue) {
  const std::string secret(64, 'a');
  const std::string key = search_key(secret, SearchField::kEmail, "jane@example.com");
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(search_key(secret, SearchField::kEmail, "jane@example.com"), key);
  EXPECT_NE(search_key(secret, SearchField::kEmail, "john@example.com"), key);
  // Another installation's secret gives other keys; the e-mail and phone fields never share one.
  EXPECT_NE(search_key(std::string(64, 'b'), SearchField::kEmail, "jane@example.com"), key);
  EXPECT_NE(search_key(secret, SearchField::kPhone, "jane@example.com"), key);
  // The key is no plain copy of the person.
  EXPECT_EQ(key.find("jane"), std::string::npos);
  EXPECT_EQ(search_key(secret, SearchField::kPhone, ""), "");
}

TEST(LeadSearch, ALeadsKeysAreThoseOfItsEmailAndPhone) {
  Lead l;
  l.email = "jane@example.com";
  l.phone = "+12125550123";
  const SearchKeys keys = search_keys_of(l, "secret");
  EXPECT_EQ(keys.email, search_key("secret", SearchField::kEmail, l.email));
  EXPECT_EQ(keys.phone, search_key("secret", SearchField::kPhone, l.phone));
  // A writer without the secret gives none: the lead is found by its id only.
  const SearchKeys none = search_keys_of(l, "");
  EXPECT_EQ(none.email, "");
  EXPECT_EQ(none.phone, "");
}

TEST(LeadSearch, NewInstallationSecretsAre64HexDigitsAndDiffer) {
  const std::string a = new_installation_secret(), b = new_installation_secret();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(LeadSearchTerms, AnIdAnEmailOrAPhoneNormalisedAsALeadsOwn) {
  using Kind = LeadSearchTerm::Kind;
  const auto term = [](std::string_view q) { return parse_lead_search(q); };
  const std::string id = "ld_01HF0000000000000000000000";
  EXPECT_EQ(term(id).kind, Kind::kId);
  EXPECT_EQ(term(id).value, id);
  EXPECT_EQ(term("  " + id + " ").value, id);
  EXPECT_EQ(term("  Jane.Doe@Example.COM ").kind, Kind::kEmail);
  EXPECT_EQ(term("  Jane.Doe@Example.COM ").value, "jane.doe@example.com");
  for (const char* phone : {"(212) 555-0123", "+1 212.555.0123", "2125550123", "12125550123"}) {
    EXPECT_EQ(term(phone).kind, Kind::kPhone) << phone;
    EXPECT_EQ(term(phone).value, "+12125550123") << phone;
  }
  for (const char* none : {"", "   ", "jane", "ld_", "ld_short", "555-0123", "+44 20 7946 0958",
                           "jane@", "sl_01HF0000000000000000000000"})
    EXPECT_EQ(term(none).kind, Kind::kNone) << none;
}

}  // namespace
}  // namespace leadflow
