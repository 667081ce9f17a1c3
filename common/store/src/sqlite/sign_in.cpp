// The SQLite adapter of the sign-in port (leadflow/store/sign_in.hpp): dashboard sign-ins, sessions
// and second factors.
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

StoreStatus SqliteStore::record_login(std::string_view user_id, std::int64_t at_ms,
                                      std::string_view rehashed, std::string_view verified) {
  return changed_one(
      "record_login",
      "UPDATE users SET last_login_at = ?2,"
      " password_hash = CASE WHEN ?3 <> '' AND password_hash = ?4 THEN ?3 ELSE password_hash END"
      " WHERE id = ?1",
      [&](Query& q) { q.bind(user_id).bind(at_ms).bind(rehashed).bind(verified); });
}

StoreStatus SqliteStore::insert_session(const UserSession& s) {
  return write_one("insert_session",
                   "INSERT INTO user_sessions (" LF_SESSION_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                   [&](Query& q) {
                     q.bind(s.token_hash)
                         .bind(s.user_id)
                         .bind(s.csrf_token)
                         .bind(s.created_at_ms)
                         .bind(s.expires_at_ms)
                         .bind(s.last_seen_at_ms);
                   });
}

Lookup<UserSession> SqliteStore::find_session(std::string_view token_hash) {
  return lookup<UserSession>(
      "find_session", "SELECT " LF_SESSION_COLUMNS " FROM user_sessions WHERE token_hash = ?1",
      [&](Query& q) { q.bind(token_hash); }, read_session<Query>);
}

StoreStatus SqliteStore::touch_session(std::string_view token_hash, std::int64_t at_ms) {
  return changed_one("touch_session",
                     "UPDATE user_sessions SET last_seen_at = ?2 WHERE token_hash = ?1",
                     [&](Query& q) { q.bind(token_hash).bind(at_ms); });
}

StoreStatus SqliteStore::delete_session(std::string_view token_hash) {
  return changed_one("delete_session", "DELETE FROM user_sessions WHERE token_hash = ?1",
                     [&](Query& q) { q.bind(token_hash); });
}

StoreStatus SqliteStore::delete_user_sessions(std::string_view user_id) {
  return write_one("delete_user_sessions", "DELETE FROM user_sessions WHERE user_id = ?1",
                   [&](Query& q) { q.bind(user_id); });
}

StoreStatus SqliteStore::delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) {
  return write_one("delete_expired_sessions",
                   "DELETE FROM user_sessions WHERE expires_at <= ?1 OR last_seen_at < ?2",
                   [&](Query& q) { q.bind(now_ms).bind(idle_before_ms); });
}

Lookup<UserTotp> SqliteStore::get_user_totp(std::string_view user_id) {
  return lookup<UserTotp>(
      "get_user_totp", LF_USER_TOTP_SELECT " WHERE user_id = ?1",
      [&](Query& q) { q.bind(user_id); }, read_user_totp<Query>);
}

Lookup<UserTotp> SqliteStore::find_user_totp_by_challenge(std::string_view challenge_hash) {
  return lookup<UserTotp>(
      "find_user_totp_by_challenge",
      LF_USER_TOTP_SELECT " WHERE challenge_hash = ?1 AND challenge_hash <> ''",
      [&](Query& q) { q.bind(challenge_hash); }, read_user_totp<Query>);
}

StoreStatus SqliteStore::begin_user_totp(const UserTotp& t) {
  return guarded("begin_user_totp", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "begin_user_totp");
    {
      // An enabled second factor is never replaced here: it is turned off first.
      Query q(c,
              "INSERT INTO user_totp (user_id, sealed_secret, enabled, last_step, created_at)"
              " VALUES (?1, ?2, 0, 0, ?3) ON CONFLICT (user_id) DO UPDATE SET"
              " sealed_secret = excluded.sealed_secret, last_step = 0,"
              " created_at = excluded.created_at, challenge_hash = '', challenge_expires_at = 0"
              " WHERE user_totp.enabled = 0");
      if (int rc = q.bind(t.user_id).bind(t.sealed_secret).bind(t.created_at_ms).run())
        return report(c, rc, "begin_user_totp");
    }
    if (c.changes() == 0) return StoreStatus::kConflict;
    {
      Query q(c, "DELETE FROM user_recovery_codes WHERE user_id = ?1");
      if (int rc = q.bind(t.user_id).run()) return report(c, rc, "begin_user_totp");
    }
    if (int rc = tx.commit()) return report(c, rc, "begin_user_totp");
    return StoreStatus::kOk;
  });
}

StoreStatus SqliteStore::enable_user_totp(std::string_view user_id, std::int64_t step,
                                          const std::vector<std::string>& recovery_hashes) {
  return guarded("enable_user_totp", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "enable_user_totp");
    {
      Query q(c,
              "UPDATE user_totp SET enabled = 1, last_step = ?2"
              " WHERE user_id = ?1 AND enabled = 0");
      if (int rc = q.bind(user_id).bind(step).run()) return report(c, rc, "enable_user_totp");
    }
    if (c.changes() == 0) return StoreStatus::kNotFound;
    {
      Query q(c, "DELETE FROM user_recovery_codes WHERE user_id = ?1");
      if (int rc = q.bind(user_id).run()) return report(c, rc, "enable_user_totp");
    }
    for (const std::string& h : recovery_hashes) {
      Query q(c, "INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (?1, ?2)");
      if (int rc = q.bind(user_id).bind(h).run()) return report(c, rc, "enable_user_totp");
    }
    if (int rc = tx.commit()) return report(c, rc, "enable_user_totp");
    return StoreStatus::kOk;
  });
}

StoreStatus SqliteStore::accept_user_totp_step(std::string_view user_id, std::int64_t step) {
  return changed_one("accept_user_totp_step",
                     "UPDATE user_totp SET last_step = ?2"
                     " WHERE user_id = ?1 AND enabled = 1 AND last_step < ?2",
                     [&](Query& q) { q.bind(user_id).bind(step); });
}

StoreStatus SqliteStore::use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                           std::int64_t at_ms) {
  // 0 means "unused": a use is never recorded as 0.
  return changed_one(
      "use_recovery_code",
      "UPDATE user_recovery_codes SET used_at = ?3"
      " WHERE user_id = ?1 AND code_hash = ?2 AND used_at = 0",
      [&](Query& q) { q.bind(user_id).bind(code_hash).bind(std::max<std::int64_t>(at_ms, 1)); });
}

StoreStatus SqliteStore::set_user_totp_challenge(std::string_view user_id,
                                                 std::string_view challenge_hash,
                                                 std::int64_t expires_at_ms) {
  return changed_one("set_user_totp_challenge",
                     "UPDATE user_totp SET challenge_hash = ?2, challenge_expires_at = ?3"
                     " WHERE user_id = ?1 AND enabled = 1",
                     [&](Query& q) { q.bind(user_id).bind(challenge_hash).bind(expires_at_ms); });
}

StoreStatus SqliteStore::take_user_totp_challenge(std::string_view user_id,
                                                  std::string_view challenge_hash) {
  return changed_one("take_user_totp_challenge",
                     "UPDATE user_totp SET challenge_hash = '', challenge_expires_at = 0"
                     " WHERE user_id = ?1 AND challenge_hash = ?2 AND challenge_hash <> ''",
                     [&](Query& q) { q.bind(user_id).bind(challenge_hash); });
}

StoreStatus SqliteStore::delete_user_totp(std::string_view user_id) {
  return guarded("delete_user_totp", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "delete_user_totp");
    {
      Query q(c, "DELETE FROM user_recovery_codes WHERE user_id = ?1");
      if (int rc = q.bind(user_id).run()) return report(c, rc, "delete_user_totp");
    }
    {
      Query q(c, "DELETE FROM user_totp WHERE user_id = ?1");
      if (int rc = q.bind(user_id).run()) return report(c, rc, "delete_user_totp");
    }
    if (c.changes() == 0) return StoreStatus::kNotFound;
    if (int rc = tx.commit()) return report(c, rc, "delete_user_totp");
    return StoreStatus::kOk;
  });
}

}  // namespace leadflow::sqlite
