#pragma once
// Private: the dashboard's sign-in, session and user handlers (console.cpp), on ports the routes
// bind; and what they share with the second factor's routes (two_factor.cpp): audit records, the
// 429 of the sign-in limits, opening a session, and the signed-in user of a request.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/limits/sign_in_limits.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/sign_in.hpp"

namespace leadflow {

/// What the dashboard's sign-in handlers use besides the request. The routes bind them to
/// IngestContext and the request (its client's address; its route in the audit records); tests
/// hand in fakes.
struct SignInPorts {
  AccountsStore& accounts;  // users, by e-mail
  SignInStore& sign_in;     // sign-ins and sessions
  SignInLimits& logins;     // the attempts at passwords, per address and per account
  Management& management;   // a user's new password
  const Clock& clock;
  std::string client;  // the client's address (client_of)
  /// Writes an audit record with the request's route.
  std::function<void(const AuditRecord&)> audit;
  /// The live session of a cookie's token, and its user (find_signed_in).
  std::function<SignedIn(std::string_view token)> find_session;
  /// After the right password of an active user: when its second factor is on, its challenge
  /// is the answer (begin_second_factor) and this is true.
  std::function<bool(http::Response&, const User&, const std::string& rehashed)> second_factor;
  /// The user's second factor as the dashboard reads it (two_factor_state).
  std::function<nlohmann::json(const User&)> two_factor;
};
/// The ports of one request of `ctx`.
SignInPorts sign_in_ports(IngestContext& ctx, const http::Request& req);

/// Audits a console event of `user` (may be null) from the ports' client.
void audit_console(const SignInPorts& ports, AuditEvent event, std::string_view kind,
                   const User* user);
/// Reserves the place of one attempt at a secret of `email`'s account (a password, a code) in
/// the sign-in limits (leadflow/limits/sign_in_limits.hpp), before the secret is checked. False
/// when the attempt may not be made, and then `res` is the answer (429 with Retry-After, audited,
/// or 503). A right secret gives the place back with logins.succeeded(attempt); a wrong one
/// keeps it.
bool reserve_attempt(const SignInPorts& ports, http::Response& res, std::string_view email,
                     SignInLimits::Attempt& attempt);
/// Signs `user` in: records the sign-in (and `rehashed`, a new password hash, unless ""), makes
/// the session and answers 201 with its cookie, the user, the CSRF token and its two_factor
/// state. `kind` is the audit's: password, totp or recovery_code.
void open_session(const SignInPorts& ports, http::Response& res, const User& user,
                  const std::string& rehashed, std::string_view kind);
/// The signed-in user of the request's cookie, or `res` is the answer (401 or 503).
std::optional<SignedIn> signed_in(const SignInPorts& ports, const http::Request& req,
                                  http::Response& res);

/// POST /v1/session, over HTTPS: the body checked (400), the attempt reserved in the sign-in
/// limits (429), the password checked (one 401 for an unknown e-mail, a wrong password and an
/// inactive user), then the second factor's challenge (200) or the session (201).
void answer_sign_in(const SignInPorts& ports, const http::Request& req, http::Response& res);
/// GET /v1/session: the signed-in user and its CSRF token (200), or 401.
void answer_session(const SignInPorts& ports, const http::Request& req, http::Response& res);
/// DELETE /v1/session: logout with the session's X-CSRF-Token (403 without); 401 when not
/// signed in.
void answer_sign_out(const SignInPorts& ports, const http::Request& req, http::Response& res);
/// POST /v1/session/password: a signed-in user's own password change (docs/api.md): 200, 400
/// for a bad field or a wrong current password (counted in the sign-in limits), 401, 403 for a
/// key, a missing X-CSRF-Token or an operator who must enrol first, 429, 503.
void answer_password_change(const SignInPorts& ports, const http::Request& req,
                            http::Response& res);

/// PUT /v1/session/time-zone, {"time_zone": "Europe/Paris"}: a signed-in user's own time zone
/// (docs/api.md): 200 with the zone, 400 naming `time_zone` for a zone the zone database does
/// not know, 401, 403 for a key, a missing X-CSRF-Token or an operator who must enrol first,
/// 503.
void answer_time_zone_change(const SignInPorts& ports, const http::Request& req,
                             http::Response& res);

/// What the operator's user routes use: the users, and their management (field checks,
/// password hashes, sessions ended with a new password or a disabled user).
struct UserPorts {
  AccountsStore& accounts;
  Management& management;
};
/// POST /v1/users by `key`: 201 with the user made, 400 naming each bad field, 403 for a key
/// that is not the operator's, 409, 503.
void answer_create_user(const UserPorts& ports, const ApiKey& key, const http::Request& req,
                        http::Response& res);
/// GET /v1/users by `key`: every user (200), 403 for a key that is not the operator's.
void answer_users(const UserPorts& ports, const ApiKey& key, http::Response& res);
/// GET /v1/users/{id} by `key`: the user with its ETag (200), 403, 404, 503.
void answer_user(const UserPorts& ports, const ApiKey& key, const std::string& id,
                 http::Response& res);
/// PUT /v1/users/{id} by `key`: name, active and password changed (200 with the ETag), 400, 403,
/// 404, 412 when If-Match names another version, 503.
void answer_update_user(const UserPorts& ports, const ApiKey& key, const std::string& id,
                        const http::Request& req, http::Response& res);

}  // namespace leadflow
