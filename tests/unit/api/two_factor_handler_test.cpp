// The second factor's routes without a server: requests parsed as the server would, the store as
// FakeStore (the SQLite adapter on a temporary file, with its outages), real sign-in limits on a
// manual clock, and the session lookup and the audit log as fakes. Enrolment and its
// confirmation, the sign-in's second step, turning it off and the operator's reset, with every
// status each answers.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "leadflow/api/session.hpp"
#include "leadflow/http/parser.hpp"
#include "leadflow/management/passwords.hpp"
#include "leadflow/management/two_factor.hpp"
#include "two_factor.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
namespace tf = two_factor;

constexpr std::int64_t kTwoFactorNow = 1'775'000'000'000;
const std::string kTwoFactorPassword = "correct horse battery";
const std::string kTwoFactorToken = "session-token-of-the-test";

const std::string& two_factor_password_hash() {
  static const std::string hash = passwords::hash(kTwoFactorPassword);
  return hash;
}

http::Request two_factor_request(const std::string& target, const std::string& headers,
                                 const std::string& body = "") {
  std::string raw = "POST " + target + " HTTP/1.1\r\nHost: d.example\r\n" + headers;
  if (!body.empty())
    raw +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  raw += "\r\n" + body;
  http::Request req;
  const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
  EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
  return req;
}

json two_factor_body_of(const http::Response& res) { return json::parse(res.body); }

std::vector<std::string> fields_of(const http::Response& res) {
  const json body = two_factor_body_of(res);
  std::vector<std::string> out;
  for (const auto& e : body["errors"]) out.push_back(e["field"]);
  return out;
}

class TwoFactorHandler : public ::testing::Test {
 protected:
  TwoFactorHandler() {
    EXPECT_EQ(store.migrate(), StoreStatus::kOk);
    user.id = "us_1";
    user.email = "ada@example.com";
    user.name = "Ada";
    user.password_hash = two_factor_password_hash();
    user.created_at_ms = kTwoFactorNow;
    EXPECT_EQ(store.insert_user(user), StoreStatus::kOk);
    current.status = StoreStatus::kOk;
    current.user = user;
    current.session = session::make(user.id, kTwoFactorToken, kTwoFactorNow);
  }

  std::string own() const {
    return "Cookie: " + std::string(session::kCookieName) + "=" + kTwoFactorToken +
           "\r\nX-CSRF-Token: " + current.session.csrf_token + "\r\n";
  }
  using Answer = void (*)(const TwoFactorPorts&, const http::Request&, http::Response&);
  http::Response call(Answer answer, const std::string& target, const json& body,
                      const std::string& headers) {
    http::Response res;
    answer(ports, two_factor_request(target, headers, body.is_null() ? "" : body.dump()), res);
    return res;
  }
  http::Response enrol() {
    return call(answer_two_factor_enrol, "/v1/session/two-factor/enrol", nullptr, own());
  }
  http::Response confirm(const std::string& code) {
    return call(answer_two_factor_confirm, "/v1/session/two-factor/confirm", {{"code", code}},
                own());
  }
  http::Response second_step(const json& body) {
    return call(answer_second_factor, "/v1/session/second-factor", body, "");
  }
  http::Response disable(const json& body) {
    return call(answer_two_factor_disable, "/v1/session/two-factor/disable", body, own());
  }
  http::Response reset(const std::string& id) {
    ApiKey key;
    key.id = "key_operator";
    key.scopes = ~0u;
    http::Response res;
    answer_two_factor_reset(ports, key, id, res);
    return res;
  }

  // The code of the enrolled secret at the clock's current step.
  std::string code_now() const { return tf::code_at(secret, tf::step_at(clock.now_ms())); }
  // Enrols and confirms: the second factor on, its recovery codes kept.
  void turn_on() {
    const http::Response begun = enrol();
    ASSERT_EQ(begun.status, 201) << begun.body;
    secret = *tf::base32_decode(two_factor_body_of(begun)["secret"].get<std::string>());
    const http::Response confirmed = confirm(code_now());
    ASSERT_EQ(confirmed.status, 200) << confirmed.body;
    recovery_codes =
        two_factor_body_of(confirmed)["recovery_codes"].get<std::vector<std::string>>();
    clock.advance(std::chrono::milliseconds(tf::kPeriodMs));  // each code is accepted once
  }
  // The password step's challenge, as begin_second_factor answers it.
  std::string challenge() {
    http::Response res;
    EXPECT_TRUE(begin_second_factor(store, clock, res, user, ""));
    EXPECT_EQ(res.status, 200) << res.body;
    return two_factor_body_of(res)["challenge"];
  }
  std::vector<std::string> audited(AuditEvent event) const {
    std::vector<std::string> kinds;
    for (const auto& [e, kind] : audits)
      if (e == event) kinds.push_back(kind);
    return kinds;
  }

  ManualClock clock{SystemTime{std::chrono::milliseconds{kTwoFactorNow}}};
  FakeStore store{clock};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  Management management{store, verticals, clock, store};
  SignInLimits logins{clock};
  User user;
  SignedIn current;
  std::string secret;
  std::vector<std::string> recovery_codes;
  std::vector<std::pair<AuditEvent, std::string>> audits;
  std::vector<std::string> audit_actors;
  const std::string totp_key = std::string(32, 'k');
  TwoFactorPorts ports{{store, store, logins, management, clock, "203.0.113.7",
                        [this](const AuditRecord& r) {
                          audits.emplace_back(r.event, r.kind);
                          audit_actors.emplace_back(r.actor_key_id);
                        },
                        [this](std::string_view token) {
                          if (token != kTwoFactorToken)
                            return SignedIn{StoreStatus::kNotFound, {}, {}, false};
                          return current;
                        },
                        [](http::Response&, const User&, const std::string&) { return false; },
                        [this](const User& u) { return two_factor_state(store, false, u); }},
                       totp_key};
};

TEST_F(TwoFactorHandler, EnrolmentAndItsFirstCodeTurnItOnWithRecoveryCodes) {
  const http::Response begun = enrol();
  ASSERT_EQ(begun.status, 201) << begun.body;
  EXPECT_EQ(begun.header("Cache-Control"), "no-store");
  EXPECT_EQ(two_factor_body_of(begun)["otpauth_uri"].get<std::string>().rfind("otpauth://totp/", 0),
            0u);
  secret = *tf::base32_decode(two_factor_body_of(begun)["secret"].get<std::string>());
  const http::Response confirmed = confirm(code_now());
  ASSERT_EQ(confirmed.status, 200) << confirmed.body;
  EXPECT_EQ(two_factor_body_of(confirmed)["recovery_codes"].size(),
            std::size_t{tf::kRecoveryCodes});
  EXPECT_EQ(two_factor_body_of(confirmed)["two_factor"]["enabled"], true);
  EXPECT_EQ(audited(AuditEvent::kTwoFactorEnabled), std::vector<std::string>{"self"});
  // On already: neither a new enrolment nor a second confirmation.
  EXPECT_EQ(enrol().status, 409);
  EXPECT_EQ(confirm(code_now()).status, 409);
}

TEST_F(TwoFactorHandler, AConfirmationIsRefusedByWhatIsWrongWithIt) {
  EXPECT_EQ(confirm("123456").status, 409);  // no enrolment waits
  ASSERT_EQ(enrol().status, 201);
  const http::Response wrong = confirm("000000");
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(fields_of(wrong), std::vector<std::string>{"code"});
  const http::Response odd = call(answer_two_factor_confirm, "/v1/session/two-factor/confirm",
                                  {{"code", 123456}, {"colour", "red"}}, own());
  EXPECT_EQ(odd.status, 400);
  EXPECT_EQ(fields_of(odd), (std::vector<std::string>{"code", "colour"}));
}

TEST_F(TwoFactorHandler, OnlyTheSignedInUserWithItsCsrfTokenTouchesItsOwnSecondFactor) {
  const http::Response by_key =
      call(answer_two_factor_enrol, "/v1/session/two-factor/enrol", nullptr,
           "Authorization: Bearer lf_live_something\r\n" + own());
  EXPECT_EQ(by_key.status, 403);
  const http::Response no_session =
      call(answer_two_factor_enrol, "/v1/session/two-factor/enrol", nullptr, "");
  EXPECT_EQ(no_session.status, 401);
  const http::Response no_csrf =
      call(answer_two_factor_enrol, "/v1/session/two-factor/enrol", nullptr,
           "Cookie: " + std::string(session::kCookieName) + "=" + kTwoFactorToken + "\r\n");
  EXPECT_EQ(no_csrf.status, 403);
  EXPECT_FALSE(store.get_user_totp(user.id).value.has_value());
}

TEST_F(TwoFactorHandler, TheSecondStepOpensASessionOncePerChallenge) {
  turn_on();
  const std::string token = challenge();
  const http::Response res = second_step({{"challenge", token}, {"code", code_now()}});
  ASSERT_EQ(res.status, 201) << res.body;
  EXPECT_NE(res.header("Set-Cookie").find(session::kCookieName), std::string_view::npos);
  EXPECT_EQ(audited(AuditEvent::kSignedIn), std::vector<std::string>{"totp"});
  clock.advance(std::chrono::milliseconds(tf::kPeriodMs));
  EXPECT_EQ(second_step({{"challenge", token}, {"code", code_now()}}).status, 401);
  // A recovery code serves once, in place of a code.
  const json by_recovery = {{"challenge", challenge()}, {"recovery_code", recovery_codes[0]}};
  EXPECT_EQ(second_step(by_recovery).status, 201);
  const json again = {{"challenge", challenge()}, {"recovery_code", recovery_codes[0]}};
  EXPECT_EQ(second_step(again).status, 401);
  EXPECT_EQ(audited(AuditEvent::kAuthFailed), std::vector<std::string>{"wrong_code"});
}

TEST_F(TwoFactorHandler, TheSecondStepIsRefusedByWhatIsWrongWithIt) {
  turn_on();
  const http::Response both =
      second_step({{"challenge", challenge()}, {"code", "1"}, {"recovery_code", "2"}});
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(fields_of(both), std::vector<std::string>{"code"});
  EXPECT_EQ(fields_of(second_step({{"code", code_now()}})), std::vector<std::string>{"challenge"});
  EXPECT_EQ(second_step({{"challenge", "made-up"}, {"code", code_now()}}).status, 401);
  const std::string token = challenge();
  const http::Response wrong = second_step({{"challenge", token}, {"code", "000000"}});
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(two_factor_body_of(wrong)["detail"], "wrong or already used code");
  clock.advance(std::chrono::milliseconds(tf::kChallengeMs));
  EXPECT_EQ(second_step({{"challenge", token}, {"code", code_now()}}).status, 401);  // expired
}

TEST_F(TwoFactorHandler, WrongCodesCountAgainstTheSignInLimits) {
  turn_on();
  const std::string token = challenge();
  for (int i = 0; i < SignInLimits::kPerAccount; ++i)
    EXPECT_EQ(second_step({{"challenge", token}, {"code", "000000"}}).status, 401);
  const http::Response res = second_step({{"challenge", token}, {"code", code_now()}});
  EXPECT_EQ(res.status, 429);
  EXPECT_FALSE(res.header("Retry-After").empty());
}

TEST_F(TwoFactorHandler, AStoreThatCannotAnswerIs503) {
  turn_on();
  const std::string token = challenge();
  store.unavailable_for(std::chrono::seconds(60));
  EXPECT_EQ(second_step({{"challenge", token}, {"code", code_now()}}).status, 503);
  EXPECT_EQ(enrol().status, 503);
  EXPECT_EQ(disable({{"password", kTwoFactorPassword}, {"code", code_now()}}).status, 503);
  EXPECT_EQ(reset(user.id).status, 503);
  clock.advance(std::chrono::seconds(61));
  EXPECT_EQ(second_step({{"challenge", challenge()}, {"code", code_now()}}).status, 201);
}

TEST_F(TwoFactorHandler, ASecretThisInstallationsKeyCannotOpenIs503) {
  turn_on();
  const std::string token = challenge();
  const std::string other_key(32, 'o');
  const TwoFactorPorts other{ports, other_key};
  http::Response res;
  answer_second_factor(other,
                       two_factor_request("/v1/session/second-factor", "",
                                          json{{"challenge", token}, {"code", code_now()}}.dump()),
                       res);
  EXPECT_EQ(res.status, 503);
}

TEST_F(TwoFactorHandler, TurningItOffTakesThePasswordAndACode) {
  EXPECT_EQ(disable({{"password", kTwoFactorPassword}, {"code", "123456"}}).status, 409);  // not on
  turn_on();
  const http::Response wrong_password = disable({{"password", "nope"}, {"code", code_now()}});
  EXPECT_EQ(wrong_password.status, 400);
  EXPECT_EQ(fields_of(wrong_password), std::vector<std::string>{"password"});
  const http::Response wrong_code = disable({{"password", kTwoFactorPassword}, {"code", "000000"}});
  EXPECT_EQ(fields_of(wrong_code), std::vector<std::string>{"code"});
  EXPECT_EQ(audited(AuditEvent::kAuthFailed),
            (std::vector<std::string>{"wrong_password", "wrong_code"}));
  EXPECT_EQ(fields_of(disable({{"code", code_now()}})), std::vector<std::string>{"password"});
  const http::Response off = disable({{"password", kTwoFactorPassword}, {"code", code_now()}});
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(two_factor_body_of(off)["two_factor"]["enabled"], false);
  EXPECT_EQ(audited(AuditEvent::kTwoFactorDisabled), std::vector<std::string>{"self"});
}

TEST_F(TwoFactorHandler, TheOperatorResetsAnotherUsersSecondFactor) {
  EXPECT_EQ(reset("us_nobody").status, 404);
  EXPECT_EQ(two_factor_body_of(reset(user.id))["detail"], "the user has no second factor");
  turn_on();
  const http::Response res = reset(user.id);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_FALSE(store.get_user_totp(user.id).value.has_value());
  EXPECT_EQ(audited(AuditEvent::kTwoFactorDisabled), std::vector<std::string>{"operator_reset"});
  EXPECT_EQ(audit_actors.back(), "key_operator");
}

}  // namespace
}  // namespace leadflow::testing
