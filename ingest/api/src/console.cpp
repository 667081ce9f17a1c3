// The dashboard's sign-in (/v1/session) and the operator's management of its users (/v1/users).
//
// Sign-in answers one generic 401 for an unknown e-mail, a wrong password and an inactive user,
// and checks a password in each case (against a hash of no account when there is no user), so
// neither the answer nor its timing tells whether an account exists. Every check of a password
// first reserves its place in the sign-in limits of the client's address and of the e-mail
// (SignInLimits), and gives it back only when the password was right: past either limit the
// answer is 429 with Retry-After and no password is checked, however many attempts arrive at
// once. Passwords and tokens are never logged.
#include "console.hpp"
#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/session.hpp"
#include "leadflow/management/passwords.hpp"
#include "versions.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::string_view kWrongCredentials = "wrong e-mail or password";

}  // namespace

void audit_console(IngestContext& ctx, const http::Request& req, AuditEvent event,
                   std::string_view kind, const User* user, const std::string& client) {
  AuditRecord r;
  r.event = event;
  r.surface = "console";
  r.kind = kind;
  r.client = client;
  if (user != nullptr) {
    r.user_id = user->id;
    r.seller_id = user->seller_id;
    r.buyer_id = user->buyer_id;
  }
  audit_request(ctx, req, r);
}

// Reserves the place of one attempt at a password of `email`'s account in the sign-in limits.
// False when the attempt may not be made, and then `res` is the answer (429 with Retry-After,
// audited, or 503), and no password may be checked.
bool reserve_attempt(IngestContext& ctx, const http::Request& req, http::Response& res,
                     const std::string& client, std::string_view email,
                     SignInLimits::Attempt& attempt) {
  attempt = ctx.logins.reserve(client, email);
  switch (attempt.decision.status) {
    case AttemptStatus::kReserved:
      return true;
    case AttemptStatus::kRefused:
      audit_console(ctx, req, AuditEvent::kRateLimited,
                    attempt.refused_by == SignInLimits::Limit::kPerAddress ? "login_per_address"
                                                                           : "login_per_account",
                    nullptr, client);
      res.set_header("Retry-After", std::to_string(attempt.decision.retry_after_s));
      http::send_problem(res, 429, "too many failed sign-ins; retry later");
      return false;
    case AttemptStatus::kUnavailable:
      break;
  }
  send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  return false;
}

void open_session(IngestContext& ctx, const http::Request& req, http::Response& res,
                  const User& user, const std::string& rehashed, std::string_view kind,
                  const std::string& client) {
  const std::int64_t now = ctx.clock.now_ms();
  // The rehash is written only over the hash that was checked (leadflow/store/store.hpp).
  const StoreStatus recorded = ctx.sign_in.record_login(user.id, now, rehashed, user.password_hash);
  if (recorded != StoreStatus::kOk)
    return send_problem(res, refusal_for(recorded, StoreStep::kWrite));
  // Housekeeping: sessions that ended without a logout leave the store here.
  ctx.sign_in.delete_expired_sessions(now, now - session::kIdleMs);
  const std::string token = passwords::new_token();
  const UserSession s = session::make(user.id, token, now);
  const StoreStatus made = ctx.sign_in.insert_session(s);
  if (made != StoreStatus::kOk) return send_problem(res, refusal_for(made, StoreStep::kWrite));
  audit_console(ctx, req, AuditEvent::kSignedIn, kind, &user, client);
  res.set_header("Set-Cookie", session::set_cookie(token, session::kAbsoluteMs / 1000));
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 201,
                  {{"user", session::signed_in_user(user)},
                   {"csrf_token", s.csrf_token},
                   {"two_factor", two_factor_state(ctx, user)}});
}

namespace {

void sign_in(IngestContext& ctx, const http::Request& req, http::Response& res) {
  if (!require_https(ctx, req, res) || !http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  for (const char* name : {"email", "password"}) {
    auto it = body->find(name);
    if (it == body->end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      errors.push_back(
          {name, it == body->end() ? "required" : "invalid_type", "is required, as a string"});
  }
  for (const auto& [k, v] : body->items())
    if (k != "email" && k != "password") errors.push_back({k, "unknown_field", "unknown field"});
  if (!errors.empty()) return http::send_problem(res, 400, "the sign-in is invalid", errors);
  const std::string email = normalise_email((*body)["email"].get<std::string>());
  const std::string& password = (*body)["password"].get_ref<const std::string&>();
  const std::string client = client_of(ctx, req);
  SignInLimits::Attempt attempt;
  if (!reserve_attempt(ctx, req, res, client, email, attempt)) return;

  const Lookup<User> found = ctx.accounts.find_user_by_email(email);
  if (found.status == StoreStatus::kUnavailable) {
    ctx.logins.succeeded(attempt);  // no password was checked: not a guess
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  }
  std::string_view failure;
  if (!found.value) {
    passwords::verify_nothing(password);  // as long as a wrong password takes
    failure = "unknown_user";
  } else if (!passwords::verify(found.value->password_hash, password)) {
    failure = "wrong_password";
  } else if (!found.value->active) {
    failure = "inactive_user";
  }
  if (!failure.empty()) {  // the attempt keeps its places
    audit_console(ctx, req, AuditEvent::kAuthFailed, failure, found.value ? &*found.value : nullptr,
                  client);
    return http::send_problem(res, 401, kWrongCredentials);
  }
  ctx.logins.succeeded(attempt);

  const User& user = *found.value;
  // A hash made under older limits is replaced now, while the password is at hand.
  std::string rehashed;
  if (passwords::needs_rehash(user.password_hash)) rehashed = passwords::hash(password);
  // A user with a second factor gets a challenge for it, not yet a session.
  if (begin_second_factor(ctx, res, user, rehashed)) return;
  open_session(ctx, req, res, user, rehashed, "password", client);
}

}  // namespace

std::optional<SignedIn> signed_in(IngestContext& ctx, const http::Request& req,
                                  http::Response& res) {
  if (!require_https(ctx, req, res)) return std::nullopt;
  const std::string_view token = session::token_of(req);
  SignedIn found;
  found.status = StoreStatus::kNotFound;
  if (!token.empty()) found = find_signed_in(ctx, token);
  if (found.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    return std::nullopt;
  }
  if (found.status != StoreStatus::kOk) {
    http::send_problem(res, 401, "not signed in, or the session has ended");
    return std::nullopt;
  }
  return found;
}

namespace {

void current_session(IngestContext& ctx, const http::Request& req, http::Response& res) {
  auto s = signed_in(ctx, req, res);
  if (!s) return;
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 200,
                  {{"user", session::signed_in_user(s->user)},
                   {"csrf_token", s->session.csrf_token},
                   {"two_factor", two_factor_state(ctx, s->user)}});
}

void sign_out(IngestContext& ctx, const http::Request& req, http::Response& res) {
  auto s = signed_in(ctx, req, res);
  if (!s) return;
  if (!session::csrf_ok(s->session, req.header(session::kCsrfHeader)))
    return http::send_problem(res, 403, "missing or wrong X-CSRF-Token for this session");
  const StoreStatus ended = ctx.sign_in.delete_session(s->session.token_hash);
  if (ended != StoreStatus::kOk && ended != StoreStatus::kNotFound)
    return send_problem(res, refusal_for(ended, StoreStep::kWrite));
  audit_console(ctx, req, AuditEvent::kSignedOut, "logout", &s->user, client_of(ctx, req));
  res.set_header("Set-Cookie", session::clear_cookie());
  http::send_json(res, 200, {{"success", true}});
}

// POST /v1/session/password: a signed-in user changes its own password. Only a session may (an
// API key has no password of its own: 403; no session: 401). The current password is checked as
// at sign-in: its attempt reserved first in the limits of the account and the address, kept when
// wrong, so this route cannot be used to guess passwords past the sign-in limits; past them the
// answer is 429 without checking the password.
void change_password(IngestContext& ctx, const http::Request& req, http::Response& res) {
  if (!require_https(ctx, req, res)) return;
  if (!req.header("Authorization").empty())
    return http::send_problem(res, 403,
                              "only a signed-in dashboard user can change its password; an API "
                              "key has none");
  auto s = signed_in(ctx, req, res);
  if (!s) return;
  if (!session::csrf_ok(s->session, req.header(session::kCsrfHeader)))
    return http::send_problem(res, 403, "missing or wrong X-CSRF-Token for this session");
  if (s->enrol_only) return http::send_problem(res, 403, kEnrolFirst);
  if (!http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  if (!body->is_object()) {
    errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return http::send_problem(res, 400, "the password change is invalid", errors);
  }
  for (const char* name : {"current_password", "new_password"}) {
    auto it = body->find(name);
    if (it == body->end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      errors.push_back(
          {name, it == body->end() ? "required" : "invalid_type", "is required, as a string"});
  }
  for (const auto& [k, v] : body->items())
    if (k != "current_password" && k != "new_password")
      errors.push_back({k, "unknown_field", "unknown field"});
  if (!errors.empty())
    return http::send_problem(res, 400, "the password change is invalid", errors);

  const User& user = s->user;
  const std::string client = client_of(ctx, req);
  SignInLimits::Attempt attempt;
  if (!reserve_attempt(ctx, req, res, client, user.email, attempt)) return;
  if (!passwords::verify(user.password_hash,
                         (*body)["current_password"].get_ref<const std::string&>())) {
    audit_console(ctx, req, AuditEvent::kAuthFailed, "wrong_password", &user, client);
    return http::send_problem(
        res, 400, "the password change is invalid",
        {{"current_password", "wrong", "is not the user's current password"}});
  }
  ctx.logins.succeeded(attempt);
  const Management::Created changed =
      ctx.management.change_password(user, (*body)["new_password"], s->session.token_hash);
  if (!changed.errors.empty())
    return http::send_problem(res, 400, "the password change is invalid", changed.errors);
  // Disabled (or removed) since its session was checked: disabling wins, nothing was changed.
  if (changed.status == StoreStatus::kNotFound)
    return http::send_problem(res, 401, "the user was disabled; nothing was changed");
  if (changed.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(changed.status, StoreStep::kWrite));
  audit_console(ctx, req, AuditEvent::kPasswordChanged, "self", &user, client);
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 200, {{"success", true}});
}

void answer_user(http::Response& res, const Management::Created& c, int status) {
  if (!c.errors.empty()) return http::send_problem(res, 400, "the user is invalid", c.errors);
  if (refuse_version(res, c, "user")) return;
  if (c.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(c.status, StoreStep::kWrite));
  if (c.version > 0) set_etag(res, c.version);
  http::send_json(res, status, {{"success", true}, {"data", c.body}});
}

}  // namespace

void register_console(Routes& routes, IngestContext& ctx) {
  auto& c = ctx;
  passwords::prepare();
  routes.post("/v1/session", [&c](const http::Request& q, http::Response& r) { sign_in(c, q, r); });
  routes.get("/v1/session",
             [&c](const http::Request& q, http::Response& r) { current_session(c, q, r); });
  routes.remove("/v1/session",
                [&c](const http::Request& q, http::Response& r) { sign_out(c, q, r); });
  routes.post("/v1/session/password",
              [&c](const http::Request& q, http::Response& r) { change_password(c, q, r); });
  register_two_factor(routes, ctx);

  routes.post("/v1/users", [&c](const http::Request& q, http::Response& r) {
    if (!authorise(c, q, r, kScopeAdmin, true) || !http::require_json(q, r)) return;
    if (auto body = http::parse_body(q, r)) answer_user(r, c.management.create_user(*body), 201);
  });
  routes.get("/v1/users", [&c](const http::Request& q, http::Response& r) {
    if (!authorise(c, q, r, kScopeAdmin, true)) return;
    json data = json::array();
    for (const auto& u : c.accounts.list_users()) data.push_back(user_to_json(u));
    http::send_json(r, 200, {{"success", true}, {"data", data}});
  });
  routes.put("/v1/users/{id}", [&c](const http::Request& q, http::Response& r) {
    if (!authorise(c, q, r, kScopeAdmin, true) || !http::require_json(q, r)) return;
    auto body = http::parse_body(q, r);
    if (!body) return;
    answer_user(r, c.management.update_user(std::string(q.match(1)), *body, if_match_of(q)), 200);
  });
  routes.get("/v1/users/{id}", [&c](const http::Request& q, http::Response& r) {
    if (!authorise(c, q, r, kScopeAdmin, true)) return;
    const Lookup<User> found = c.accounts.get_user(std::string(q.match(1)));
    if (!found.value)
      return send_problem(
          r, refusal_for(found.status == StoreStatus::kOk ? StoreStatus::kNotFound : found.status,
                         StoreStep::kRead));
    set_etag(r, found.value->version);
    http::send_json(r, 200, {{"success", true}, {"data", user_to_json(*found.value)}});
  });
}

}  // namespace leadflow
