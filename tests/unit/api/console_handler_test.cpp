// The dashboard's sign-in, session, password change and user routes without a server: requests
// parsed as the server would, the store as FakeStore (the SQLite adapter on a temporary file,
// with its outages), real sign-in limits and management on a manual clock, and the session
// lookup, the second factor and the audit log as fakes. Every status each handler answers.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "console.hpp"
#include "fake_store.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/session.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/http/parser.hpp"
#include "leadflow/management/passwords.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kConsoleNow = 1'775'000'000'000;
const std::string kConsolePassword = "correct horse battery";
const std::string kConsoleToken = "session-token-of-the-test";

// One Argon2id hash for every test: making one takes a noticeable part of a second.
const std::string& console_password_hash() {
  static const std::string hash = passwords::hash(kConsolePassword);
  return hash;
}

http::Request parse_console_request(const std::string& raw) {
  http::Request req;
  const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
  EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
  return req;
}

// A request with a JSON body (or none), and the headers given.
http::Request console_request(const std::string& method, const std::string& target,
                              const std::string& headers, const std::string& body = "") {
  std::string raw = method + " " + target + " HTTP/1.1\r\nHost: d.example\r\n" + headers;
  if (!body.empty())
    raw +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  return parse_console_request(raw + "\r\n" + body);
}

json console_body_of(const http::Response& res) { return json::parse(res.body); }

ApiKey console_key_of(std::string seller_id) {
  ApiKey k;
  k.id = "key_1";
  k.seller_id = std::move(seller_id);
  k.scopes = ~0u;
  return k;
}

class ConsoleHandler : public ::testing::Test {
 protected:
  ConsoleHandler() {
    EXPECT_EQ(store.migrate(), StoreStatus::kOk);
    user.id = "us_1";
    user.email = "ada@example.com";
    user.name = "Ada";
    user.password_hash = console_password_hash();
    user.created_at_ms = kConsoleNow;
    EXPECT_EQ(store.insert_user(user), StoreStatus::kOk);
    User off = user;
    off.id = "us_2";
    off.email = "off@example.com";
    off.active = false;
    EXPECT_EQ(store.insert_user(off), StoreStatus::kOk);
  }

  // The session of `user`, as find_signed_in would find it for kConsoleToken.
  void sign_in_as(const User& u) {
    current.status = StoreStatus::kOk;
    current.user = u;
    current.session = session::make(u.id, kConsoleToken, kConsoleNow);
    ASSERT_EQ(store.insert_session(current.session), StoreStatus::kOk);
  }
  std::string cookie() const {
    return "Cookie: " + std::string(session::kCookieName) + "=" + kConsoleToken + "\r\n";
  }
  std::string csrf() const { return "X-CSRF-Token: " + current.session.csrf_token + "\r\n"; }

  http::Response sign_in(const json& body) {
    http::Response res;
    answer_sign_in(ports, console_request("POST", "/v1/session", "", body.dump()), res);
    return res;
  }
  http::Response change(const json& body, const std::string& headers) {
    http::Response res;
    answer_password_change(
        ports, console_request("POST", "/v1/session/password", headers, body.dump()), res);
    return res;
  }

  std::vector<std::string> audited(AuditEvent event) const {
    std::vector<std::string> kinds;
    for (const auto& [e, kind] : audits)
      if (e == event) kinds.push_back(kind);
    return kinds;
  }

  ManualClock clock{SystemTime{std::chrono::milliseconds{kConsoleNow}}};
  FakeStore store{clock};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  Management management{store, verticals, clock, store};
  SignInLimits logins{clock};
  User user;
  SignedIn current;  // what the session lookup finds: nothing until sign_in_as
  bool second_factor_on = false;
  std::vector<std::pair<AuditEvent, std::string>> audits;
  SignInPorts ports{store,
                    store,
                    logins,
                    management,
                    clock,
                    "203.0.113.7",
                    [this](const AuditRecord& r) { audits.emplace_back(r.event, r.kind); },
                    [this](std::string_view token) {
                      if (current.status == StoreStatus::kOk && token != kConsoleToken)
                        return SignedIn{StoreStatus::kNotFound, {}, {}, false};
                      return current;
                    },
                    [this](http::Response& res, const User&, const std::string&) {
                      if (second_factor_on) http::send_json(res, 200, {{"second_factor", "totp"}});
                      return second_factor_on;
                    },
                    [](const User&) {
                      return json{{"enabled", false}, {"required", false}};
                    }};
  UserPorts users{store, management};
};

TEST_F(ConsoleHandler, TheRightPasswordOpensASession) {
  const auto res = sign_in({{"email", "ADA@example.com"}, {"password", kConsolePassword}});
  ASSERT_EQ(res.status, 201) << res.body;
  EXPECT_NE(res.header("Set-Cookie").find("__Host-leadflow_session="), std::string_view::npos);
  EXPECT_EQ(res.header("Cache-Control"), "no-store");
  const json b = console_body_of(res);
  EXPECT_EQ(b["user"]["id"], "us_1");
  EXPECT_FALSE(b["csrf_token"].get<std::string>().empty());
  EXPECT_EQ(b["two_factor"]["enabled"], false);
  EXPECT_EQ(audited(AuditEvent::kSignedIn), std::vector<std::string>{"password"});
  EXPECT_GT(store.get_user("us_1").value->last_login_at_ms, 0);
}

TEST_F(ConsoleHandler, AWrongPasswordAnUnknownEmailAndAnInactiveUserGetOneAnswer) {
  const auto wrong = sign_in({{"email", "ada@example.com"}, {"password", "not the password"}});
  const auto unknown = sign_in({{"email", "nobody@example.com"}, {"password", kConsolePassword}});
  const auto inactive = sign_in({{"email", "off@example.com"}, {"password", kConsolePassword}});
  for (const auto* res : {&wrong, &unknown, &inactive}) {
    EXPECT_EQ(res->status, 401);
    EXPECT_EQ(console_body_of(*res)["detail"], "wrong e-mail or password");
    EXPECT_FALSE(res->has_header("Set-Cookie"));
  }
  EXPECT_EQ(audited(AuditEvent::kAuthFailed),
            (std::vector<std::string>{"wrong_password", "unknown_user", "inactive_user"}));
}

TEST_F(ConsoleHandler, ABadSignInBodyNamesItsFields) {
  const auto res = sign_in({{"email", 7}, {"remember", true}});
  ASSERT_EQ(res.status, 400);
  const json errors = console_body_of(res)["errors"];
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0]["field"], "email");
  EXPECT_EQ(errors[0]["code"], "invalid_type");
  EXPECT_EQ(errors[1]["code"], "required");
  EXPECT_EQ(errors[2]["code"], "unknown_field");
  http::Response text;
  answer_sign_in(
      ports,
      parse_console_request("POST /v1/session HTTP/1.1\r\nHost: d\r\nContent-Type: text/plain\r\n"
                            "Content-Length: 1\r\n\r\nx"),
      text);
  EXPECT_EQ(text.status, 415);
}

TEST_F(ConsoleHandler, PastTheAccountsLimitIs429WithoutCheckingThePassword) {
  for (int i = 0; i < SignInLimits::kPerAccount; ++i)
    EXPECT_EQ(
        sign_in({{"email", "ada@example.com"}, {"password", "wrong " + std::to_string(i)}}).status,
        401);
  const auto res = sign_in({{"email", "ada@example.com"}, {"password", kConsolePassword}});
  EXPECT_EQ(res.status, 429);
  EXPECT_FALSE(res.header("Retry-After").empty());
  EXPECT_EQ(console_body_of(res)["detail"], "too many failed sign-ins; retry later");
  EXPECT_EQ(audited(AuditEvent::kRateLimited), std::vector<std::string>{"login_per_account"});
}

TEST_F(ConsoleHandler, AStoreThatCannotFindTheUserIs503AndCostsNoAttempt) {
  store.unavailable_for(std::chrono::seconds(60));
  for (int i = 0; i < SignInLimits::kPerAccount + 1; ++i)
    EXPECT_EQ(sign_in({{"email", "ada@example.com"}, {"password", kConsolePassword}}).status, 503);
  clock.advance(std::chrono::seconds(61));
  EXPECT_EQ(sign_in({{"email", "ada@example.com"}, {"password", kConsolePassword}}).status, 201);
}

TEST_F(ConsoleHandler, AUserWithASecondFactorGetsItsChallengeNotASession) {
  second_factor_on = true;
  const auto res = sign_in({{"email", "ada@example.com"}, {"password", kConsolePassword}});
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(console_body_of(res)["second_factor"], "totp");
  EXPECT_FALSE(res.has_header("Set-Cookie"));
  EXPECT_TRUE(audited(AuditEvent::kSignedIn).empty());
}

TEST_F(ConsoleHandler, TheSessionIsReadWithItsCsrfToken) {
  http::Response none;
  answer_session(ports, console_request("GET", "/v1/session", ""), none);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(console_body_of(none)["detail"], "not signed in, or the session has ended");

  sign_in_as(user);
  http::Response res;
  answer_session(ports, console_request("GET", "/v1/session", cookie()), res);
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(console_body_of(res)["csrf_token"], current.session.csrf_token);
  EXPECT_EQ(console_body_of(res)["user"]["email"], "ada@example.com");

  current.status = StoreStatus::kUnavailable;
  http::Response down;
  answer_session(ports, console_request("GET", "/v1/session", cookie()), down);
  EXPECT_EQ(down.status, 503);
}

TEST_F(ConsoleHandler, LogoutNeedsTheCsrfTokenAndEndsTheSession) {
  sign_in_as(user);
  http::Response refused;
  answer_sign_out(ports, console_request("DELETE", "/v1/session", cookie()), refused);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(console_body_of(refused)["detail"], "missing or wrong X-CSRF-Token for this session");

  http::Response res;
  answer_sign_out(ports, console_request("DELETE", "/v1/session", cookie() + csrf()), res);
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.header("Set-Cookie").find("Max-Age=0"), std::string_view::npos);
  EXPECT_EQ(audited(AuditEvent::kSignedOut), std::vector<std::string>{"logout"});
  EXPECT_FALSE(store.find_session(current.session.token_hash).value);
}

TEST_F(ConsoleHandler, OnlyASignedInUserWithItsCsrfTokenChangesItsPassword) {
  const json body = {{"current_password", kConsolePassword},
                     {"new_password", "a brand new password"}};
  const auto by_key = change(body, "Authorization: Bearer lfk_x\r\n");
  EXPECT_EQ(by_key.status, 403);
  EXPECT_NE(console_body_of(by_key)["detail"].get<std::string>().find("an API key has none"),
            std::string::npos);
  EXPECT_EQ(change(body, "").status, 401);
  sign_in_as(user);
  EXPECT_EQ(change(body, cookie()).status, 403);
  current.enrol_only = true;
  const auto enrol = change(body, cookie() + csrf());
  EXPECT_EQ(enrol.status, 403);
  EXPECT_EQ(console_body_of(enrol)["detail"], std::string(kEnrolFirst));
  EXPECT_TRUE(audited(AuditEvent::kPasswordChanged).empty());
}

TEST_F(ConsoleHandler, APasswordChangeChecksItsFieldsAndTheCurrentPassword) {
  sign_in_as(user);
  const auto fields =
      change({{"current_password", kConsolePassword}, {"extra", 1}}, cookie() + csrf());
  ASSERT_EQ(fields.status, 400);
  EXPECT_EQ(console_body_of(fields)["errors"][0]["field"], "new_password");
  EXPECT_EQ(console_body_of(fields)["errors"][1]["field"], "extra");

  const auto wrong = change({{"current_password", "not it at all"}, {"new_password", "whatever"}},
                            cookie() + csrf());
  ASSERT_EQ(wrong.status, 400);
  EXPECT_EQ(console_body_of(wrong)["errors"][0],
            (json{{"field", "current_password"},
                  {"code", "wrong"},
                  {"message", "is not the user's current password"}}));
  EXPECT_EQ(audited(AuditEvent::kAuthFailed), std::vector<std::string>{"wrong_password"});

  const auto short_one = change({{"current_password", kConsolePassword}, {"new_password", "short"}},
                                cookie() + csrf());
  ASSERT_EQ(short_one.status, 400);
  EXPECT_EQ(console_body_of(short_one)["errors"][0]["field"], "new_password");
}

TEST_F(ConsoleHandler, ARightPasswordChangeStoresTheNewPassword) {
  sign_in_as(user);
  const auto res =
      change({{"current_password", kConsolePassword}, {"new_password", "a brand new one!"}},
             cookie() + csrf());
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.header("Cache-Control"), "no-store");
  EXPECT_EQ(audited(AuditEvent::kPasswordChanged), std::vector<std::string>{"self"});
  EXPECT_TRUE(passwords::verify(store.get_user("us_1").value->password_hash, "a brand new one!"));
  // This session stays.
  EXPECT_TRUE(store.find_session(current.session.token_hash).value);
}

TEST_F(ConsoleHandler, AUserSetsItsOwnTimeZoneCheckedAgainstTheZoneDatabase) {
  const auto put = [&](const json& body, const std::string& headers) {
    http::Response res;
    answer_time_zone_change(
        ports, console_request("PUT", "/v1/session/time-zone", headers, body.dump()), res);
    return res;
  };
  const json paris = {{"time_zone", "Europe/Paris"}};
  EXPECT_EQ(put(paris, "Authorization: Bearer lfk_x\r\n").status, 403);
  EXPECT_EQ(put(paris, "").status, 401);
  sign_in_as(user);
  EXPECT_EQ(put(paris, cookie()).status, 403);  // no CSRF token
  for (const json& bad : {json{{"time_zone", "Europe/Atlantis"}}, json{{"time_zone", 3}},
                          json{{"time_zone", "../../etc/passwd"}}, json::object()}) {
    const auto res = put(bad, cookie() + csrf());
    ASSERT_EQ(res.status, 400) << bad;
    EXPECT_EQ(console_body_of(res)["errors"][0]["field"], "time_zone") << bad;
  }
  EXPECT_EQ(store.get_user("us_1").value->time_zone, "UTC");
  EXPECT_TRUE(audited(AuditEvent::kTimeZoneChanged).empty());

  const auto res = put(paris, cookie() + csrf());
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(console_body_of(res)["time_zone"], "Europe/Paris");
  EXPECT_EQ(audited(AuditEvent::kTimeZoneChanged), std::vector<std::string>{"self"});
  const User got = *store.get_user("us_1").value;
  EXPECT_EQ(got.time_zone, "Europe/Paris");
  EXPECT_EQ(got.version, user.version);  // a preference, not an edit of the record
  // The session reads it back.
  current.user = got;
  http::Response read;
  answer_session(ports, console_request("GET", "/v1/session", cookie()), read);
  EXPECT_EQ(console_body_of(read)["user"]["time_zone"], "Europe/Paris");
}

TEST_F(ConsoleHandler, PastTheLimitsAPasswordChangeIs429) {
  sign_in_as(user);
  for (int i = 0; i < SignInLimits::kPerAccount; ++i)
    EXPECT_EQ(change({{"current_password", "wrong " + std::to_string(i)}, {"new_password", "x"}},
                     cookie() + csrf())
                  .status,
              400);
  const auto res =
      change({{"current_password", kConsolePassword}, {"new_password", "a brand new one!"}},
             cookie() + csrf());
  EXPECT_EQ(res.status, 429);
  EXPECT_FALSE(res.header("Retry-After").empty());
}

TEST_F(ConsoleHandler, OnlyTheOperatorManagesUsers) {
  const ApiKey seller = console_key_of("sl_1");
  http::Response list, one, made, changed;
  answer_users(users, seller, list);
  answer_user(users, seller, "us_1", one);
  answer_create_user(users, seller, console_request("POST", "/v1/users", "", "{}"), made);
  answer_update_user(users, seller, "us_1", console_request("PUT", "/v1/users/us_1", "", "{}"),
                     changed);
  for (const auto* res : {&list, &one, &made, &changed}) {
    EXPECT_EQ(res->status, 403);
    EXPECT_EQ(console_body_of(*res)["detail"], "this API key lacks permission for the operation");
  }
}

TEST_F(ConsoleHandler, TheOperatorListsReadsMakesAndChangesUsers) {
  const ApiKey op = console_key_of("");
  http::Response list;
  answer_users(users, op, list);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(console_body_of(list)["data"].size(), 2u);

  http::Response one;
  answer_user(users, op, "us_1", one);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(one.header("ETag"), "\"v1\"");
  EXPECT_FALSE(console_body_of(one)["data"].contains("password_hash"));
  http::Response missing;
  answer_user(users, op, "us_none", missing);
  EXPECT_EQ(missing.status, 404);

  http::Response bad;
  answer_create_user(users, op,
                     console_request("POST", "/v1/users", "", json{{"email", "x"}}.dump()), bad);
  ASSERT_EQ(bad.status, 400);
  EXPECT_EQ(console_body_of(bad)["detail"], "the user is invalid");

  http::Response stale;
  answer_update_user(users, op, "us_1",
                     console_request("PUT", "/v1/users/us_1", "If-Match: \"v9\"\r\n",
                                     json{{"name", "Ada L."}}.dump()),
                     stale);
  EXPECT_EQ(stale.status, 412);
  http::Response renamed;
  answer_update_user(users, op, "us_1",
                     console_request("PUT", "/v1/users/us_1", "If-Match: \"v1\"\r\n",
                                     json{{"name", "Ada L."}}.dump()),
                     renamed);
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(renamed.header("ETag"), "\"v2\"");
  EXPECT_EQ(console_body_of(renamed)["data"]["name"], "Ada L.");
}

TEST_F(ConsoleHandler, UsersAre503WhileTheStoreIsDown) {
  const ApiKey op = console_key_of("");
  store.unavailable_for(std::chrono::seconds(60));
  http::Response one;
  answer_user(users, op, "us_1", one);
  EXPECT_EQ(one.status, 503);
  http::Response changed;
  answer_update_user(users, op, "us_1",
                     console_request("PUT", "/v1/users/us_1", "", json{{"name", "Ada L."}}.dump()),
                     changed);
  EXPECT_EQ(changed.status, 503);
}

}  // namespace
}  // namespace leadflow::testing
