#pragma once
// Private: the dashboard's second factor (two_factor.cpp, docs/two-factor.md): the sign-in's
// second step, a user's own enrolment and its end, and the operator's reset of another user's.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "console.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/sign_in.hpp"

namespace leadflow {

/// What the second factor's handlers use: the sign-in's ports of the request (the stores, the
/// sign-in limits, the clock, the client, the audit, the session lookup and the user's
/// two_factor state), and the key that seals the users' TOTP secrets (Config::totp_key). The
/// routes bind them to IngestContext and the request; tests hand in fakes.
struct TwoFactorPorts : SignInPorts {
  const std::string& totp_key;
};

/// POST /v1/session/second-factor: the password step's challenge and a current code or an
/// unused recovery code (400 for a bad body), its attempt reserved in the sign-in limits (429),
/// the code checked (401, counted as a wrong password is), then the session (201). 401 for a
/// challenge expired, used or unknown; 503 when the store cannot say or the secret cannot be
/// opened.
void answer_second_factor(const TwoFactorPorts& ports, const http::Request& req,
                          http::Response& res);
/// POST /v1/session/two-factor/enrol by a signed-in user with its X-CSRF-Token (403 for an API
/// key or without the token, 401 without a session): a new secret waiting for its first code
/// (201), 409 while the second factor is on.
void answer_two_factor_enrol(const TwoFactorPorts& ports, const http::Request& req,
                             http::Response& res);
/// POST /v1/session/two-factor/confirm: the enrolment's first code turns the second factor on
/// and answers its recovery codes (200); 400 for a wrong code, 409 with no enrolment waiting.
void answer_two_factor_confirm(const TwoFactorPorts& ports, const http::Request& req,
                               http::Response& res);
/// POST /v1/session/two-factor/disable: the password and a code or recovery code turn it off
/// (200), each checked as at sign-in (400 naming the one that is wrong, 429); 409 when it is off.
void answer_two_factor_disable(const TwoFactorPorts& ports, const http::Request& req,
                               http::Response& res);
/// DELETE /v1/users/{id}/two-factor by the operator's `key`: the user's second factor turned
/// off (200, audited with the key), 404 for an unknown user or one without a second factor.
void answer_two_factor_reset(const TwoFactorPorts& ports, const ApiKey& key,
                             const std::string& user_id, http::Response& res);

/// After the right password of an active user: when the user's second factor is on, records a
/// new single-use challenge and answers 200 {"second_factor": "totp", "challenge", "expires_in"},
/// and returns true (so does a 503 when the store cannot say). False: no second factor, the
/// caller opens the session. `rehashed` (a new password hash, or "") is stored at once.
bool begin_second_factor(SignInStore& sign_in, const Clock& clock, http::Response& res,
                         const User& user, const std::string& rehashed);
/// {"enabled": bool, "required": bool, "recovery_codes_left"}: the user's second factor as the
/// dashboard reads it (required: `operators_must_enrol`, LEADFLOW_REQUIRE_OPERATOR_2FA, and the
/// user is an operator).
nlohmann::json two_factor_state(SignInStore& sign_in, bool operators_must_enrol, const User& user);

/// POST /v1/session/second-factor, /v1/session/two-factor/{enrol,confirm,disable} and the
/// operator's DELETE /v1/users/{id}/two-factor (docs/two-factor.md).
void register_two_factor(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
