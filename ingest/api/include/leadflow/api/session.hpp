#pragma once
// The dashboard's sessions on the wire: the cookie, the CSRF rule, expiry, and what a signed-in
// user may do through the API.
//
// A session is a random token (passwords::new_token) in the cookie __Host-leadflow_session
// (Path=/; Secure; HttpOnly; SameSite=Strict): the __Host- prefix makes browsers refuse it
// unless it came over HTTPS for this exact host, HttpOnly keeps it from page scripts, and
// SameSite=Strict keeps other sites' pages from sending it. The store keeps the token's SHA-256
// only. A session ends kAbsolute after sign-in, or once unused for kIdle; its last use is
// written at most every kTouchEvery. Every state-changing call (POST, PUT, PATCH, DELETE)
// authenticated by the cookie must carry X-CSRF-Token: the session's CSRF token, given at sign-in
// and by GET /v1/session, readable only by the dashboard's own pages.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/http/message.hpp"

namespace leadflow::session {

inline constexpr std::string_view kCookieName = "__Host-leadflow_session";
inline constexpr std::string_view kCsrfHeader = "X-CSRF-Token";
inline constexpr std::int64_t kAbsoluteMs = 12 * 3'600'000;  // 12 h after sign-in
inline constexpr std::int64_t kIdleMs = 2 * 3'600'000;       // 2 h unused
inline constexpr std::int64_t kTouchEveryMs = 60'000;

/// The Set-Cookie value of a new session, good for `max_age_s` seconds.
std::string set_cookie(std::string_view token, std::int64_t max_age_s);
/// The Set-Cookie value that removes the session cookie (logout).
std::string clear_cookie();
/// The session token among the request's Cookie headers; "" when there is none.
std::string_view token_of(const http::Request& req);
/// Whether `method` changes state (POST, PUT, PATCH, DELETE): those need the CSRF header.
bool changes_state(std::string_view method);
/// Whether `sent` (the X-CSRF-Token header) is the session's token; constant time, never for "".
bool csrf_ok(const UserSession& s, std::string_view sent);
/// Whether the session is still good at `now_ms`: before its absolute expiry, and used within
/// kIdle.
bool live(const UserSession& s, std::int64_t now_ms);
/// A new session of `user_id` at `now_ms`, with the SHA-256 of `token` and a fresh CSRF token.
UserSession make(std::string_view user_id, std::string_view token, std::int64_t now_ms);

/// The scopes a user's session holds: an operator's, everything an operator key may hold; a
/// seller's, a seller key's; a buyer's, a buyer key's.
std::uint32_t scopes_of(const User& u);
/// The key a signed-in user acts as through the API: its account (seller_id, buyer_id), its
/// scopes, the standard plan's rate limits, and the user's id as the key's id.
ApiKey as_api_key(const User& u);
/// The user as the dashboard shows it after sign-in: {"id", "email", "name", "account",
/// "seller_id", "buyer_id"}.
nlohmann::json signed_in_user(const User& u);

}  // namespace leadflow::session
