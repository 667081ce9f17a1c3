#pragma once
// Private: what the dashboard's sign-in (console.cpp) and its second factor (two_factor.cpp)
// share: audit records, the 429 of the sign-in limits, opening a session, and the signed-in user
// of a request.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/limits/sign_in_limits.hpp"

namespace leadflow {

/// Audits a console event of `user` (may be null) from `client`.
void audit_console(IngestContext& ctx, const http::Request& req, AuditEvent event,
                   std::string_view kind, const User* user, const std::string& client);
/// Reserves the place of one attempt at a secret of `email`'s account (a password, a code) in
/// the sign-in limits (leadflow/limits/sign_in_limits.hpp), before the secret is checked. False
/// when the attempt may not be made, and then `res` is the answer (429 with Retry-After, audited,
/// or 503). A right secret gives the place back with ctx.logins.succeeded(attempt); a wrong one
/// keeps it.
bool reserve_attempt(IngestContext& ctx, const http::Request& req, http::Response& res,
                     const std::string& client, std::string_view email,
                     SignInLimits::Attempt& attempt);
/// Signs `user` in: records the sign-in (and `rehashed`, a new password hash, unless ""), makes
/// the session and answers 201 with its cookie, the user, the CSRF token and its two_factor
/// state. `kind` is the audit's: password, totp or recovery_code.
void open_session(IngestContext& ctx, const http::Request& req, http::Response& res,
                  const User& user, const std::string& rehashed, std::string_view kind,
                  const std::string& client);
/// The signed-in user of the request's cookie, or `res` is the answer (403 without HTTPS, 401
/// or 503).
std::optional<SignedIn> signed_in(IngestContext& ctx, const http::Request& req,
                                  http::Response& res);

/// After the right password of an active user: when the user's second factor is on, records a
/// new single-use challenge and answers 200 {"second_factor": "totp", "challenge", "expires_in"},
/// and returns true (so does a 503 when the store cannot say). False: no second factor, the
/// caller opens the session. `rehashed` (a new password hash, or "") is stored at once.
bool begin_second_factor(IngestContext& ctx, http::Response& res, const User& user,
                         const std::string& rehashed);
/// {"enabled": bool, "required": bool}: the user's second factor as the dashboard reads it
/// (required: LEADFLOW_REQUIRE_OPERATOR_2FA and the user is an operator).
nlohmann::json two_factor_state(IngestContext& ctx, const User& user);
/// POST /v1/session/second-factor, /v1/session/two-factor/{enrol,confirm,disable} and the
/// operator's DELETE /v1/users/{id}/two-factor (docs/two-factor.md).
void register_two_factor(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
