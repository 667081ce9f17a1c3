// Two-factor sign-in over real HTTPS, on the service's own clock: a user enrols (the secret in an
// otpauth URI, confirmed by a code computed here), signs out, signs in with a code, cannot replay
// it, uses a recovery code once, reaches 429 with wrong codes, turns it off; an operator resets
// another's; and with LEADFLOW_REQUIRE_OPERATOR_2FA an operator without it can only enrol.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "leadflow/base/clock.hpp"
#include "leadflow/management/two_factor.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
namespace tf = two_factor;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

struct Browser {
  std::string cookie;
  std::string csrf;
};

class TwoFactorTest : public ::testing::Test {
 protected:
  explicit TwoFactorTest(bool required = false) : svc(options(required)) {}

  ServiceOptions options(bool required) {
    ServiceOptions o;
    o.workers = 0;
    o.clock = &clock;
    o.require_operator_2fa = required;
    o.totp_key = std::string(32, '\x5a');
    return o;
  }

  void add_user(const std::string& email, const std::string& account) {
    auto r =
        svc.post("/v1/users",
                 {{"email", email}, {"name", email}, {"password", kPassword}, {"account", account}},
                 svc.operator_key());
    ASSERT_EQ(r->status, 201) << r->body;
  }

  httplib::Result password_step(const std::string& email, const std::string& password = kPassword) {
    return svc.https()->Post("/v1/session", json{{"email", email}, {"password", password}}.dump(),
                             "application/json");
  }

  httplib::Result second_step(const json& body) {
    return svc.https()->Post("/v1/session/second-factor", body.dump(), "application/json");
  }

  static Browser browser_of(const httplib::Result& r) {
    const std::string set = r->get_header_value("Set-Cookie");
    return {set.substr(0, set.find(';')), body_of(r)["csrf_token"]};
  }

  // Signs in a user without a second factor.
  Browser signed_in(const std::string& email) {
    auto r = password_step(email);
    EXPECT_EQ(r->status, 201) << r->body;
    return browser_of(r);
  }

  httplib::Result post(const std::string& path, const json& body, const Browser& b) {
    return svc.https()->Post(path.c_str(),
                             httplib::Headers{{"Cookie", b.cookie}, {"X-CSRF-Token", b.csrf}},
                             body.dump(), "application/json");
  }
  httplib::Result get(const std::string& path, const Browser& b) {
    return svc.https()->Get(path.c_str(), httplib::Headers{{"Cookie", b.cookie}});
  }

  std::int64_t now_step() const { return tf::step_at(clock.now_ms()); }

  // Enrols the signed-in user: returns the secret (raw bytes) and the recovery codes.
  std::pair<std::string, std::vector<std::string>> enrol(const Browser& b,
                                                         const std::string& email) {
    auto r = post("/v1/session/two-factor/enrol", json::object(), b);
    EXPECT_EQ(r->status, 201) << r->body;
    EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store");
    const std::string base32 = body_of(r)["secret"];
    EXPECT_EQ(base32.size(), 32u);  // 160 bits
    EXPECT_EQ(body_of(r)["otpauth_uri"], "otpauth://totp/leadflow:" + email + "?secret=" + base32 +
                                             "&issuer=leadflow&algorithm=SHA1&digits=6&period=30");
    const std::string secret = tf::base32_decode(base32).value_or("");
    auto wrong =
        post("/v1/session/two-factor/confirm", {{"code", tf::code_at(secret, now_step() + 5)}}, b);
    EXPECT_EQ(wrong->status, 400) << wrong->body;
    auto ok =
        post("/v1/session/two-factor/confirm", {{"code", tf::code_at(secret, now_step())}}, b);
    EXPECT_EQ(ok->status, 200) << ok->body;
    std::vector<std::string> codes = body_of(ok)["recovery_codes"];
    EXPECT_EQ(codes.size(), 10u);
    return {secret, codes};
  }

  // A code of none of the steps the server accepts now.
  std::string wrong_code(const std::string& secret) const {
    for (int n = 0;; ++n) {
      std::string c = std::to_string(100000 + n);
      bool valid = false;
      for (std::int64_t d = -1; d <= 1; ++d)
        valid = valid || tf::code_at(secret, now_step() + d) == c;
      if (!valid) return c;
    }
  }

  ManualClock clock;
  ServiceFixture svc;
};

TEST_F(TwoFactorTest, EnrolSignInWithACodeOnceAndARecoveryCodeOnce) {
  add_user("two@example.com", "operator");
  Browser b = signed_in("two@example.com");
  EXPECT_EQ(body_of(get("/v1/session", b))["two_factor"],
            (json{{"enabled", false}, {"required", false}, {"recovery_codes_left", 0}}));
  auto [secret, recovery] = enrol(b, "two@example.com");
  // The store keeps the secret sealed and the recovery codes hashed.
  const auto stored = svc.app().store().get_user_totp(
      body_of(get("/v1/session", b))["user"]["id"].get<std::string>());
  ASSERT_TRUE(stored.value);
  EXPECT_TRUE(stored.value->sealed_secret.starts_with("sealed:"));
  EXPECT_EQ(stored.value->sealed_secret.find(tf::base32_encode(secret)), std::string::npos);
  EXPECT_EQ(stored.value->recovery_codes_left, 10);
  // Enrolling again while it is on is refused.
  EXPECT_EQ(post("/v1/session/two-factor/enrol", json::object(), b)->status, 409);
  ASSERT_EQ(
      svc.https()
          ->Delete("/v1/session", httplib::Headers{{"Cookie", b.cookie}, {"X-CSRF-Token", b.csrf}})
          ->status,
      200);

  // The password alone gives a challenge, no session.
  auto first = password_step("two@example.com");
  ASSERT_EQ(first->status, 200) << first->body;
  EXPECT_TRUE(first->get_header_value("Set-Cookie").empty());
  EXPECT_EQ(body_of(first)["second_factor"], "totp");
  EXPECT_EQ(body_of(first)["expires_in"], 300);
  const std::string challenge = body_of(first)["challenge"];
  // The confirmation's code is spent: the next step's code (within the drift) signs in.
  EXPECT_EQ(
      second_step({{"challenge", challenge}, {"code", tf::code_at(secret, now_step())}})->status,
      401);
  clock.advance(std::chrono::seconds(30));
  const std::string code = tf::code_at(secret, now_step());
  auto second = second_step({{"challenge", challenge}, {"code", code}});
  ASSERT_EQ(second->status, 201) << second->body;
  EXPECT_FALSE(second->get_header_value("Set-Cookie").empty());
  EXPECT_EQ(body_of(second)["two_factor"]["enabled"], true);
  EXPECT_EQ(get("/v1/session", browser_of(second))->status, 200);
  // The challenge is used, and the code cannot be replayed with a new one.
  EXPECT_EQ(second_step({{"challenge", challenge}, {"code", code}})->status, 401);
  auto again = password_step("two@example.com");
  ASSERT_EQ(again->status, 200);
  const std::string challenge2 = body_of(again)["challenge"];
  auto replay = second_step({{"challenge", challenge2}, {"code", code}});
  EXPECT_EQ(replay->status, 401) << replay->body;
  // A recovery code (typed in lower case without dashes) signs in once.
  std::string typed;
  for (char c : recovery[3])
    if (c != '-') typed.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  auto rec = second_step({{"challenge", challenge2}, {"recovery_code", typed}});
  ASSERT_EQ(rec->status, 201) << rec->body;
  EXPECT_EQ(body_of(rec)["two_factor"]["recovery_codes_left"], 9);
  auto third = password_step("two@example.com");
  auto reuse =
      second_step({{"challenge", body_of(third)["challenge"]}, {"recovery_code", recovery[3]}});
  EXPECT_EQ(reuse->status, 401) << reuse->body;
  // Malformed second steps are 400s.
  EXPECT_EQ(second_step({{"challenge", challenge2}})->status, 400);
  EXPECT_EQ(second_step({{"challenge", challenge2}, {"code", "1"}, {"recovery_code", "x"}})->status,
            400);
  EXPECT_EQ(second_step({{"challenge", 5}, {"code", "123456"}})->status, 400);

  // Turning it off takes the password and a current code.
  Browser in = browser_of(rec);
  auto bad = post("/v1/session/two-factor/disable",
                  {{"password", "not the password"}, {"code", wrong_code(secret)}}, in);
  EXPECT_EQ(bad->status, 400) << bad->body;
  clock.advance(std::chrono::seconds(30));
  auto off = post("/v1/session/two-factor/disable",
                  {{"password", kPassword}, {"code", tf::code_at(secret, now_step())}}, in);
  ASSERT_EQ(off->status, 200) << off->body;
  EXPECT_EQ(password_step("two@example.com")->status, 201);  // the password alone again
}

TEST_F(TwoFactorTest, WrongCodesReachTheSignInLimits) {
  add_user("guess@example.com", "operator");
  auto [secret, recovery] = enrol(signed_in("guess@example.com"), "guess@example.com");
  auto first = password_step("guess@example.com");
  ASSERT_EQ(first->status, 200);
  const std::string challenge = body_of(first)["challenge"];
  int refused = 0;
  int limited = 0;
  for (int i = 0; i < 8; ++i) {
    const int status =
        second_step({{"challenge", challenge}, {"code", wrong_code(secret)}})->status;
    refused += status == 401 ? 1 : 0;
    limited += status == 429 ? 1 : 0;
  }
  EXPECT_EQ(refused, 5);  // LoginLimits::kPerAccount
  EXPECT_EQ(limited, 3);
  // Past the limit even the right code waits, and so does the password.
  clock.advance(std::chrono::seconds(30));
  auto right = second_step({{"challenge", challenge}, {"code", tf::code_at(secret, now_step())}});
  EXPECT_EQ(right->status, 429);
  EXPECT_FALSE(right->get_header_value("Retry-After").empty());
  EXPECT_EQ(password_step("guess@example.com")->status, 429);
}

TEST_F(TwoFactorTest, AChallengeExpiresAndAnOperatorResetsAnothersSecondFactor) {
  add_user("lost@example.com", "operator");
  auto [secret, recovery] = enrol(signed_in("lost@example.com"), "lost@example.com");
  auto first = password_step("lost@example.com");
  const std::string challenge = body_of(first)["challenge"];
  clock.advance(std::chrono::minutes(6));
  EXPECT_EQ(
      second_step({{"challenge", challenge}, {"code", tf::code_at(secret, now_step())}})->status,
      401);

  const std::string id = body_of(svc.get("/v1/users", svc.operator_key()))["data"][0]["id"];
  auto reset =
      svc.https()->Delete(("/v1/users/" + id + "/two-factor").c_str(),
                          httplib::Headers{{"Authorization", "Bearer " + svc.operator_key()}});
  ASSERT_EQ(reset->status, 200) << reset->body;
  EXPECT_EQ(password_step("lost@example.com")->status, 201);
  auto again =
      svc.https()->Delete(("/v1/users/" + id + "/two-factor").c_str(),
                          httplib::Headers{{"Authorization", "Bearer " + svc.operator_key()}});
  EXPECT_EQ(again->status, 404);
  auto nobody =
      svc.https()->Delete("/v1/users/us_nobody/two-factor",
                          httplib::Headers{{"Authorization", "Bearer " + svc.operator_key()}});
  EXPECT_EQ(nobody->status, 404);
}

class RequiredTwoFactorTest : public TwoFactorTest {
 protected:
  RequiredTwoFactorTest() : TwoFactorTest(true) {}
};

TEST_F(RequiredTwoFactorTest, AnOperatorWithoutItCanOnlyEnrol) {
  add_user("boss@example.com", "operator");
  const std::string seller = svc.add_seller();
  auto made = svc.post("/v1/users",
                       {{"email", "shop@example.com"},
                        {"name", "Shop"},
                        {"password", kPassword},
                        {"account", "seller"},
                        {"seller_id", seller}},
                       svc.operator_key());
  ASSERT_EQ(made->status, 201) << made->body;

  Browser b = signed_in("boss@example.com");
  EXPECT_EQ(body_of(get("/v1/session", b))["two_factor"]["required"], true);
  auto refused = get("/v1/leads", b);
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(refused->body.find("enrol"), std::string::npos) << refused->body;
  EXPECT_EQ(get("/v1/users", b)->status, 403);
  EXPECT_EQ(post("/v1/session/password",
                 {{"current_password", kPassword}, {"new_password", "another long password"}}, b)
                ->status,
            403);
  // A seller is not bound by the operators' rule; an API key neither.
  Browser shop = signed_in("shop@example.com");
  EXPECT_EQ(body_of(get("/v1/session", shop))["two_factor"]["required"], false);
  EXPECT_EQ(get("/v1/leads", shop)->status, 200);
  EXPECT_EQ(svc.get("/v1/users", svc.operator_key())->status, 200);

  enrol(b, "boss@example.com");
  EXPECT_EQ(get("/v1/leads", b)->status, 200);
  EXPECT_EQ(get("/v1/users", b)->status, 200);
}

}  // namespace
}  // namespace leadflow::testing
