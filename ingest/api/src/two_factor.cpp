// The dashboard's second factor (docs/two-factor.md): the sign-in's second step, a user's own
// enrolment and its end, and the operator's reset of another user's.
//
// The sign-in's second step takes the challenge the password step gave and a current code or an
// unused recovery code. A wrong one counts against the sign-in limits exactly as a wrong password
// does (its place in the limits is reserved before the check and kept), so the limits bound guesses
// of codes as they bound guesses of passwords. A code is accepted once: the store records the time
// step of the last one accepted and refuses any step not after it.
//
// The handlers decode, call and encode on TwoFactorPorts; the routes refuse plain HTTP (the
// operator's reset: authorise, with admin) and bind the ports of the request.
#include "two_factor.hpp"

#include <initializer_list>
#include <optional>
#include <string>

#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/session.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/management/passwords.hpp"
#include "leadflow/management/two_factor.hpp"

namespace leadflow {
namespace {

using nlohmann::json;
namespace tf = two_factor;

constexpr std::string_view kChallengeEnded =
    "the sign-in has expired or its challenge was used; sign in again with the password";
constexpr std::string_view kUnreadableSecret =
    "the two-factor secret cannot be opened with this installation's LEADFLOW_TOTP_KEY_FILE";

// A body that is an object of strings: `required` fields, at most one of `one_of` (exactly one
// when `need_one`), nothing else. Errors go to `errors`.
void check_strings(const json& body, std::initializer_list<const char*> required,
                   std::initializer_list<const char*> one_of, bool need_one, FieldErrors& errors) {
  if (!body.is_object()) {
    errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return;
  }
  const auto check = [&](const char* name, bool needed) {
    auto it = body.find(name);
    if (it == body.end()) {
      if (needed) errors.push_back({name, "required", "is required, as a string"});
      return false;
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      errors.push_back({name, "invalid_type", "must be a non-empty string"});
      return false;
    }
    return true;
  };
  for (const char* name : required) check(name, true);
  int given = 0;
  for (const char* name : one_of) given += body.contains(name) ? 1 : 0;
  for (const char* name : one_of) check(name, false);
  if (need_one && given != 1)
    errors.push_back({"code", given == 0 ? "required" : "conflict",
                      "give exactly one of \"code\" and \"recovery_code\""});
  for (const auto& [k, v] : body.items()) {
    bool known = false;
    for (const char* name : required) known = known || k == name;
    for (const char* name : one_of) known = known || k == name;
    if (!known) errors.push_back({k, "unknown_field", "unknown field"});
  }
}

std::string text_of(const json& body, const char* name) {
  auto it = body.find(name);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The one place a wrong second factor (or the password that guards turning it off) is
// recorded: the attempt's places in the sign-in limits (the account's and the address's,
// reserved by reserve_attempt before the check, as for a password at sign-in) stay taken.
void count_failed_attempt(const TwoFactorPorts& ports, const User& user, std::string_view kind) {
  audit_console(ports, AuditEvent::kAuthFailed, kind, &user);
}

enum class Proof { kAccepted, kWrong, kUnreadable, kUnavailable };

// Checks and uses the body's "code" (a current code, not accepted before) or "recovery_code"
// (unused) against `t`. `kind` is set to what was given: totp or recovery_code.
Proof use_second_factor(const TwoFactorPorts& ports, const UserTotp& t, const json& body,
                        std::string_view& kind) {
  StoreStatus used = StoreStatus::kNotFound;
  if (body.contains("code")) {
    kind = "totp";
    const std::optional<std::string> secret = tf::SecretBox(ports.totp_key).open(t.sealed_secret);
    if (!secret) return Proof::kUnreadable;
    const auto step = tf::matching_step(*secret, text_of(body, "code"), ports.clock.now_ms());
    if (!step) return Proof::kWrong;
    used = ports.sign_in.accept_user_totp_step(t.user_id, *step);  // kNotFound: used before
  } else {
    kind = "recovery_code";
    const std::string hash = tf::recovery_code_hash(t.user_id, text_of(body, "recovery_code"));
    if (hash.empty()) return Proof::kWrong;
    used = ports.sign_in.use_recovery_code(t.user_id, hash, ports.clock.now_ms());
  }
  if (used == StoreStatus::kOk) return Proof::kAccepted;
  return used == StoreStatus::kNotFound ? Proof::kWrong : Proof::kUnavailable;
}

// The signed-in user of a state-changing call about its own second factor: a session (an API
// key has no second factor: 403) with its CSRF token; otherwise `res` is the answer. (The route
// has refused plain HTTP.)
std::optional<SignedIn> own_session(const TwoFactorPorts& ports, const http::Request& req,
                                    http::Response& res) {
  if (!req.header("Authorization").empty()) {
    http::send_problem(res, 403,
                       "only a signed-in dashboard user has a second factor; an API key has none");
    return std::nullopt;
  }
  auto s = signed_in(ports, req, res);
  if (!s) return std::nullopt;
  if (!session::csrf_ok(s->session, req.header(session::kCsrfHeader))) {
    http::send_problem(res, 403, "missing or wrong X-CSRF-Token for this session");
    return std::nullopt;
  }
  return s;
}

}  // namespace

void answer_second_factor(const TwoFactorPorts& ports, const http::Request& req,
                          http::Response& res) {
  if (!http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  check_strings(*body, {"challenge"}, {"code", "recovery_code"}, true, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "the second factor is invalid", errors);

  const Lookup<UserTotp> t =
      ports.sign_in.find_user_totp_by_challenge(sha256_hex(text_of(*body, "challenge")));
  if (t.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  if (!t.value || !t.value->enabled || t.value->challenge_expires_at_ms <= ports.clock.now_ms())
    return http::send_problem(res, 401, kChallengeEnded);
  const Lookup<User> user = ports.accounts.get_user(t.value->user_id);
  if (user.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  if (!user.value || !user.value->active) return http::send_problem(res, 401, kChallengeEnded);
  SignInLimits::Attempt attempt;
  if (!reserve_attempt(ports, res, user.value->email, attempt)) return;

  std::string_view kind;
  switch (use_second_factor(ports, *t.value, *body, kind)) {
    case Proof::kAccepted:
      break;
    case Proof::kWrong:
      count_failed_attempt(ports, *user.value, "wrong_code");
      return http::send_problem(res, 401, "wrong or already used code");
    case Proof::kUnreadable:
      return http::send_problem(res, 503, kUnreadableSecret);
    case Proof::kUnavailable:
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite));
  }
  ports.logins.succeeded(attempt);
  // The challenge is used once: of two calls with it, one opens a session.
  const StoreStatus taken =
      ports.sign_in.take_user_totp_challenge(t.value->user_id, t.value->challenge_hash);
  if (taken == StoreStatus::kNotFound) return http::send_problem(res, 401, kChallengeEnded);
  if (taken != StoreStatus::kOk) return send_problem(res, refusal_for(taken, StoreStep::kWrite));
  open_session(ports, res, *user.value, "", kind);
}

void answer_two_factor_enrol(const TwoFactorPorts& ports, const http::Request& req,
                             http::Response& res) {
  auto s = own_session(ports, req, res);
  if (!s) return;
  const std::string secret = tf::new_secret();
  UserTotp t;
  t.user_id = s->user.id;
  t.sealed_secret = tf::SecretBox(ports.totp_key).seal(secret);
  t.created_at_ms = ports.clock.now_ms();
  const StoreStatus begun = ports.sign_in.begin_user_totp(t);
  if (begun == StoreStatus::kConflict)
    return http::send_problem(res, 409,
                              "two-factor sign-in is on already; turn it off before enrolling "
                              "again");
  if (begun != StoreStatus::kOk) return send_problem(res, refusal_for(begun, StoreStep::kWrite));
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 201,
                  {{"secret", tf::base32_encode(secret)},
                   {"otpauth_uri", tf::otpauth_uri(s->user.email, secret)}});
}

void answer_two_factor_confirm(const TwoFactorPorts& ports, const http::Request& req,
                               http::Response& res) {
  auto s = own_session(ports, req, res);
  if (!s || !http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  check_strings(*body, {"code"}, {}, false, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "the confirmation is invalid", errors);
  const Lookup<UserTotp> t = ports.sign_in.get_user_totp(s->user.id);
  if (t.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  if (!t.value || t.value->enabled)
    return http::send_problem(res, 409,
                              "no enrolment waits for a code; start one with POST "
                              "/v1/session/two-factor/enrol");
  const std::optional<std::string> secret =
      tf::SecretBox(ports.totp_key).open(t.value->sealed_secret);
  if (!secret) return http::send_problem(res, 503, kUnreadableSecret);
  const auto step = tf::matching_step(*secret, text_of(*body, "code"), ports.clock.now_ms());
  if (!step)
    return http::send_problem(
        res, 400, "the confirmation is invalid",
        {{"code", "wrong", "is not the current code of the new secret; check the device's clock"}});
  const std::vector<std::string> codes = tf::new_recovery_codes();
  std::vector<std::string> hashes;
  for (const auto& c : codes) hashes.push_back(tf::recovery_code_hash(s->user.id, c));
  const StoreStatus enabled = ports.sign_in.enable_user_totp(s->user.id, *step, hashes);
  if (enabled == StoreStatus::kNotFound)
    return http::send_problem(res, 409, "the enrolment was confirmed or replaced meanwhile");
  if (enabled != StoreStatus::kOk)
    return send_problem(res, refusal_for(enabled, StoreStep::kWrite));
  audit_console(ports, AuditEvent::kTwoFactorEnabled, "self", &s->user);
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, 200, {{"recovery_codes", codes}, {"two_factor", ports.two_factor(s->user)}});
}

void answer_two_factor_disable(const TwoFactorPorts& ports, const http::Request& req,
                               http::Response& res) {
  auto s = own_session(ports, req, res);
  if (!s || !http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  check_strings(*body, {"password"}, {"code", "recovery_code"}, true, errors);
  if (!errors.empty())
    return http::send_problem(res, 400, "turning two-factor sign-in off is invalid", errors);
  const Lookup<UserTotp> t = ports.sign_in.get_user_totp(s->user.id);
  if (t.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  if (!t.value || !t.value->enabled)
    return http::send_problem(res, 409, "two-factor sign-in is not on for this user");
  SignInLimits::Attempt attempt;
  if (!reserve_attempt(ports, res, s->user.email, attempt)) return;
  if (!passwords::verify(s->user.password_hash, text_of(*body, "password"))) {
    count_failed_attempt(ports, s->user, "wrong_password");
    return http::send_problem(res, 400, "turning two-factor sign-in off is invalid",
                              {{"password", "wrong", "is not the user's password"}});
  }
  std::string_view kind;
  switch (use_second_factor(ports, *t.value, *body, kind)) {
    case Proof::kAccepted:
      break;
    case Proof::kWrong:
      count_failed_attempt(ports, s->user, "wrong_code");
      return http::send_problem(
          res, 400, "turning two-factor sign-in off is invalid",
          {{kind == "totp" ? "code" : "recovery_code", "wrong", "is wrong or was used already"}});
    case Proof::kUnreadable:
      return http::send_problem(res, 503, kUnreadableSecret);
    case Proof::kUnavailable:
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite));
  }
  ports.logins.succeeded(attempt);
  const StoreStatus removed = ports.sign_in.delete_user_totp(s->user.id);
  if (removed != StoreStatus::kOk && removed != StoreStatus::kNotFound)
    return send_problem(res, refusal_for(removed, StoreStep::kWrite));
  audit_console(ports, AuditEvent::kTwoFactorDisabled, "self", &s->user);
  http::send_json(res, 200, {{"success", true}, {"two_factor", ports.two_factor(s->user)}});
}

// DELETE /v1/users/{id}/two-factor: an operator turns off another user's second factor (a lost
// device and no recovery code left). Audited with the operator's key (a session's is its user).
void answer_two_factor_reset(const TwoFactorPorts& ports, const ApiKey& key, const std::string& id,
                             http::Response& res) {
  const Lookup<User> user = ports.accounts.get_user(id);
  if (user.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  if (!user.value) return http::send_problem(res, 404, "no such user");
  const StoreStatus removed = ports.sign_in.delete_user_totp(id);
  if (removed == StoreStatus::kNotFound)
    return http::send_problem(res, 404, "the user has no second factor");
  if (removed != StoreStatus::kOk)
    return send_problem(res, refusal_for(removed, StoreStep::kWrite));
  AuditRecord r;
  r.event = AuditEvent::kTwoFactorDisabled;
  r.surface = "api";
  r.kind = "operator_reset";
  r.user_id = id;
  r.actor_key_id = key.id;
  ports.audit(r);
  http::send_json(res, 200, {{"success", true}});
}

bool begin_second_factor(SignInStore& sign_in, const Clock& clock, http::Response& res,
                         const User& user, const std::string& rehashed) {
  const Lookup<UserTotp> t = sign_in.get_user_totp(user.id);
  if (t.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    return true;
  }
  if (!t.value || !t.value->enabled) return false;
  // The new hash is stored now, while the password is at hand; the sign-in itself is recorded
  // after the second step, so the last sign-in time stays as it was.
  if (!rehashed.empty())
    sign_in.record_login(user.id, user.last_login_at_ms, rehashed, user.password_hash);
  const std::string token = passwords::new_token();
  const StoreStatus set = sign_in.set_user_totp_challenge(user.id, sha256_hex(token),
                                                          clock.now_ms() + tf::kChallengeMs);
  if (set != StoreStatus::kOk) {
    // kNotFound: turned off between the two reads; the user signs in again.
    send_problem(res, refusal_for(set == StoreStatus::kNotFound ? StoreStatus::kUnavailable : set,
                                  StoreStep::kWrite));
    return true;
  }
  res.set_header("Cache-Control", "no-store");
  http::send_json(
      res, 200,
      {{"second_factor", "totp"}, {"challenge", token}, {"expires_in", tf::kChallengeMs / 1000}});
  return true;
}

json two_factor_state(SignInStore& sign_in, bool operators_must_enrol, const User& user) {
  const Lookup<UserTotp> t = sign_in.get_user_totp(user.id);
  const bool enabled = t.value && t.value->enabled;
  return {{"enabled", enabled},
          {"required", operators_must_enrol && user.is_operator()},
          {"recovery_codes_left", enabled ? t.value->recovery_codes_left : 0}};
}

void register_two_factor(Routes& routes, IngestContext& ctx) {
  auto& c = ctx;
  // Each route over HTTPS only, then its handler on the request's ports.
  const auto session_route = [&c](auto answer) {
    return [&c, answer](const http::Request& q, http::Response& r) {
      if (require_https(c, q, r))
        answer(TwoFactorPorts{sign_in_ports(c, q), c.config.totp_key}, q, r);
    };
  };
  routes.post("/v1/session/second-factor", session_route(answer_second_factor));
  routes.post("/v1/session/two-factor/enrol", session_route(answer_two_factor_enrol));
  routes.post("/v1/session/two-factor/confirm", session_route(answer_two_factor_confirm));
  routes.post("/v1/session/two-factor/disable", session_route(answer_two_factor_disable));
  routes.remove("/v1/users/{id}/two-factor", [&c](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(c, q, r, kScopeAdmin, true))
      answer_two_factor_reset(TwoFactorPorts{sign_in_ports(c, q), c.config.totp_key}, *key,
                              std::string(q.match(1)), r);
  });
}

}  // namespace leadflow
