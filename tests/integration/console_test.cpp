// The dashboard's sign-in over real HTTPS: users made by the operator sign in with e-mail and
// password, get a __Host- session cookie and a CSRF token, and use the API with them as their
// account; logout, disabling and the sign-in limits end or refuse sessions.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// A signed-in browser: the session cookie and the CSRF token sign-in gave.
struct Browser {
  std::string cookie;  // "__Host-leadflow_session=..."
  std::string csrf;
  json user;
};

class ConsoleTest : public ::testing::Test {
 protected:
  // A user made through POST /v1/users with the operator key; returns its id.
  std::string add_user(const std::string& email, const std::string& account,
                       json extra = json::object()) {
    json body = {{"email", email}, {"name", email}, {"password", kPassword}, {"account", account}};
    body.merge_patch(extra);
    auto r = svc.post("/v1/users", body, svc.operator_key());
    EXPECT_EQ(r->status, 201) << r->body;
    if (r->status != 201) return "";
    return body_of(r)["data"]["id"];
  }

  httplib::Result sign_in(const std::string& email, const std::string& password,
                          const std::string& client = "") {
    httplib::Headers h;
    if (!client.empty()) h.emplace("X-Forwarded-For", client);
    return svc.https()->Post("/v1/session", h,
                             json{{"email", email}, {"password", password}}.dump(),
                             "application/json");
  }

  Browser signed_in(const std::string& email) {
    auto r = sign_in(email, kPassword);
    EXPECT_EQ(r->status, 201) << r->body;
    Browser b;
    if (r->status != 201) return b;
    const std::string set = r->get_header_value("Set-Cookie");
    b.cookie = set.substr(0, set.find(';'));
    b.csrf = body_of(r)["csrf_token"];
    b.user = body_of(r)["user"];
    return b;
  }

  static httplib::Headers headers(const Browser& b, bool with_csrf = false) {
    httplib::Headers h{{"Cookie", b.cookie}};
    if (with_csrf) h.emplace("X-CSRF-Token", b.csrf);
    return h;
  }

  httplib::Result get(const std::string& path, const Browser& b) {
    return svc.https()->Get(path.c_str(), headers(b));
  }
  httplib::Result post(const std::string& path, const json& body, const Browser& b,
                       bool with_csrf) {
    return svc.https()->Post(path.c_str(), headers(b, with_csrf), body.dump(), "application/json");
  }

  ServiceFixture svc;
};

TEST_F(ConsoleTest, SignInSetsAStrictHostCookieAndAnswersTheUser) {
  const std::string id = add_user("Ops@Example.com", "operator");
  auto r = sign_in("ops@example.com", kPassword);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string set = r->get_header_value("Set-Cookie");
  const std::string prefix = "__Host-leadflow_session=";
  ASSERT_EQ(set.rfind(prefix, 0), 0u) << set;
  const std::string token = set.substr(prefix.size(), set.find(';') - prefix.size());
  EXPECT_EQ(token.size(), 43u) << set;
  EXPECT_EQ(set.substr(set.find(';')),
            "; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=43200");
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store");
  const json body = body_of(r);
  EXPECT_EQ(body["user"], (json{{"id", id},
                                {"email", "ops@example.com"},
                                {"name", "Ops@Example.com"},
                                {"account", "operator"},
                                {"seller_id", nullptr},
                                {"buyer_id", nullptr},
                                {"time_zone", "UTC"}}));
  EXPECT_EQ(body["csrf_token"].get<std::string>().size(), 43u);
  // The token never reaches the body, and the store keeps only its hash.
  EXPECT_EQ(r->body.find(token), std::string::npos);
  EXPECT_EQ(svc.app().store().find_session(token).status, StoreStatus::kNotFound);
  EXPECT_EQ(svc.app().store().find_session(sha256_hex(token)).status, StoreStatus::kOk);

  // GET /v1/session: the signed-in user and the same CSRF token; without a cookie, 401.
  Browser b{set.substr(0, set.find(';')), body["csrf_token"], body["user"]};
  auto me = get("/v1/session", b);
  ASSERT_EQ(me->status, 200) << me->body;
  EXPECT_EQ(body_of(me)["user"]["id"], id);
  EXPECT_EQ(body_of(me)["csrf_token"], b.csrf);
  EXPECT_EQ(svc.https()->Get("/v1/session")->status, 401);
  auto users = get("/v1/users", b);
  ASSERT_EQ(users->status, 200) << users->body;
  EXPECT_EQ(body_of(users)["data"][0]["last_login_at"].is_string(), true);
}

TEST_F(ConsoleTest, ASignInReplacesAHashMadeUnderOlderLimits) {
  // "a long enough password" hashed under libsodium's interactive limits (2 passes), as an
  // older release would have stored it.
  User u;
  u.id = new_id(kUserPrefix);
  u.email = "old@example.com";
  u.name = "Old";
  u.password_hash =
      "$argon2id$v=19$m=65536,t=2,p=1$WI4PsZQQaNmY/bzA10gYaA$"
      "N8miLAuYYZPa2tPmW9OWkXRG4C7CzgjkcceF3gnmWtE";
  u.created_at_ms = 1;
  ASSERT_EQ(svc.app().store().insert_user(u), StoreStatus::kOk);
  ASSERT_EQ(sign_in("old@example.com", kPassword)->status, 201);
  const auto stored = svc.app().store().get_user(u.id).value;
  ASSERT_TRUE(stored.has_value());
  EXPECT_NE(stored->password_hash, u.password_hash);
  EXPECT_NE(stored->password_hash.find("t=3"), std::string::npos) << stored->password_hash;
  EXPECT_GT(stored->last_login_at_ms, 0);
  // The new hash is of the same password.
  ASSERT_EQ(sign_in("old@example.com", kPassword)->status, 201);
  EXPECT_EQ(sign_in("old@example.com", "a long enough passworD")->status, 401);
}

TEST_F(ConsoleTest, WrongPasswordAndUnknownEmailGetTheSame401) {
  add_user("known@example.com", "operator");
  auto wrong = sign_in("known@example.com", "not the password at all");
  auto unknown = sign_in("nobody@example.com", kPassword);
  ASSERT_EQ(wrong->status, 401);
  ASSERT_EQ(unknown->status, 401);
  EXPECT_EQ(wrong->body, unknown->body);
  EXPECT_TRUE(wrong->get_header_value("Set-Cookie").empty());
  // A disabled user is refused the same way, even with the right password.
  const std::string id = add_user("gone@example.com", "operator");
  ASSERT_EQ(svc.https()
                ->Put(("/v1/users/" + id).c_str(),
                      httplib::Headers{{"Authorization", "Bearer " + svc.operator_key()}},
                      json{{"active", false}}.dump(), "application/json")
                ->status,
            200);
  auto disabled = sign_in("gone@example.com", kPassword);
  ASSERT_EQ(disabled->status, 401);
  EXPECT_EQ(disabled->body, wrong->body);
}

TEST_F(ConsoleTest, TheCookieAuthenticatesTheApiAndStateChangesNeedTheCsrfHeader) {
  const std::string seller = svc.add_seller("Cookie Seller");
  add_user("seller@example.com", "seller", {{"seller_id", seller}});
  const Browser b = signed_in("seller@example.com");
  EXPECT_EQ(b.user["account"], "seller");
  EXPECT_EQ(b.user["seller_id"], seller);

  auto list = get("/v1/leads", b);
  ASSERT_EQ(list->status, 200) << list->body;
  EXPECT_TRUE(body_of(list)["data"].empty());

  auto no_csrf = post("/v1/leads", sample_lead(1), b, false);
  EXPECT_EQ(no_csrf->status, 403) << no_csrf->body;
  Browser wrong = b;
  wrong.csrf = std::string(43, 'A');
  EXPECT_EQ(post("/v1/leads", sample_lead(1), wrong, true)->status, 403);
  auto with_csrf = post("/v1/leads", sample_lead(1), b, true);
  ASSERT_GE(with_csrf->status, 200) << with_csrf->body;
  ASSERT_LT(with_csrf->status, 300) << with_csrf->body;
  // The lead is the seller's: its user sees it once the worker has recorded it.
  const std::string lead_id = body_of(with_csrf)["lead_id"];
  json listed;
  for (int i = 0; i < 200; ++i) {
    listed = body_of(get("/v1/leads", b))["data"];
    if (!listed.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["lead_id"], lead_id);
  EXPECT_EQ(listed[0]["seller_id"], seller);

  // A seller's session holds a seller's scopes: no operator routes.
  EXPECT_EQ(get("/v1/sellers", b)->status, 403);
  EXPECT_EQ(get("/v1/users", b)->status, 403);
  // An Authorization header wins over the cookie, as before.
  httplib::Headers both = headers(b);
  both.emplace("Authorization", "Bearer lfk_wrong");
  EXPECT_EQ(svc.https()->Get("/v1/leads", both)->status, 401);
  // A made-up cookie is no session.
  EXPECT_EQ(svc.https()
                ->Get("/v1/leads", httplib::Headers{{"Cookie", "__Host-leadflow_session=" +
                                                                   std::string(43, 'x')}})
                ->status,
            401);
}

TEST_F(ConsoleTest, ASellerUserSeesOnlyItsSellersLeads) {
  const std::string mine = svc.add_seller("Mine");
  const std::string theirs = svc.add_seller("Theirs");
  const std::string my_key = svc.add_api_key({{"name", "mine"}, {"seller_id", mine}});
  const std::string their_key = svc.add_api_key({{"name", "theirs"}, {"seller_id", theirs}});
  auto a = svc.post("/v1/leads", sample_lead(10), my_key);
  auto b = svc.post("/v1/leads", sample_lead(11), their_key);
  ASSERT_LT(a->status, 300) << a->body;
  ASSERT_LT(b->status, 300) << b->body;
  const std::string my_lead = body_of(a)["lead_id"];
  const std::string their_lead = body_of(b)["lead_id"];
  add_user("mine@example.com", "seller", {{"seller_id", mine}});
  const Browser browser = signed_in("mine@example.com");

  // The leads are recorded by the worker; wait until the operator sees both.
  for (int i = 0; i < 200; ++i) {
    if (body_of(svc.get("/v1/leads", svc.operator_key()))["data"].size() == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(body_of(svc.get("/v1/leads", svc.operator_key()))["data"].size(), 2u);
  auto list = get("/v1/leads", browser);
  ASSERT_EQ(list->status, 200) << list->body;
  const json data = body_of(list)["data"];
  ASSERT_EQ(data.size(), 1u) << list->body;
  EXPECT_EQ(data[0]["lead_id"], my_lead);
  EXPECT_EQ(get("/v1/leads/" + my_lead, browser)->status, 200);
  EXPECT_EQ(get("/v1/leads/" + their_lead, browser)->status, 404);
}

// Settings, then API Keys: a seller user makes, lists and revokes its own seller's keys; the key
// is shown once and works; another seller's keys stay out of reach; a seller's key makes none.
TEST_F(ConsoleTest, ASellerUserManagesItsOwnApiKeys) {
  const std::string mine = svc.add_seller("Keys Mine");
  const std::string theirs = svc.add_seller("Keys Theirs");
  add_user("keys@example.com", "seller", {{"seller_id", mine}});
  const std::string their_key = svc.add_api_key({{"name", "theirs"}, {"seller_id", theirs}});
  const Browser b = signed_in("keys@example.com");

  auto made = post("/v1/api-keys", {{"name", "my integration"}}, b, true);
  ASSERT_EQ(made->status, 201) << made->body;
  const json key = body_of(made)["data"];
  EXPECT_EQ(key["seller_id"], mine);
  EXPECT_EQ(key["plan"], "standard");
  const std::string secret = key["key"];
  EXPECT_EQ(svc.get("/v1/leads", secret)->status, 200);

  auto list = get("/v1/api-keys", b);
  ASSERT_EQ(list->status, 200) << list->body;
  const json listed = body_of(list)["data"];
  ASSERT_EQ(listed.size(), 1u) << list->body;  // not the other seller's, not the operator's
  EXPECT_EQ(listed[0]["key_id"], key["key_id"]);
  EXPECT_FALSE(listed[0].contains("key"));

  for (const json& bad :
       {json{{"name", "x"}, {"seller_id", theirs}}, json{{"name", "x"}, {"plan", "enterprise"}},
        json{{"name", "x"}, {"scopes", json::array({"admin"})}},
        json{{"name", "x"}, {"buyer_id", "by_someone"}}}) {
    auto r = post("/v1/api-keys", bad, b, true);
    EXPECT_EQ(r->status, 400) << bad.dump() << ": " << r->body;
  }
  EXPECT_EQ(post("/v1/api-keys", {{"name", "no csrf"}}, b, false)->status, 403);
  // A seller's key manages no keys, its own seller's included.
  auto by_key = svc.post("/v1/api-keys", {{"name", "minted"}}, secret);
  EXPECT_EQ(by_key->status, 403) << by_key->body;

  auto remove = [&](const std::string& id) {
    return svc.https()->Delete(("/v1/api-keys/" + id).c_str(), headers(b, true));
  };
  std::string their_id;
  {
    const json all = body_of(svc.get("/v1/api-keys", svc.operator_key()));
    for (const auto& k : all["data"])
      if (k["name"] == "theirs") their_id = k["key_id"];
  }
  ASSERT_FALSE(their_id.empty());
  EXPECT_EQ(remove(their_id)->status, 404);
  EXPECT_EQ(svc.get("/v1/leads", their_key)->status, 200);
  EXPECT_EQ(remove(key["key_id"])->status, 200);
  EXPECT_EQ(svc.get("/v1/leads", secret)->status, 401);
}

TEST_F(ConsoleTest, LogoutEndsTheSessionAndNeedsTheCsrfHeader) {
  add_user("out@example.com", "operator");
  const Browser b = signed_in("out@example.com");
  ASSERT_EQ(get("/v1/leads", b)->status, 200);
  auto refused = svc.https()->Delete("/v1/session", headers(b));
  EXPECT_EQ(refused->status, 403) << refused->body;
  ASSERT_EQ(get("/v1/leads", b)->status, 200);  // still signed in

  auto out = svc.https()->Delete("/v1/session", headers(b, true));
  ASSERT_EQ(out->status, 200) << out->body;
  EXPECT_EQ(out->get_header_value("Set-Cookie"),
            "__Host-leadflow_session=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0");
  EXPECT_EQ(get("/v1/leads", b)->status, 401);
  EXPECT_EQ(get("/v1/session", b)->status, 401);
}

TEST_F(ConsoleTest, DisablingAUserEndsItsSession) {
  const std::string id = add_user("disabled@example.com", "operator");
  const Browser b = signed_in("disabled@example.com");
  ASSERT_EQ(get("/v1/leads", b)->status, 200);
  auto put = svc.https()->Put(("/v1/users/" + id).c_str(),
                              httplib::Headers{{"Authorization", "Bearer " + svc.operator_key()}},
                              json{{"active", false}}.dump(), "application/json");
  ASSERT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(body_of(put)["data"]["active"], false);
  EXPECT_EQ(get("/v1/leads", b)->status, 401);
  EXPECT_EQ(get("/v1/session", b)->status, 401);
}

TEST_F(ConsoleTest, AnOperatorSessionManagesUsersWithItsCsrfToken) {
  add_user("admin@example.com", "operator");
  const Browser admin = signed_in("admin@example.com");
  const std::string buyer = svc.add_buyer(*start_buyer("b", 1.0));
  const json body = {{"email", "buyer@example.com"},
                     {"name", "Buyer person"},
                     {"password", kPassword},
                     {"account", "buyer"},
                     {"buyer_id", buyer}};
  EXPECT_EQ(post("/v1/users", body, admin, false)->status, 403);
  auto made = post("/v1/users", body, admin, true);
  ASSERT_EQ(made->status, 201) << made->body;
  EXPECT_EQ(body_of(made)["data"]["account"], "buyer");
  EXPECT_EQ(body_of(made)["data"]["buyer_id"], buyer);
  EXPECT_EQ(made->body.find(kPassword), std::string::npos);
  const Browser b = signed_in("buyer@example.com");
  EXPECT_EQ(b.user["buyer_id"], buyer);
  EXPECT_EQ(get("/v1/leads", b)->status, 200);
  EXPECT_EQ(get("/v1/buyers", b)->status, 403);

  // Field errors are 400 naming the fields, as on the other operator routes.
  auto bad = post("/v1/users",
                  {{"email", "x"}, {"name", "X"}, {"password", "short"}, {"account", "seller"}},
                  admin, true);
  ASSERT_EQ(bad->status, 400) << bad->body;
  const json refused = body_of(bad);
  std::set<std::string> fields;
  for (const auto& e : refused["errors"]) fields.insert(e["field"].get<std::string>());
  EXPECT_EQ(fields, (std::set<std::string>{"email", "password", "seller_id"}));
  auto list = get("/v1/users", admin);
  ASSERT_EQ(list->status, 200);
  EXPECT_EQ(body_of(list)["data"].size(), 2u);
  EXPECT_EQ(list->body.find("argon2"), std::string::npos);  // never a hash
}

TEST_F(ConsoleTest, FailedSignInsAreLimitedPerAccountThen429WithRetryAfter) {
  add_user("target@example.com", "operator");
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(sign_in("target@example.com", "wrong password " + std::to_string(i))->status, 401);
  auto limited = sign_in("target@example.com", kPassword);  // even the right one now
  ASSERT_EQ(limited->status, 429) << limited->body;
  const int retry = std::stoi(limited->get_header_value("Retry-After"));
  EXPECT_GT(retry, 14 * 60);
  EXPECT_LE(retry, 15 * 60);
  EXPECT_TRUE(limited->get_header_value("Set-Cookie").empty());
  // Another account from the same address still signs in: the address has 5 of its 10.
  add_user("other@example.com", "operator");
  EXPECT_EQ(sign_in("other@example.com", kPassword)->status, 201);
}

TEST_F(ConsoleTest, FailedSignInsAreLimitedPerAddress) {
  add_user("someone@example.com", "operator");
  // Ten failures over ten e-mails (none past its own limit) use the address's allowance; a
  // successful sign-in in between counts for nothing.
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(sign_in("user" + std::to_string(i) + "@example.com", kPassword)->status, 401);
    if (i == 4) {
      ASSERT_EQ(sign_in("someone@example.com", kPassword)->status, 201);
    }
  }
  auto limited = sign_in("someone@example.com", kPassword);
  ASSERT_EQ(limited->status, 429) << limited->body;
  EXPECT_FALSE(limited->get_header_value("Retry-After").empty());
}

TEST_F(ConsoleTest, ChangingThePasswordKeepsThisSessionAndEndsTheOthers) {
  add_user("change@example.com", "operator");
  const Browser here = signed_in("change@example.com");
  const Browser elsewhere = signed_in("change@example.com");
  const std::string fresh = "a brand new password";
  const json good = {{"current_password", kPassword}, {"new_password", fresh}};

  // A state change like any other: the CSRF header is needed; a key has no password to change.
  EXPECT_EQ(post("/v1/session/password", good, here, false)->status, 403);
  auto by_key = svc.post("/v1/session/password", good, svc.operator_key());
  EXPECT_EQ(by_key->status, 403) << by_key->body;
  EXPECT_EQ(svc.https()->Post("/v1/session/password", good.dump(), "application/json")->status,
            401);

  // Every field is checked: a wrong current password, a new one refused as at user creation.
  auto wrong =
      post("/v1/session/password",
           {{"current_password", "not the password at all"}, {"new_password", fresh}}, here, true);
  ASSERT_EQ(wrong->status, 400) << wrong->body;
  EXPECT_EQ(body_of(wrong)["errors"],
            (json::array({{{"field", "current_password"},
                           {"code", "wrong"},
                           {"message", "is not the user's current password"}}})));
  auto weak = post("/v1/session/password",
                   {{"current_password", kPassword}, {"new_password", "short"}}, here, true);
  ASSERT_EQ(weak->status, 400) << weak->body;
  ASSERT_EQ(body_of(weak)["errors"].size(), 1u);
  EXPECT_EQ(body_of(weak)["errors"][0]["field"], "new_password");
  auto missing = post("/v1/session/password", {{"new_password", 5}, {"extra", 1}}, here, true);
  ASSERT_EQ(missing->status, 400) << missing->body;
  const json missing_body = body_of(missing);
  std::set<std::string> fields;
  for (const auto& e : missing_body["errors"]) fields.insert(e["field"].get<std::string>());
  EXPECT_EQ(fields, (std::set<std::string>{"current_password", "new_password", "extra"}));

  auto changed = post("/v1/session/password", good, here, true);
  ASSERT_EQ(changed->status, 200) << changed->body;
  EXPECT_EQ(body_of(changed), (json{{"success", true}}));
  EXPECT_EQ(changed->body.find(fresh), std::string::npos);
  // This session goes on, with its CSRF token; the other one ended.
  EXPECT_EQ(get("/v1/session", here)->status, 200);
  EXPECT_EQ(post("/v1/users",
                 {{"email", "next@example.com"},
                  {"name", "Next"},
                  {"password", kPassword},
                  {"account", "operator"}},
                 here, true)
                ->status,
            201);
  EXPECT_EQ(get("/v1/session", elsewhere)->status, 401);
  // The old password is gone, the new one signs in.
  EXPECT_EQ(sign_in("change@example.com", kPassword)->status, 401);
  EXPECT_EQ(sign_in("change@example.com", fresh)->status, 201);
}

TEST_F(ConsoleTest, WrongCurrentPasswordsCountAgainstTheSignInLimits) {
  add_user("guess@example.com", "operator");
  const Browser b = signed_in("guess@example.com");
  for (int i = 0; i < 5; ++i) {
    auto r = post("/v1/session/password",
                  {{"current_password", "guess number " + std::to_string(i)},
                   {"new_password", "a brand new password"}},
                  b, true);
    ASSERT_EQ(r->status, 400) << r->body;
  }
  // The account is past its 5 failures: no more guesses, not even the right password...
  auto limited =
      post("/v1/session/password",
           {{"current_password", kPassword}, {"new_password", "a brand new password"}}, b, true);
  ASSERT_EQ(limited->status, 429) << limited->body;
  EXPECT_FALSE(limited->get_header_value("Retry-After").empty());
  // ... and the sign-in of that account is limited too.
  EXPECT_EQ(sign_in("guess@example.com", kPassword)->status, 429);
}

// Sessions on the service's own clock: 2 h unused ends one, use keeps it alive, and 12 h after
// sign-in it ends however much it was used.
TEST(ConsoleExpiry, IdleAndAbsoluteExpiryEndSessions) {
  ManualClock clock;
  ServiceOptions o;
  o.workers = 0;
  o.clock = &clock;
  ServiceFixture svc(o);
  auto made = svc.post("/v1/users",
                       {{"email", "clock@example.com"},
                        {"name", "Clock"},
                        {"password", kPassword},
                        {"account", "operator"}},
                       svc.operator_key());
  ASSERT_EQ(made->status, 201) << made->body;
  const auto sign_in = [&] {
    auto r = svc.https()->Post("/v1/session",
                               json{{"email", "clock@example.com"}, {"password", kPassword}}.dump(),
                               "application/json");
    EXPECT_EQ(r->status, 201) << r->body;
    const std::string set = r->get_header_value("Set-Cookie");
    return httplib::Headers{{"Cookie", set.substr(0, set.find(';'))}};
  };
  const auto status = [&](const httplib::Headers& h) {
    return svc.https()->Get("/v1/session", h)->status;
  };

  const httplib::Headers idle = sign_in();
  clock.advance(std::chrono::minutes(119));
  EXPECT_EQ(status(idle), 200);  // used at 1:59: its idle time starts again
  clock.advance(std::chrono::minutes(119));
  EXPECT_EQ(status(idle), 200);
  clock.advance(std::chrono::minutes(120));
  EXPECT_EQ(status(idle), 401);  // 2 h unused

  const httplib::Headers busy = sign_in();
  for (int hour = 1; hour < 12; ++hour) {
    clock.advance(std::chrono::hours(1));
    ASSERT_EQ(status(busy), 200) << hour;
  }
  clock.advance(std::chrono::hours(1));
  EXPECT_EQ(status(busy), 401);  // 12 h after sign-in
}

}  // namespace
}  // namespace leadflow::testing
