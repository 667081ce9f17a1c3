// Dashboard passwords (Argon2id through libsodium) and session secrets: a hash verifies its own
// password only, a hash made under other limits asks to be remade, the limits on length hold,
// and tokens are 32 random bytes in base64url.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/management/passwords.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

TEST(Passwords, AHashVerifiesItsPasswordOnly) {
  const std::string h = passwords::hash("correct horse battery");
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.rfind("$argon2id$", 0), 0u) << h;
  EXPECT_NE(h.find("m=65536,t=3"), std::string::npos) << h;  // 64 MiB, 3 passes
  EXPECT_TRUE(passwords::verify(h, "correct horse battery"));
  EXPECT_FALSE(passwords::verify(h, "correct horse batterY"));
  EXPECT_FALSE(passwords::verify(h, ""));
  EXPECT_FALSE(passwords::verify("not a hash", "correct horse battery"));
  // Salted: the same password hashes differently each time, and both verify.
  const std::string again = passwords::hash("correct horse battery");
  EXPECT_NE(again, h);
  EXPECT_TRUE(passwords::verify(again, "correct horse battery"));
  EXPECT_FALSE(passwords::needs_rehash(h));
}

TEST(Passwords, AHashMadeUnderOtherLimitsStillVerifiesAndAsksForARehash) {
  // libsodium's "interactive" limits: 2 passes. A user whose hash was made so signs in, and the
  // sign-in replaces the hash.
  const std::string old = "$argon2id$v=19$m=65536,t=2,p=1$";
  EXPECT_TRUE(passwords::needs_rehash(old + "c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2g"));
  EXPECT_TRUE(passwords::needs_rehash("garbage"));
  EXPECT_FALSE(passwords::needs_rehash(passwords::hash("a long enough password")));
}

TEST(Passwords, LengthAndCharactersAreBounded) {
  EXPECT_EQ(passwords::problem_with("twelve chars"), "");
  EXPECT_NE(passwords::problem_with("eleven char"), "");
  EXPECT_EQ(passwords::problem_with(std::string(128, 'x')), "");
  EXPECT_NE(passwords::problem_with(std::string(129, 'x')), "");
  EXPECT_NE(passwords::problem_with(std::string("twelve\nchars")), "");
  EXPECT_NE(passwords::problem_with(std::string("twelve\0chars", 12)), "");
  // A password past the limit is refused at once, without hashing it.
  const std::string h = passwords::hash(std::string(128, 'y'));
  EXPECT_TRUE(passwords::verify(h, std::string(128, 'y')));
  EXPECT_FALSE(passwords::verify(h, std::string(100'000, 'y')));
}

TEST(Passwords, TokensAre32RandomBytesInBase64url) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string t = passwords::new_token();
    EXPECT_EQ(t.size(), 43u);
    EXPECT_TRUE(passwords::is_token(t)) << t;
    EXPECT_EQ(
        t.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
        std::string::npos);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 200u);
  EXPECT_FALSE(passwords::is_token(""));
  EXPECT_FALSE(passwords::is_token(std::string(42, 'a')));
  EXPECT_FALSE(passwords::is_token(std::string(42, 'a') + "="));
  EXPECT_FALSE(passwords::is_token(std::string(42, 'a') + "+"));
}

class UserManagementTest : public ::testing::Test {
 protected:
  ManualClock clock;
  testing::FakeStore store{clock};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  Management management{store, verticals, clock, store};
};

TEST_F(UserManagementTest, CreatesAUserWithAHashedPasswordAndALowerCaseEmail) {
  const auto made = management.create_user({{"email", "  Ada@Example.COM "},
                                            {"name", "Ada"},
                                            {"password", "a long enough password"},
                                            {"account", "operator"}});
  ASSERT_TRUE(made.errors.empty());
  ASSERT_EQ(made.status, StoreStatus::kOk);
  EXPECT_EQ(made.body["email"], "ada@example.com");
  EXPECT_EQ(made.body["account"], "operator");
  EXPECT_FALSE(made.body.contains("password"));
  EXPECT_FALSE(made.body.contains("password_hash"));
  EXPECT_EQ(made.body["id"].get<std::string>().rfind("us_", 0), 0u);
  const auto stored = store.find_user_by_email("ada@example.com").value;
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(passwords::verify(stored->password_hash, "a long enough password"));

  // The same address again, in any case, is refused.
  const auto again = management.create_user({{"email", "ADA@example.com"},
                                             {"name", "Ada 2"},
                                             {"password", "a long enough password"},
                                             {"account", "operator"}});
  ASSERT_EQ(again.errors.size(), 1u);
  EXPECT_EQ(again.errors[0].field, "email");
}

TEST_F(UserManagementTest, RefusesBadFieldsByName) {
  const auto made = management.create_user({{"email", "not-an-address"},
                                            {"name", ""},
                                            {"password", "short"},
                                            {"account", "seller"},
                                            {"buyer_id", "by_x"},
                                            {"colour", "red"}});
  std::set<std::string> fields;
  for (const auto& e : made.errors) fields.insert(e.field);
  EXPECT_EQ(fields, (std::set<std::string>{"email", "name", "password", "seller_id", "buyer_id",
                                           "colour"}));
  EXPECT_TRUE(store.list_users().value().empty());
  const auto unknown_seller = management.create_user({{"email", "s@example.com"},
                                                      {"name", "S"},
                                                      {"password", "a long enough password"},
                                                      {"account", "seller"},
                                                      {"seller_id", "sl_nobody"}});
  ASSERT_EQ(unknown_seller.errors.size(), 1u);
  EXPECT_EQ(unknown_seller.errors[0].code, "not_found");
  const auto bad_account = management.create_user({{"email", "s@example.com"},
                                                   {"name", "S"},
                                                   {"password", "a long enough password"},
                                                   {"account", "root"}});
  ASSERT_EQ(bad_account.errors.size(), 1u);
  EXPECT_EQ(bad_account.errors[0].field, "account");
}

TEST_F(UserManagementTest, ANewPasswordOrDisablingEndsTheSessions) {
  const auto made = management.create_user({{"email", "b@example.com"},
                                            {"name", "B"},
                                            {"password", "a long enough password"},
                                            {"account", "operator"}});
  ASSERT_EQ(made.status, StoreStatus::kOk);
  const std::string id = made.body["id"];
  UserSession s;
  s.token_hash = "h1";
  s.user_id = id;
  s.csrf_token = "c";
  s.expires_at_ms = 1;
  ASSERT_EQ(store.insert_session(s), StoreStatus::kOk);

  const auto renamed = management.update_user(id, {{"name", "Bee"}});
  ASSERT_EQ(renamed.status, StoreStatus::kOk);
  EXPECT_EQ(renamed.body["name"], "Bee");
  EXPECT_EQ(store.find_session("h1").status, StoreStatus::kOk);

  const auto changed = management.update_user(id, {{"password", "another long password"}});
  ASSERT_EQ(changed.status, StoreStatus::kOk);
  EXPECT_EQ(store.find_session("h1").status, StoreStatus::kNotFound);
  const auto stored = store.get_user(id).value;
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(passwords::verify(stored->password_hash, "another long password"));

  s.token_hash = "h2";
  ASSERT_EQ(store.insert_session(s), StoreStatus::kOk);
  const auto disabled = management.update_user(id, {{"active", false}});
  ASSERT_EQ(disabled.status, StoreStatus::kOk);
  EXPECT_EQ(disabled.body["active"], false);
  EXPECT_EQ(store.find_session("h2").status, StoreStatus::kNotFound);

  EXPECT_EQ(management.update_user("us_nobody", {{"name", "X"}}).status, StoreStatus::kNotFound);
  EXPECT_EQ(management.update_user(id, {{"active", "no"}}).errors.size(), 1u);
  EXPECT_EQ(management.update_user(id, {{"password", "short"}}).errors.size(), 1u);
}

}  // namespace
}  // namespace leadflow
