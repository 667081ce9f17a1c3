// Authentication of both surfaces, the per-address limit on failed authentications, and the
// audit records of both.
#include "auth.hpp"

#include "leadflow/base/ids.hpp"

#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/session.hpp"
#include "leadflow/base/address_key.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/management/passwords.hpp"

namespace leadflow {
namespace {

// A key's last use is written at most this often (one store write a minute per busy key).
constexpr std::int64_t kKeyTouchEveryMs = 60'000;

// Counts a failed authentication against the client's address (an IPv6 client: its /64). The
// same bucket serves both surfaces, so a client cannot get twice the budget by alternating them.
// nullopt when `may_block` is false and the limiter would have to wait on the store.
std::optional<RateDecision> charge_failure(IngestContext& ctx, const std::string& client,
                                           bool may_block = true) {
  const std::string key = "authfail:" + address_limit_key(client);
  const int limit = ctx.config.auth_failure_limit_per_minute;
  if (may_block) return ctx.ip_limiter.acquire(key, limit, 0);
  return ctx.ip_limiter.try_acquire(key, limit, 0);
}

void audit_failure(IngestContext& ctx, const http::Request& req, const std::string& client,
                   std::string_view surface, bool over_limit, std::string_view kind,
                   std::string_view presented, std::string_view key_id,
                   std::string_view campaign_id, std::string_view seller_id) {
  const std::string last4 = credential_last4(presented);
  AuditRecord r;
  r.event = over_limit ? AuditEvent::kRateLimited : AuditEvent::kAuthFailed;
  r.surface = surface;
  r.kind = over_limit ? std::string_view("failed_auth_per_address") : kind;
  r.client = client;
  r.key_id = key_id;
  r.campaign_id = campaign_id;
  r.seller_id = seller_id;
  r.credential_last4 = last4;
  audit_request(ctx, req, r);
}

// After a failed authentication on Surface A: 401, or 429 once the address is past its limit.
// `revoked` is the key when it was found but revoked (audited under its id), else nullptr and
// `presented` is what was sent.
void answer_failed_api_auth(IngestContext& ctx, const http::Request& req, http::Response& res,
                            std::string_view kind, std::string_view presented,
                            const ApiKey* revoked, std::string_view detail) {
  const std::string client = client_of(ctx, req);
  const RateDecision d = *charge_failure(ctx, client);
  http::set_rate_headers(res, d);
  audit_failure(ctx, req, client, "api", !d.allowed, kind, presented,
                revoked != nullptr ? std::string_view(revoked->id) : std::string_view(), "",
                revoked != nullptr ? std::string_view(revoked->seller_id) : std::string_view());
  if (!d.allowed) {
    http::send_problem(res, 429, "too many failed authentications from this address");
    return;
  }
  res.set_header("WWW-Authenticate", "Bearer");
  http::send_problem(res, 401, detail);
}

// The rate limit of the key (or of the signed-in user, as its key), then its permission.
std::optional<ApiKey> limit_and_check(IngestContext& ctx, const http::Request& req,
                                      http::Response& res, ApiKey key, Scope scope,
                                      bool operator_only, bool by_session) {
  const PlanLimits limits = limits_of(key.plan);
  const RateDecision d = ctx.limiter.acquire(key.id, limits.per_minute, limits.per_day);
  http::set_rate_headers(res, d);
  if (!d.allowed) {
    if (by_session) {
      AuditRecord r;
      r.event = AuditEvent::kRateLimited;
      r.surface = "api";
      r.kind = "user";
      r.user_id = key.id;
      r.seller_id = key.seller_id;
      audit_request(ctx, req, r);
    } else {
      audit_rate_limited(ctx, req, "api", "api_key", key.id, "", key.seller_id);
    }
    http::send_problem(
        res, 429,
        by_session ? "rate limit exceeded for this user" : "rate limit exceeded for this API key");
    return std::nullopt;
  }
  if (!key.has(scope) || (operator_only && !key.is_operator())) {
    http::send_problem(res, 403,
                       by_session ? "this account lacks permission for the operation"
                                  : "this API key lacks permission for the operation");
    return std::nullopt;
  }
  return key;
}

// A request carrying the dashboard's session cookie and no Authorization header.
std::optional<ApiKey> authorise_session(IngestContext& ctx, const http::Request& req,
                                        http::Response& res, std::string_view token, Scope scope,
                                        bool operator_only) {
  SignedIn signed_in = find_signed_in(ctx, token);
  if (signed_in.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kCheckApiKey));
    return std::nullopt;
  }
  if (signed_in.status != StoreStatus::kOk) {
    answer_failed_api_auth(ctx, req, res, "invalid_session", "", nullptr,
                           "not signed in, or the session has ended");
    return std::nullopt;
  }
  if (session::changes_state(req.method()) &&
      !session::csrf_ok(signed_in.session, req.header(session::kCsrfHeader))) {
    AuditRecord r;
    r.event = AuditEvent::kAuthFailed;
    r.surface = "api";
    r.kind = "csrf";
    r.user_id = signed_in.user.id;
    r.seller_id = signed_in.user.seller_id;
    audit_request(ctx, req, r);
    http::send_problem(res, 403, "missing or wrong X-CSRF-Token for this session");
    return std::nullopt;
  }
  if (signed_in.enrol_only) {
    http::send_problem(res, 403, kEnrolFirst);
    return std::nullopt;
  }
  return limit_and_check(ctx, req, res, session::as_api_key(signed_in.user), scope, operator_only,
                         true);
}

}  // namespace

std::string client_of(const IngestContext& ctx, const http::Request& req) {
  if (ctx.config.trusted_proxies.empty()) return req.remote_addr();
  std::vector<std::string_view> forwarded;
  const std::size_t n = req.header_count("X-Forwarded-For");
  forwarded.reserve(n);
  for (std::size_t i = 0; i < n; ++i) forwarded.push_back(req.header("X-Forwarded-For", i));
  return http::client_address(req.remote_addr(), forwarded, ctx.config.trusted_proxies);
}

bool require_https(const IngestContext& ctx, const http::Request& req, http::Response& res) {
  if (req.tls()) return true;
  const bool forwarded = req.header("X-Forwarded-Proto") == "https" &&
                         http::address_in_cidrs(req.remote_addr(), ctx.config.trusted_proxies);
  if (!forwarded) http::send_problem(res, 403, "HTTPS required");
  return forwarded;
}

SignedIn find_signed_in(IngestContext& ctx, std::string_view token) {
  SignedIn out;
  out.status = StoreStatus::kNotFound;
  if (!passwords::is_token(token)) return out;
  const std::string hash = sha256_hex(token);
  Lookup<UserSession> found = ctx.sign_in.find_session(hash);
  if (!found.value) {
    out.status = found.status;
    return out;
  }
  const std::int64_t now = ctx.clock.now_ms();
  if (!session::live(*found.value, now)) {
    ctx.sign_in.delete_session(hash);
    return out;
  }
  Lookup<User> user = ctx.accounts.get_user(found.value->user_id);
  if (user.status == StoreStatus::kUnavailable) {
    out.status = StoreStatus::kUnavailable;
    return out;
  }
  if (!user.value || !user.value->active) return out;
  out.session = std::move(*found.value);
  out.user = std::move(*user.value);
  // Asked only when the setting is on, and for operators: other sessions pay no extra read.
  if (ctx.config.require_operator_2fa && out.user.is_operator()) {
    const Lookup<UserTotp> totp = ctx.sign_in.get_user_totp(out.user.id);
    if (totp.status == StoreStatus::kUnavailable) {
      out.status = StoreStatus::kUnavailable;
      return out;
    }
    out.enrol_only = !(totp.value && totp.value->enabled);
  }
  if (now - out.session.last_seen_at_ms >= session::kTouchEveryMs &&
      ctx.sign_in.touch_session(hash, now) == StoreStatus::kOk)
    out.session.last_seen_at_ms = now;
  out.status = StoreStatus::kOk;
  return out;
}

std::optional<ApiKey> authorise(IngestContext& ctx, const http::Request& req, http::Response& res,
                                Scope scope, bool operator_only) {
  if (!require_https(ctx, req, res)) return std::nullopt;
  const std::string_view auth = req.header("Authorization");
  if (auth.empty()) {
    if (const std::string_view token = session::token_of(req); !token.empty())
      return authorise_session(ctx, req, res, token, scope, operator_only);
  }
  std::string_view secret;
  std::optional<ApiKey> key;
  std::string_view kind = "missing_key";
  bool unavailable = false;  // the store could not say whether the key exists
  if (auth.size() > 7 && (auth.substr(0, 7) == "Bearer " || auth.substr(0, 7) == "bearer ")) {
    secret = auth.substr(7);
    while (!secret.empty() && secret.front() == ' ') secret.remove_prefix(1);
    kind = "unknown_key";
    // Only a well-formed key reaches the store; the lookup is by SHA-256, so timing reveals
    // nothing about stored keys.
    if (!secret.empty() && secret.size() <= 256) {
      const std::string hash = sha256_hex(secret);
      Lookup<ApiKey> found = ctx.api_keys.find_by_hash(hash);
      unavailable = found.status == StoreStatus::kUnavailable;
      key = std::move(found.value);
      if (key && !constant_time_equal(key->key_hash, hash)) key.reset();
      if (key && key->revoked_at_ms != 0) {
        answer_failed_api_auth(ctx, req, res, "revoked_key", "", &*key,
                               "invalid or revoked API key");
        return std::nullopt;
      }
    }
  }
  if (!key) {
    // A lookup the store could not answer is no answer: 503, never a 401, and no failure.
    if (unavailable) {
      send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kCheckApiKey));
      return std::nullopt;
    }
    answer_failed_api_auth(ctx, req, res, kind, secret, nullptr,
                           auth.empty() ? "missing API key (Authorization: Bearer <key>)"
                                        : "invalid or revoked API key");
    return std::nullopt;
  }
  // Its last use, for people (the dashboard's key list): written at most once a minute, and a
  // store that cannot take it refuses nothing.
  const std::int64_t now = ctx.clock.now_ms();
  if (now - key->last_used_at_ms >= kKeyTouchEveryMs &&
      ctx.accounts.touch_api_key(key->id, now) == StoreStatus::kOk) {
    key->last_used_at_ms = now;
    ctx.api_keys.used(key->key_hash, now);
  }
  return limit_and_check(ctx, req, res, std::move(*key), scope, operator_only, false);
}

bool answer_failed_campaign_auth(IngestContext& ctx, const http::Request& req, http::Response& res,
                                 const FailedCampaignAuth& failed, std::string_view message,
                                 bool may_block) {
  const std::string client = client_of(ctx, req);
  const std::optional<RateDecision> charged = charge_failure(ctx, client, may_block);
  if (!charged) return false;
  const RateDecision& d = *charged;
  http::set_rate_headers(res, d);
  audit_failure(ctx, req, client, "campaign", !d.allowed, failed.kind, failed.presented, "",
                failed.campaign_id, failed.seller_id);
  if (!d.allowed) {
    http::send_json(res, 429,
                    {{"status", "rate_limited"},
                     {"message", "too many failed authentications from this address"}});
    return true;
  }
  send_campaign_unauthorized(res, message);
  return true;
}

void send_campaign_unauthorized(http::Response& res, std::string_view message) {
  http::send_json(res, 401, {{"status", "unauthorized"}, {"message", message}});
}

void audit_rate_limited(IngestContext& ctx, const http::Request& req, std::string_view surface,
                        std::string_view kind, std::string_view key_id,
                        std::string_view campaign_id, std::string_view seller_id) {
  AuditRecord r;
  r.event = AuditEvent::kRateLimited;
  r.surface = surface;
  r.kind = kind;
  r.key_id = key_id;
  r.campaign_id = campaign_id;
  r.seller_id = seller_id;
  audit_request(ctx, req, r);
}

void audit_request(IngestContext& ctx, const http::Request& req, AuditRecord r) {
  std::string client;
  if (r.client.empty()) {
    client = client_of(ctx, req);
    r.client = client;
  }
  r.route = req.route();
  ctx.audit.record(r);
}

ChangeActor actor_of(const ApiKey& key) {
  const bool user = key.id.starts_with(kUserPrefix);
  return {key.id, key.name, user ? "dashboard" : "api"};
}

ChangeActor buyer_actor(const ApiKey& key) {
  ChangeActor by = actor_of(key);
  by.name = (by.name.empty() ? key.id : by.name) + " (buyer " + key.buyer_id + ")";
  return by;
}

}  // namespace leadflow
