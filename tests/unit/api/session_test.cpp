// The dashboard's session on the wire: the cookie's attributes, finding the token among other
// cookies, the CSRF rule, idle and absolute expiry, and what each account's session may do.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "leadflow/api/session.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/http/parser.hpp"
#include "leadflow/management/passwords.hpp"

namespace leadflow {
namespace {

// A GET carrying `cookies` as its Cookie header fields, parsed as the server would.
http::Request with_cookies(std::initializer_list<const char*> cookies) {
  std::string raw = "GET /v1/leads HTTP/1.1\r\nHost: a.example\r\n";
  for (const char* c : cookies) raw.append("Cookie: ").append(c).append("\r\n");
  raw.append("\r\n");
  http::Request req;
  const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
  EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
  return req;
}

TEST(SessionCookie, HasEveryAttributeTheDashboardNeeds) {
  EXPECT_EQ(session::set_cookie("tok", 43200),
            "__Host-leadflow_session=tok; Path=/; Secure; HttpOnly; SameSite=Strict; "
            "Max-Age=43200");
  EXPECT_EQ(session::clear_cookie(),
            "__Host-leadflow_session=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0");
}

TEST(SessionCookie, IsFoundAmongOtherCookies) {
  EXPECT_EQ(session::token_of(with_cookies({"theme=dark; __Host-leadflow_session=abc ; other=1"})),
            "abc");
  EXPECT_EQ(session::token_of(with_cookies({"theme=dark", "__Host-leadflow_session=xyz"})), "xyz");
  EXPECT_EQ(session::token_of(with_cookies({"leadflow_session=abc; __Host-leadflow_sessionX=1"})),
            "");
  EXPECT_EQ(session::token_of(with_cookies({})), "");
}

TEST(SessionCsrf, OnlyTheSessionsOwnTokenPasses) {
  const UserSession s = session::make("us_1", passwords::new_token(), 1000);
  EXPECT_TRUE(session::csrf_ok(s, s.csrf_token));
  EXPECT_FALSE(session::csrf_ok(s, ""));
  EXPECT_FALSE(session::csrf_ok(s, s.csrf_token.substr(1)));
  EXPECT_FALSE(session::csrf_ok(s, passwords::new_token()));
  UserSession empty = s;
  empty.csrf_token = "";
  EXPECT_FALSE(session::csrf_ok(empty, ""));
  for (const char* m : {"POST", "PUT", "PATCH", "DELETE"}) EXPECT_TRUE(session::changes_state(m));
  for (const char* m : {"GET", "HEAD", "OPTIONS"}) EXPECT_FALSE(session::changes_state(m));
}

TEST(SessionExpiry, EndsWhenIdleOrPastItsAbsoluteExpiry) {
  const std::string token = passwords::new_token();
  UserSession s = session::make("us_1", token, 0);
  EXPECT_EQ(s.token_hash, sha256_hex(token));  // the token itself is not kept
  EXPECT_EQ(s.expires_at_ms, session::kAbsoluteMs);
  EXPECT_TRUE(session::live(s, 0));
  EXPECT_TRUE(session::live(s, session::kIdleMs - 1));
  EXPECT_FALSE(session::live(s, session::kIdleMs));  // unused for 2 h
  // Used every hour, it lives until its absolute expiry, not a moment longer.
  for (std::int64_t t = 0; t < session::kAbsoluteMs; t += 3'600'000) {
    s.last_seen_at_ms = t;
    EXPECT_TRUE(session::live(s, t + 1)) << t;
  }
  s.last_seen_at_ms = session::kAbsoluteMs - 1;
  EXPECT_FALSE(session::live(s, session::kAbsoluteMs));
}

TEST(SessionScopes, FollowTheUsersAccount) {
  User op;
  op.id = "us_op";
  User seller = op;
  seller.seller_id = "sl_1";
  User buyer = op;
  buyer.buyer_id = "by_1";
  EXPECT_EQ(session::scopes_of(op), static_cast<std::uint32_t>(kScopeAll));
  EXPECT_EQ(session::scopes_of(seller), kSellerScopes);
  EXPECT_EQ(session::scopes_of(buyer), kBuyerScopes);
  const ApiKey k = session::as_api_key(seller);
  EXPECT_EQ(k.id, "us_op");
  EXPECT_EQ(k.seller_id, "sl_1");
  EXPECT_FALSE(k.is_operator());
  EXPECT_FALSE(k.has(kScopeAdmin));
  EXPECT_TRUE(session::as_api_key(op).is_operator());
  EXPECT_TRUE(session::as_api_key(buyer).is_buyer());
  // The operator at the console on the enterprise plan's limits; a seller or buyer user keeps
  // its account's standard plan.
  EXPECT_EQ(session::as_api_key(op).plan, Plan::kEnterprise);
  EXPECT_EQ(k.plan, Plan::kStandard);
  EXPECT_EQ(session::as_api_key(buyer).plan, Plan::kStandard);
  const auto j = session::signed_in_user(buyer);
  EXPECT_EQ(j["account"], "buyer");
  EXPECT_EQ(j["buyer_id"], "by_1");
  EXPECT_TRUE(j["seller_id"].is_null());
}

}  // namespace
}  // namespace leadflow
