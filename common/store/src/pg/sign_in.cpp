// The PostgreSQL adapter of the sign-in port (leadflow/store/sign_in.hpp): dashboard sign-ins,
// sessions and second factors.
#include "pg/adapter.hpp"

namespace leadflow::pg {

StoreStatus PgStore::record_login(std::string_view user_id, std::int64_t at_ms,
                                  std::string_view rehashed, std::string_view verified) {
  return changed_one(
      "record_login",
      "UPDATE users SET last_login_at = $2,"
      " password_hash = CASE WHEN $3 <> '' AND password_hash = $4 THEN $3 ELSE password_hash END"
      " WHERE id = $1 RETURNING 1",
      Params().add(user_id).add(at_ms).add(rehashed).add(verified));
}

StoreStatus PgStore::insert_session(const UserSession& s) {
  return write("insert_session",
               "INSERT INTO user_sessions (" LF_SESSION_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6)",
               Params()
                   .add(s.token_hash)
                   .add(s.user_id)
                   .add(s.csrf_token)
                   .add(s.created_at_ms)
                   .add(s.expires_at_ms)
                   .add(s.last_seen_at_ms));
}

Lookup<UserSession> PgStore::find_session(std::string_view token_hash) {
  return lookup<UserSession>(
      "find_session", "SELECT " LF_SESSION_COLUMNS " FROM user_sessions WHERE token_hash = $1",
      Params().add(token_hash), read_session<Row>);
}

StoreStatus PgStore::touch_session(std::string_view token_hash, std::int64_t at_ms) {
  return changed_one("touch_session",
                     "UPDATE user_sessions SET last_seen_at = $2 WHERE token_hash = $1 RETURNING 1",
                     Params().add(token_hash).add(at_ms));
}

StoreStatus PgStore::delete_session(std::string_view token_hash) {
  return changed_one("delete_session",
                     "DELETE FROM user_sessions WHERE token_hash = $1 RETURNING 1",
                     Params().add(token_hash));
}

StoreStatus PgStore::delete_user_sessions(std::string_view user_id) {
  return write("delete_user_sessions", "DELETE FROM user_sessions WHERE user_id = $1",
               Params().add(user_id));
}

StoreStatus PgStore::delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) {
  return write("delete_expired_sessions",
               "DELETE FROM user_sessions WHERE expires_at <= $1 OR last_seen_at < $2",
               Params().add(now_ms).add(idle_before_ms));
}

Lookup<UserTotp> PgStore::get_user_totp(std::string_view user_id) {
  return lookup<UserTotp>("get_user_totp", LF_USER_TOTP_SELECT " WHERE user_id = $1",
                          Params().add(user_id), read_user_totp<Row>);
}

Lookup<UserTotp> PgStore::find_user_totp_by_challenge(std::string_view challenge_hash) {
  return lookup<UserTotp>("find_user_totp_by_challenge",
                          LF_USER_TOTP_SELECT " WHERE challenge_hash = $1 AND challenge_hash <> ''",
                          Params().add(challenge_hash), read_user_totp<Row>);
}

StoreStatus PgStore::begin_user_totp(const UserTotp& t) {
  return run("begin_user_totp", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    // An enabled second factor is never replaced here: it is turned off first.
    const Result r = c.exec(
        "INSERT INTO user_totp (user_id, sealed_secret, enabled, last_step, created_at)"
        " VALUES ($1, $2, FALSE, 0, $3) ON CONFLICT (user_id) DO UPDATE SET"
        " sealed_secret = excluded.sealed_secret, last_step = 0,"
        " created_at = excluded.created_at, challenge_hash = '', challenge_expires_at = 0"
        " WHERE NOT user_totp.enabled RETURNING 1",
        Params().add(t.user_id).add(t.sealed_secret).add(t.created_at_ms), Effect::kWrite);
    if (r.rows() == 0) return StoreStatus::kConflict;  // the transaction rolls back
    c.exec("DELETE FROM user_recovery_codes WHERE user_id = $1", Params().add(t.user_id),
           Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

StoreStatus PgStore::enable_user_totp(std::string_view user_id, std::int64_t step,
                                      const std::vector<std::string>& recovery_hashes) {
  return run("enable_user_totp", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    const Result r = c.exec(
        "UPDATE user_totp SET enabled = TRUE, last_step = $2"
        " WHERE user_id = $1 AND NOT enabled RETURNING 1",
        Params().add(user_id).add(step), Effect::kWrite);
    if (r.rows() == 0) return StoreStatus::kNotFound;  // the transaction rolls back
    c.exec("DELETE FROM user_recovery_codes WHERE user_id = $1", Params().add(user_id),
           Effect::kWrite);
    for (const std::string& h : recovery_hashes)
      c.exec("INSERT INTO user_recovery_codes (user_id, code_hash) VALUES ($1, $2)",
             Params().add(user_id).add(h), Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

StoreStatus PgStore::accept_user_totp_step(std::string_view user_id, std::int64_t step) {
  return changed_one("accept_user_totp_step",
                     "UPDATE user_totp SET last_step = $2"
                     " WHERE user_id = $1 AND enabled AND last_step < $2 RETURNING 1",
                     Params().add(user_id).add(step));
}

StoreStatus PgStore::use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                       std::int64_t at_ms) {
  // 0 means "unused": a use is never recorded as 0.
  return changed_one("use_recovery_code",
                     "UPDATE user_recovery_codes SET used_at = $3"
                     " WHERE user_id = $1 AND code_hash = $2 AND used_at = 0 RETURNING 1",
                     Params().add(user_id).add(code_hash).add(std::max<std::int64_t>(at_ms, 1)));
}

StoreStatus PgStore::set_user_totp_challenge(std::string_view user_id,
                                             std::string_view challenge_hash,
                                             std::int64_t expires_at_ms) {
  return changed_one("set_user_totp_challenge",
                     "UPDATE user_totp SET challenge_hash = $2, challenge_expires_at = $3"
                     " WHERE user_id = $1 AND enabled RETURNING 1",
                     Params().add(user_id).add(challenge_hash).add(expires_at_ms));
}

StoreStatus PgStore::take_user_totp_challenge(std::string_view user_id,
                                              std::string_view challenge_hash) {
  return changed_one("take_user_totp_challenge",
                     "UPDATE user_totp SET challenge_hash = '', challenge_expires_at = 0"
                     " WHERE user_id = $1 AND challenge_hash = $2 AND challenge_hash <> ''"
                     " RETURNING 1",
                     Params().add(user_id).add(challenge_hash));
}

StoreStatus PgStore::delete_user_totp(std::string_view user_id) {
  return run("delete_user_totp", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    c.exec("DELETE FROM user_recovery_codes WHERE user_id = $1", Params().add(user_id),
           Effect::kWrite);
    const Result r = c.exec("DELETE FROM user_totp WHERE user_id = $1 RETURNING 1",
                            Params().add(user_id), Effect::kWrite);
    if (r.rows() == 0) return StoreStatus::kNotFound;
    tx.commit();
    return StoreStatus::kOk;
  });
}

}  // namespace leadflow::pg
