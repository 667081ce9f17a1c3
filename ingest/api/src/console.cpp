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

#include <initializer_list>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/session.hpp"
#include "leadflow/management/passwords.hpp"
#include "two_factor.hpp"
#include "versions.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// {"email", "password"} or the password change's {"current_password", "new_password"}: each of
// `names` a non-empty string, and no other member. Each field at fault is added to `errors`.
void check_strings(const json& body, std::initializer_list<const char*> names,
                   FieldErrors& errors) {
  for (const char* name : names) {
    auto it = body.find(name);
    if (it == body.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      errors.push_back(
          {name, it == body.end() ? "required" : "invalid_type", "is required, as a string"});
  }
  for (const auto& [k, v] : body.items()) {
    bool known = false;
    for (const char* name : names) known = known || k == name;
    if (!known) errors.push_back({k, "unknown_field", "unknown field"});
  }
}

}  // namespace

SignInPorts sign_in_ports(IngestContext& ctx, const http::Request& req) {
  return {ctx.accounts,
          ctx.sign_in,
          ctx.logins,
          ctx.management,
          ctx.clock,
          client_of(ctx, req),
          [&ctx, &req](const AuditRecord& r) { audit_request(ctx, req, r); },
          [&ctx](std::string_view token) { return find_signed_in(ctx, token); },
          [&ctx](http::Response& res, const User& user, const std::string& rehashed) {
            return begin_second_factor(ctx.sign_in, ctx.clock, res, user, rehashed);
          },
          [&ctx](const User& user) {
            return two_factor_state(ctx.sign_in, ctx.config.require_operator_2fa, user);
          }};
}

void audit_console(const SignInPorts& ports, AuditEvent event, std::string_view kind,
                   const User* user) {
  AuditRecord r;
  r.event = event;
  r.surface = "console";
  r.kind = kind;
  r.client = ports.client;
  if (user != nullptr) {
    r.user_id = user->id;
    r.seller_id = user->seller_id;
    r.buyer_id = user->buyer_id;
  }
  ports.audit(r);
}

bool reserve_attempt(const SignInPorts& ports, http::Response& res, std::string_view email,
                     SignInLimits::Attempt& attempt) {
  attempt = ports.logins.reserve(ports.client, email);
  switch (attempt.decision.status) {
    case AttemptStatus::kReserved:
      return true;
    case AttemptStatus::kRefused:
      audit_console(ports, AuditEvent::kRateLimited,
                    attempt.refused_by == SignInLimits::Limit::kPerAddress ? "login_per_address"
                                                                           : "login_per_account",
                    nullptr);
      res.set_header("Retry-After", std::to_string(attempt.decision.retry_after_s));
      send_problem(res, refusal_for(SignInRefused::kTooManyAttempts));
      return false;
    case AttemptStatus::kUnavailable:
      break;
  }
  send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  return false;
}

void open_session(const SignInPorts& ports, http::Response& res, const User& user,
                  const std::string& rehashed, std::string_view kind) {
  const std::int64_t now = ports.clock.now_ms();
  // The rehash is written only over the hash that was checked (leadflow/store/store.hpp).
  const StoreStatus recorded =
      ports.sign_in.record_login(user.id, now, rehashed, user.password_hash);
  if (recorded != StoreStatus::kOk)
    return send_problem(res, refusal_for(recorded, StoreStep::kWrite));
  // Housekeeping: sessions that ended without a logout leave the store here.
  ports.sign_in.delete_expired_sessions(now, now - session::kIdleMs);
  const std::string token = passwords::new_token();
  const UserSession s = session::make(user.id, token, now);
  const StoreStatus made = ports.sign_in.insert_session(s);
  if (made != StoreStatus::kOk) return send_problem(res, refusal_for(made, StoreStep::kWrite));
  audit_console(ports, AuditEvent::kSignedIn, kind, &user);
  res.set_header("Set-Cookie", session::set_cookie(token, session::kAbsoluteMs / 1000));
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 201,
                  {{"user", session::signed_in_user(user)},
                   {"csrf_token", s.csrf_token},
                   {"two_factor", ports.two_factor(user)}});
}

void answer_sign_in(const SignInPorts& ports, const http::Request& req, http::Response& res) {
  if (!http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  check_strings(*body, {"email", "password"}, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "the sign-in is invalid", errors);
  const std::string email = normalise_email((*body)["email"].get<std::string>());
  const std::string& password = (*body)["password"].get_ref<const std::string&>();
  SignInLimits::Attempt attempt;
  if (!reserve_attempt(ports, res, email, attempt)) return;

  const Lookup<User> found = ports.accounts.find_user_by_email(email);
  if (found.status == StoreStatus::kUnavailable) {
    ports.logins.succeeded(attempt);  // no password was checked: not a guess
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
    audit_console(ports, AuditEvent::kAuthFailed, failure, found.value ? &*found.value : nullptr);
    return send_problem(res, refusal_for(SignInRefused::kWrongCredentials));
  }
  ports.logins.succeeded(attempt);

  const User& user = *found.value;
  // A hash made under older limits is replaced now, while the password is at hand.
  std::string rehashed;
  if (passwords::needs_rehash(user.password_hash)) rehashed = passwords::hash(password);
  // A user with a second factor gets a challenge for it, not yet a session.
  if (ports.second_factor(res, user, rehashed)) return;
  open_session(ports, res, user, rehashed, "password");
}

std::optional<SignedIn> signed_in(const SignInPorts& ports, const http::Request& req,
                                  http::Response& res) {
  const std::string_view token = session::token_of(req);
  SignedIn found;
  found.status = StoreStatus::kNotFound;
  if (!token.empty()) found = ports.find_session(token);
  if (found.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    return std::nullopt;
  }
  if (found.status != StoreStatus::kOk) {
    send_problem(res, refusal_for(SignInRefused::kNotSignedIn));
    return std::nullopt;
  }
  return found;
}

void answer_session(const SignInPorts& ports, const http::Request& req, http::Response& res) {
  auto s = signed_in(ports, req, res);
  if (!s) return;
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 200,
                  {{"user", session::signed_in_user(s->user)},
                   {"csrf_token", s->session.csrf_token},
                   {"two_factor", ports.two_factor(s->user)}});
}

void answer_sign_out(const SignInPorts& ports, const http::Request& req, http::Response& res) {
  auto s = signed_in(ports, req, res);
  if (!s) return;
  if (!session::csrf_ok(s->session, req.header(session::kCsrfHeader)))
    return send_problem(res, refusal_for(SignInRefused::kCsrf));
  const StoreStatus ended = ports.sign_in.delete_session(s->session.token_hash);
  if (ended != StoreStatus::kOk && ended != StoreStatus::kNotFound)
    return send_problem(res, refusal_for(ended, StoreStep::kWrite));
  audit_console(ports, AuditEvent::kSignedOut, "logout", &s->user);
  res.set_header("Set-Cookie", session::clear_cookie());
  http::send_json(res, 200, {{"success", true}});
}

namespace {

// The start of a change a session makes to its own user (its password, its time zone): refused
// for an API key (`for_key`: a key has no user of its own), then a session with its CSRF token,
// past two-factor enrolment, and a JSON object body (else a 400 titled `invalid`).
struct OwnChange : SignedIn {
  nlohmann::json body;
};
std::optional<OwnChange> own_change(const SignInPorts& ports, const http::Request& req,
                                    http::Response& res, SignInRefused for_key,
                                    const char* invalid) {
  if (!req.header("Authorization").empty()) {
    send_problem(res, refusal_for(for_key));
    return std::nullopt;
  }
  auto s = signed_in(ports, req, res);
  if (!s) return std::nullopt;
  if (!session::csrf_ok(s->session, req.header(session::kCsrfHeader))) {
    send_problem(res, refusal_for(SignInRefused::kCsrf));
    return std::nullopt;
  }
  if (s->enrol_only) {
    send_problem(res, refusal_for(SignInRefused::kEnrolFirst));
    return std::nullopt;
  }
  if (!http::require_json(req, res)) return std::nullopt;
  auto body = http::parse_body(req, res);
  if (!body) return std::nullopt;
  if (!body->is_object()) {
    http::send_problem(res, 400, invalid, {{"body", "invalid_type", "must be a JSON object"}});
    return std::nullopt;
  }
  return OwnChange{{std::move(*s)}, std::move(*body)};
}

}  // namespace

// Only a session may change its user's password (an API key has no password of its own: 403;
// no session: 401). The current password is checked as at sign-in: its attempt reserved first
// in the limits of the account and the address, kept when wrong, so this route cannot be used
// to guess passwords past the sign-in limits; past them the answer is 429 without checking the
// password.
void answer_password_change(const SignInPorts& ports, const http::Request& req,
                            http::Response& res) {
  auto s = own_change(ports, req, res, SignInRefused::kKeyHasNoPassword,
                      "the password change is invalid");
  if (!s) return;
  const auto body = &s->body;
  FieldErrors errors;
  check_strings(*body, {"current_password", "new_password"}, errors);
  if (!errors.empty())
    return http::send_problem(res, 400, "the password change is invalid", errors);

  const User& user = s->user;
  SignInLimits::Attempt attempt;
  if (!reserve_attempt(ports, res, user.email, attempt)) return;
  if (!passwords::verify(user.password_hash,
                         (*body)["current_password"].get_ref<const std::string&>())) {
    audit_console(ports, AuditEvent::kAuthFailed, "wrong_password", &user);
    return send_problem(res, refusal_for(SignInRefused::kWrongCurrentPassword));
  }
  ports.logins.succeeded(attempt);
  const Management::Created changed = ports.management.change_password(
      user, (*body)["new_password"], s->session.token_hash, {user.id, user.name, "dashboard"});
  if (!changed.errors.empty())
    return http::send_problem(res, 400, "the password change is invalid", changed.errors);
  // Disabled (or removed) since its session was checked: disabling wins, nothing was changed.
  if (changed.status == StoreStatus::kNotFound)
    return send_problem(res, refusal_for(SignInRefused::kUserDisabled));
  if (changed.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(changed.status, StoreStep::kWrite));
  audit_console(ports, AuditEvent::kPasswordChanged, "self", &user);
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 200, {{"success", true}});
}

// A preference of the session's own user, so like the password: a session only (a key has no
// user: 403), with its CSRF token. The zone is checked against the zone database by Management.
void answer_time_zone_change(const SignInPorts& ports, const http::Request& req,
                             http::Response& res) {
  auto s =
      own_change(ports, req, res, SignInRefused::kKeyHasNoTimeZone, "the time zone is invalid");
  if (!s) return;
  const auto body = &s->body;
  FieldErrors errors;
  for (const auto& [k, v] : body->items())
    if (k != "time_zone") errors.push_back({k, "unknown_field", "unknown field"});
  if (!body->contains("time_zone"))
    errors.push_back({"time_zone", "required", "is required, as a string"});
  if (!errors.empty()) return http::send_problem(res, 400, "the time zone is invalid", errors);
  const Management::Created set = ports.management.set_time_zone(s->user, (*body)["time_zone"]);
  if (!set.errors.empty())
    return http::send_problem(res, 400, "the time zone is invalid", set.errors);
  if (set.status == StoreStatus::kNotFound)
    return send_problem(res, refusal_for(SignInRefused::kUserDisabled));
  if (set.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(set.status, StoreStep::kWrite));
  audit_console(ports, AuditEvent::kTimeZoneChanged, "self", &s->user);
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 200, {{"success", true}, {"time_zone", set.body}});
}

namespace {

// The operator's alone, whatever scopes another key holds.
bool refuse_unless_operator(const ApiKey& key, http::Response& res) {
  if (key.is_operator() && key.has(kScopeAdmin)) return false;
  send_problem(res, refusal_for(SignInRefused::kNotOperator));
  return true;
}

void send_user_change(http::Response& res, const Management::Created& c, int status) {
  if (!c.errors.empty()) return http::send_problem(res, 400, "the user is invalid", c.errors);
  if (refuse_version(res, c, "user")) return;
  if (c.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(c.status, StoreStep::kWrite));
  if (c.version > 0) set_etag(res, c.version);
  http::send_json(res, status, {{"success", true}, {"data", c.body}});
}

}  // namespace

void answer_create_user(const UserPorts& ports, const ApiKey& key, const http::Request& req,
                        http::Response& res) {
  if (refuse_unless_operator(key, res) || !http::require_json(req, res)) return;
  if (auto body = http::parse_body(req, res))
    send_user_change(res, ports.management.create_user(*body, actor_of(key)), 201);
}

void answer_users(const UserPorts& ports, const ApiKey& key, http::Response& res) {
  if (refuse_unless_operator(key, res)) return;
  const auto users = ports.accounts.list_users();
  if (!users) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  json data = json::array();
  for (const auto& u : *users) data.push_back(user_to_json(u));
  http::send_json(res, 200, {{"success", true}, {"data", data}});
}

void answer_user(const UserPorts& ports, const ApiKey& key, const std::string& id,
                 http::Response& res) {
  if (refuse_unless_operator(key, res)) return;
  const Lookup<User> found = ports.accounts.get_user(id);
  if (!found.value)
    return send_problem(
        res, refusal_for(found.status == StoreStatus::kOk ? StoreStatus::kNotFound : found.status,
                         StoreStep::kRead));
  set_etag(res, found.value->version);
  http::send_json(res, 200, {{"success", true}, {"data", user_to_json(*found.value)}});
}

void answer_update_user(const UserPorts& ports, const ApiKey& key, const std::string& id,
                        const http::Request& req, http::Response& res) {
  if (refuse_unless_operator(key, res) || !http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  send_user_change(res, ports.management.update_user(id, *body, if_match_of(req), actor_of(key)),
                   200);
}

void register_console(Routes& routes, IngestContext& ctx) {
  auto& c = ctx;
  passwords::prepare();
  // Each session route over HTTPS only, then its handler on the request's ports.
  const auto session_route = [&c](auto answer) {
    return [&c, answer](const http::Request& q, http::Response& r) {
      if (require_https(c, q, r)) answer(sign_in_ports(c, q), q, r);
    };
  };
  routes.post("/v1/session", session_route(answer_sign_in));
  routes.get("/v1/session", session_route(answer_session));
  routes.remove("/v1/session", session_route(answer_sign_out));
  routes.post("/v1/session/password", session_route(answer_password_change));
  routes.put("/v1/session/time-zone", session_route(answer_time_zone_change));
  register_two_factor(routes, ctx);

  const UserPorts users{c.accounts, c.management};
  routes.post("/v1/users", [&c, users](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(c, q, r, kScopeAdmin, true))
      answer_create_user(users, *key, q, r);
  });
  routes.get("/v1/users", [&c, users](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(c, q, r, kScopeAdmin, true)) answer_users(users, *key, r);
  });
  routes.put("/v1/users/{id}", [&c, users](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(c, q, r, kScopeAdmin, true))
      answer_update_user(users, *key, std::string(q.match(1)), q, r);
  });
  routes.get("/v1/users/{id}", [&c, users](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(c, q, r, kScopeAdmin, true))
      answer_user(users, *key, std::string(q.match(1)), r);
  });
}

}  // namespace leadflow
