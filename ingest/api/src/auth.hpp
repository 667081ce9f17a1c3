#pragma once
// Private: authentication of both surfaces' callers, and what follows a failed one. Every failed
// authentication counts against the client's address, an IPv6 client's /64
// (LEADFLOW_AUTH_FAILURE_LIMIT a minute, both surfaces together, on every replica together when
// the limits are shared: Config::limits_shared()); past that, the answer is 429 with Retry-After
// instead of 401, whatever key is tried, while a valid key from the same address still passes.
// Failures, refusals and their addresses go to the audit log.
#include <optional>
#include <string>
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/limits/rate_limiter.hpp"

namespace leadflow {

/// The client's address: the peer, or behind a trusted proxy (LEADFLOW_TRUSTED_PROXIES) the
/// address it forwarded.
std::string client_of(const IngestContext& ctx, const http::Request& req);

/// False (and `res` is a 403) unless the request came over TLS, or a trusted proxy forwarded it
/// from HTTPS.
bool require_https(const IngestContext& ctx, const http::Request& req, http::Response& res);

/// Surface A: authenticates, rate-limits and authorises one request. Every answer, refusals
/// included, carries the X-RateLimit headers. Returns the key when the handler may go on;
/// otherwise `res` is the answer (403 HTTPS required, 401, 429, 403, 503).
///
/// A request with no Authorization header but the dashboard's session cookie is authenticated
/// by its session instead (leadflow/api/session.hpp): it acts as session::as_api_key(user), and
/// a state-changing method without the session's X-CSRF-Token is refused with 403.
std::optional<ApiKey> authorise(IngestContext& ctx, const http::Request& req, http::Response& res,
                                Scope scope, bool operator_only = false);

/// Who makes a change through the API, for the change log: a signed-in user (the session's
/// as_api_key carries the user's id, us_...) on surface "dashboard", an API key on "api"; by its
/// name as it is now.
ChangeActor actor_of(const ApiKey& key);
/// A buyer's key or user as the change log names it when it changes its own records: actor_of,
/// its name said to act for the buyer ("… (buyer by_…)").
ChangeActor buyer_actor(const ApiKey& key);

/// A live session and its active user, found by the cookie's token. kNotFound for a token that
/// is malformed, unknown, expired (then deleted) or whose user is gone or inactive;
/// kUnavailable when the store could not say (the user's second factor included, when it must
/// be asked whether the session is enrol_only). Marks the session used (at most every
/// session::kTouchEveryMs).
struct SignedIn {
  StoreStatus status = StoreStatus::kUnavailable;
  User user;
  UserSession session;
  /// An operator without a second factor while LEADFLOW_REQUIRE_OPERATOR_2FA is set: it may
  /// only enrol (and see or end its session); every other call is refused with kEnrolFirst.
  bool enrol_only = false;
};
inline constexpr std::string_view kEnrolFirst =
    "two-factor sign-in is required for operators: enrol first (POST "
    "/v1/session/two-factor/enrol), then every route opens";
SignedIn find_signed_in(IngestContext& ctx, std::string_view token);

/// Why a Surface B caller was not let in: which audit kind, and what is known of it.
struct FailedCampaignAuth {
  std::string_view kind;         // missing_key, unknown_key, inactive_campaign
  std::string_view presented;    // the key as sent (only its last four characters are logged)
  std::string_view campaign_id;  // an inactive campaign's
  std::string_view seller_id;
};

/// After a failed authentication on Surface B: counts it against the client's address, audits
/// it, and answers 401 {"status": "unauthorized"} or, past the address's limit, 429
/// {"status": "rate_limited"} with Retry-After. With `may_block` false (the event loop calls
/// it) it never waits on I/O: false when counting would have to wait on the store (shared
/// limits), and then nothing was counted or answered.
/// What a campaign key that is unknown, or whose campaign is paused, is told.
inline constexpr std::string_view kUnknownCampaignKey = "unrecognised or inactive campaign key";
/// Surface B's 401: {"status": "unauthorized", "message": message}.
void send_campaign_unauthorized(http::Response& res, std::string_view message);

bool answer_failed_campaign_auth(IngestContext& ctx, const http::Request& req, http::Response& res,
                                 const FailedCampaignAuth& failed, std::string_view message,
                                 bool may_block = true);

/// Records `r` in the audit log with the request's route and, unless `r.client` is set already,
/// its client's address.
void audit_request(IngestContext& ctx, const http::Request& req, AuditRecord r);

/// Audits a refusal of a key's or campaign's own rate limit (kind "api_key" or "campaign").
void audit_rate_limited(IngestContext& ctx, const http::Request& req, std::string_view surface,
                        std::string_view kind, std::string_view key_id,
                        std::string_view campaign_id, std::string_view seller_id);

}  // namespace leadflow
