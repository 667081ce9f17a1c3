// The SQLite adapter of the Store port (the embedded default, SPEC §1).
//
// Connections: one writer, guarded by a mutex (SQLite allows one writer at a time anyway, and
// serialising in-process avoids busy-waiting on the file lock), and a small pool of readers that
// WAL lets run beside the writer. Every connection caches its prepared statements. Every SQLite
// failure becomes a StoreStatus here: constraint violations are kConflict, everything else
// (busy, I/O, corruption, a missing schema) is kUnavailable. No exception leaves the adapter.
// The schema is in schema.cpp, the SQLite wrapper in driver.hpp.

#include "leadflow/store/sqlite_store.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attempt_times.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "rollup_tiers.hpp"
#include "rows.hpp"
#include "sqlite/driver.hpp"
#include "sqlite/lead_rows.hpp"
#include "sqlite/schema.hpp"

namespace leadflow {
namespace {

/// The writer commits without syncing for the life of this object (one transaction, see
/// insert_leads), and with a full sync again after it, whatever happened in between.
class UnsyncedCommit {
 public:
  explicit UnsyncedCommit(sqlite::Connection& c) : c_(c) { c_.exec("PRAGMA synchronous = NORMAL"); }
  UnsyncedCommit(const UnsyncedCommit&) = delete;
  UnsyncedCommit& operator=(const UnsyncedCommit&) = delete;
  ~UnsyncedCommit() {
    if (c_.exec("PRAGMA synchronous = FULL") != SQLITE_OK)
      log(LogLevel::kError, "store_unavailable",
          {{"op", "insert_leads"}, {"detail", "cannot set synchronous = FULL again"}});
  }

 private:
  sqlite::Connection& c_;
};

using nlohmann::json;
using namespace store_rows;  // the column lists and row readers shared with PostgreSQL
using namespace sqlite;      // the SQLite wrapper (driver.hpp)

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::size_t kReaderPoolSize = 4;

// ------------------------------------------------------------------------------------------------
// Row codecs (a lead's own rows: lead_rows.cpp)
// ------------------------------------------------------------------------------------------------

std::string verticals_json(const Buyer& b) { return dump(json(b.verticals)); }

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

/// The SQLite Store. Thread-safe: writes serialise on one connection, reads use the pool.
class SqliteStore final : public Store, private SqliteCalls {
 public:
  SqliteStore(std::string path, std::unique_ptr<Connection> writer)
      : SqliteCalls(std::move(path), std::move(writer), kReaderPoolSize) {}

  ~SqliteStore() override {
    // Refreshes the planner's statistics where they drifted; cheap when nothing changed.
    std::lock_guard lock(write_mu_);
    writer_->exec("PRAGMA optimize");
  }

  // --- schema -----------------------------------------------------------------------------------

  StoreStatus migrate() override {
    return guarded("migrate", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      return apply_migrations(*writer_);
    });
  }

  bool healthy() override {
    return guarded("healthy", false, [&] {
      auto conn = readers_.acquire();
      if (!conn) return false;
      // Reads the schema page: fails on a missing, locked-out or corrupt file.
      Query q(*conn, "SELECT COUNT(*) FROM sqlite_master");
      return q.step() == SQLITE_ROW;
    });
  }

  // --- accounts ---------------------------------------------------------------------------------

  StoreStatus insert_seller(const Seller& s) override {
    return write_one("insert_seller",
                     "INSERT INTO sellers (" LF_SELLER_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                     [&](Query& q) {
                       q.bind(s.id)
                           .bind(s.name)
                           .bind(s.active)
                           .bind(s.created_at_ms)
                           .bind(s.payout_fixed)
                           .bind(s.payout_value);
                     });
  }

  std::optional<Seller> get_seller(std::string_view id) override {
    return read_optional<Seller>(
        "get_seller", "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, read_seller<Query>);
  }

  StoreStatus update_seller(Seller& s) override {
    return guarded("update_seller", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      return write_versioned(
          *writer_, "update_seller",
          "UPDATE sellers SET name = ?2, active = ?3, payout_fixed = ?4, payout_value = ?5,"
          " version = version + 1 WHERE id = ?1 AND (?6 = 0 OR version = ?6) RETURNING version",
          "SELECT 1 FROM sellers WHERE id = ?1", s.id,
          [&](Query& q) {
            q.bind(s.id)
                .bind(s.name)
                .bind(s.active)
                .bind(s.payout_fixed)
                .bind(s.payout_value)
                .bind(s.version);
          },
          s.version);
    });
  }

  std::vector<Seller> list_sellers() override {
    return read_all<Seller>(
        "list_sellers", "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers ORDER BY id", [](Query&) {},
        read_seller<Query>);
  }

  StoreStatus insert_campaign(const Campaign& c) override {
    return write_one("insert_campaign",
                     "INSERT INTO campaigns (" LF_CAMPAIGN_COLUMNS
                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                     [&](Query& q) {
                       q.bind(c.id)
                           .bind(c.seller_id)
                           .bind(c.name)
                           .bind(c.vertical)
                           .bind(c.active)
                           .bind(c.async_mode)
                           .bind(c.sync_timeout_ms)
                           .bind(c.rate_limit_per_minute)
                           .bind(c.payout_fixed)
                           .bind(c.payout_value)
                           .bind(c.key_hash)
                           .bind(c.key_hint)
                           .bind(c.created_at_ms);
                     });
  }

  std::optional<Campaign> get_campaign(std::string_view id) override {
    return read_optional<Campaign>(
        "get_campaign", "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, read_campaign<Query>);
  }

  StoreStatus update_campaign(Campaign& c) override {
    return guarded("update_campaign", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      return write_versioned(
          *writer_, "update_campaign",
          "UPDATE campaigns SET name = ?2, active = ?3, async_mode = ?4, sync_timeout_ms = ?5,"
          " rate_limit_per_minute = ?6, payout_fixed = ?7, payout_value = ?8,"
          " version = version + 1 WHERE id = ?1 AND (?9 = 0 OR version = ?9) RETURNING version",
          "SELECT 1 FROM campaigns WHERE id = ?1", c.id,
          [&](Query& q) {
            q.bind(c.id)
                .bind(c.name)
                .bind(c.active)
                .bind(c.async_mode)
                .bind(c.sync_timeout_ms)
                .bind(c.rate_limit_per_minute)
                .bind(c.payout_fixed)
                .bind(c.payout_value)
                .bind(c.version);
          },
          c.version);
    });
  }

  Lookup<Campaign> find_campaign_by_key_hash(std::string_view key_hash) override {
    return lookup<Campaign>(
        "find_campaign_by_key_hash",
        "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE key_hash = ?1",
        [&](Query& q) { q.bind(key_hash); }, read_campaign<Query>);
  }

  std::vector<Campaign> list_campaigns(std::string_view seller_id) override {
    return read_all<Campaign>(
        "list_campaigns",
        "SELECT " LF_CAMPAIGN_READ_COLUMNS
        " FROM campaigns WHERE ?1 = '' OR seller_id = ?1 ORDER BY id",
        [&](Query& q) { q.bind(seller_id); }, read_campaign<Query>);
  }

  StoreStatus insert_api_key(const ApiKey& k) override {
    return write_one("insert_api_key",
                     "INSERT INTO api_keys (" LF_API_KEY_COLUMNS
                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                     [&](Query& q) {
                       q.bind(k.id)
                           .bind_or_null(k.seller_id)
                           .bind(k.name)
                           .bind(to_string(k.plan))
                           .bind(static_cast<std::int64_t>(k.scopes))
                           .bind(k.key_hash)
                           .bind(k.key_hint)
                           .bind(k.created_at_ms)
                           .bind(k.revoked_at_ms)
                           .bind_or_null(k.buyer_id);
                     });
  }

  Lookup<ApiKey> find_api_key_by_hash(std::string_view key_hash) override {
    return lookup<ApiKey>(
        "find_api_key_by_hash",
        "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE key_hash = ?1",
        [&](Query& q) { q.bind(key_hash); }, read_api_key<Query>);
  }

  std::vector<ApiKey> list_api_keys() override {
    return read_all<ApiKey>(
        "list_api_keys", "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys ORDER BY id",
        [](Query&) {}, read_api_key<Query>);
  }

  Lookup<ApiKey> get_api_key(std::string_view id) override {
    return lookup<ApiKey>(
        "get_api_key", "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, read_api_key<Query>);
  }

  /// Revoking a revoked key is kOk and keeps the first revocation time.
  StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms,
                             std::int64_t if_version) override {
    return guarded("revoke_api_key", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      {
        Query q(c,
                "UPDATE api_keys SET revoked_at = ?2, version = version + 1"
                " WHERE id = ?1 AND revoked_at = 0 AND (?3 = 0 OR version = ?3)");
        // 0 means "live": a revocation is never recorded as 0.
        if (int rc = q.bind(id).bind(std::max<std::int64_t>(at_ms, 1)).bind(if_version).run())
          return report(c, rc, "revoke_api_key");
      }
      if (c.changes() > 0) return StoreStatus::kOk;
      // Nothing changed: no such key, a version moved on, or a key revoked before.
      Query q(c, "SELECT version FROM api_keys WHERE id = ?1");
      const int rc = q.bind(id).step();
      if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
      if (rc != SQLITE_ROW) return report(c, rc, "revoke_api_key");
      return if_version == kAnyVersion || q.int64(0) == if_version ? StoreStatus::kOk
                                                                   : StoreStatus::kConflict;
    });
  }

  StoreStatus touch_api_key(std::string_view id, std::int64_t at_ms) override {
    return changed_one("touch_api_key",
                       "UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1 AND last_used_at < ?2",
                       [&](Query& q) { q.bind(id).bind(at_ms); });
  }

  // --- dashboard users and their sessions -------------------------------------------------------

  StoreStatus insert_user(const User& u) override {
    return write_one("insert_user",
                     "INSERT INTO users (" LF_USER_COLUMNS
                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                     [&](Query& q) {
                       q.bind(u.id)
                           .bind(u.email)
                           .bind(u.name)
                           .bind_or_null(u.seller_id)
                           .bind_or_null(u.buyer_id)
                           .bind(u.password_hash)
                           .bind(u.active)
                           .bind(u.created_at_ms)
                           .bind(u.last_login_at_ms);
                     });
  }

  Lookup<User> get_user(std::string_view id) override {
    return lookup<User>(
        "get_user", "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, read_user<Query>);
  }

  Lookup<User> find_user_by_email(std::string_view email) override {
    return lookup<User>(
        "find_user_by_email", "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE email = ?1",
        [&](Query& q) { q.bind(email); }, read_user<Query>);
  }

  std::vector<User> list_users() override {
    return read_all<User>(
        "list_users", "SELECT " LF_USER_READ_COLUMNS " FROM users ORDER BY id", [](Query&) {},
        read_user<Query>);
  }

  StoreStatus update_user(User& u, std::string_view keep_session) override {
    return guarded("update_user", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "update_user");
      bool new_password = false;
      {
        Query q(c, "SELECT password_hash <> ?2 FROM users WHERE id = ?1");
        const int rc = q.bind(u.id).bind(u.password_hash).step();
        if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
        if (rc != SQLITE_ROW) return report(c, rc, "update_user");
        new_password = q.int64(0) != 0;
      }
      const StoreStatus written = write_versioned(
          c, "update_user",
          "UPDATE users SET name = ?2, active = ?3, password_hash = ?4, version = version + 1"
          " WHERE id = ?1 AND (?5 = 0 OR version = ?5) RETURNING version",
          "SELECT 1 FROM users WHERE id = ?1", u.id,
          [&](Query& q) {
            q.bind(u.id).bind(u.name).bind(u.active).bind(u.password_hash).bind(u.version);
          },
          u.version);
      if (written != StoreStatus::kOk) return written;  // the transaction rolls back
      if (!u.active || new_password) {
        Query q(c, "DELETE FROM user_sessions WHERE user_id = ?1 AND token_hash <> ?2");
        if (int rc = q.bind(u.id).bind(keep_session).run()) return report(c, rc, "update_user");
      }
      if (int rc = tx.commit()) return report(c, rc, "update_user");
      return StoreStatus::kOk;
    });
  }

  StoreStatus set_user_password(std::string_view user_id, std::string_view password_hash,
                                std::string_view keep_session) override {
    return guarded("set_user_password", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "set_user_password");
      {
        Query q(c,
                "UPDATE users SET password_hash = ?2, version = version + 1"
                " WHERE id = ?1 AND active = 1");
        if (int rc = q.bind(user_id).bind(password_hash).run())
          return report(c, rc, "set_user_password");
      }
      if (c.changes() == 0) return StoreStatus::kNotFound;
      {
        Query q(c, "DELETE FROM user_sessions WHERE user_id = ?1 AND token_hash <> ?2");
        if (int rc = q.bind(user_id).bind(keep_session).run())
          return report(c, rc, "set_user_password");
      }
      if (int rc = tx.commit()) return report(c, rc, "set_user_password");
      return StoreStatus::kOk;
    });
  }

  StoreStatus record_login(std::string_view user_id, std::int64_t at_ms, std::string_view rehashed,
                           std::string_view verified) override {
    return changed_one(
        "record_login",
        "UPDATE users SET last_login_at = ?2,"
        " password_hash = CASE WHEN ?3 <> '' AND password_hash = ?4 THEN ?3 ELSE password_hash END"
        " WHERE id = ?1",
        [&](Query& q) { q.bind(user_id).bind(at_ms).bind(rehashed).bind(verified); });
  }

  StoreStatus insert_session(const UserSession& s) override {
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

  Lookup<UserSession> find_session(std::string_view token_hash) override {
    return lookup<UserSession>(
        "find_session", "SELECT " LF_SESSION_COLUMNS " FROM user_sessions WHERE token_hash = ?1",
        [&](Query& q) { q.bind(token_hash); }, read_session<Query>);
  }

  StoreStatus touch_session(std::string_view token_hash, std::int64_t at_ms) override {
    return changed_one("touch_session",
                       "UPDATE user_sessions SET last_seen_at = ?2 WHERE token_hash = ?1",
                       [&](Query& q) { q.bind(token_hash).bind(at_ms); });
  }

  StoreStatus delete_session(std::string_view token_hash) override {
    return changed_one("delete_session", "DELETE FROM user_sessions WHERE token_hash = ?1",
                       [&](Query& q) { q.bind(token_hash); });
  }

  StoreStatus delete_user_sessions(std::string_view user_id) override {
    return write_one("delete_user_sessions", "DELETE FROM user_sessions WHERE user_id = ?1",
                     [&](Query& q) { q.bind(user_id); });
  }

  StoreStatus delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) override {
    return write_one("delete_expired_sessions",
                     "DELETE FROM user_sessions WHERE expires_at <= ?1 OR last_seen_at < ?2",
                     [&](Query& q) { q.bind(now_ms).bind(idle_before_ms); });
  }

  // --- dashboard users' second factor -----------------------------------------------------------

  Lookup<UserTotp> get_user_totp(std::string_view user_id) override {
    return lookup<UserTotp>(
        "get_user_totp", LF_USER_TOTP_SELECT " WHERE user_id = ?1",
        [&](Query& q) { q.bind(user_id); }, read_user_totp<Query>);
  }

  Lookup<UserTotp> find_user_totp_by_challenge(std::string_view challenge_hash) override {
    return lookup<UserTotp>(
        "find_user_totp_by_challenge",
        LF_USER_TOTP_SELECT " WHERE challenge_hash = ?1 AND challenge_hash <> ''",
        [&](Query& q) { q.bind(challenge_hash); }, read_user_totp<Query>);
  }

  StoreStatus begin_user_totp(const UserTotp& t) override {
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

  StoreStatus enable_user_totp(std::string_view user_id, std::int64_t step,
                               const std::vector<std::string>& recovery_hashes) override {
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

  StoreStatus accept_user_totp_step(std::string_view user_id, std::int64_t step) override {
    return changed_one("accept_user_totp_step",
                       "UPDATE user_totp SET last_step = ?2"
                       " WHERE user_id = ?1 AND enabled = 1 AND last_step < ?2",
                       [&](Query& q) { q.bind(user_id).bind(step); });
  }

  StoreStatus use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                std::int64_t at_ms) override {
    // 0 means "unused": a use is never recorded as 0.
    return changed_one(
        "use_recovery_code",
        "UPDATE user_recovery_codes SET used_at = ?3"
        " WHERE user_id = ?1 AND code_hash = ?2 AND used_at = 0",
        [&](Query& q) { q.bind(user_id).bind(code_hash).bind(std::max<std::int64_t>(at_ms, 1)); });
  }

  StoreStatus set_user_totp_challenge(std::string_view user_id, std::string_view challenge_hash,
                                      std::int64_t expires_at_ms) override {
    return changed_one("set_user_totp_challenge",
                       "UPDATE user_totp SET challenge_hash = ?2, challenge_expires_at = ?3"
                       " WHERE user_id = ?1 AND enabled = 1",
                       [&](Query& q) { q.bind(user_id).bind(challenge_hash).bind(expires_at_ms); });
  }

  StoreStatus take_user_totp_challenge(std::string_view user_id,
                                       std::string_view challenge_hash) override {
    return changed_one("take_user_totp_challenge",
                       "UPDATE user_totp SET challenge_hash = '', challenge_expires_at = 0"
                       " WHERE user_id = ?1 AND challenge_hash = ?2 AND challenge_hash <> ''",
                       [&](Query& q) { q.bind(user_id).bind(challenge_hash); });
  }

  StoreStatus delete_user_totp(std::string_view user_id) override {
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

  // --- buyers -----------------------------------------------------------------------------------

  StoreStatus insert_buyer(const Buyer& b) override {
    return guarded("insert_buyer", StoreStatus::kUnavailable, [&] {
      const std::string doc = dump(buyer_to_json(b, /*mask_secrets=*/false));
      const std::string verticals = verticals_json(b);
      return write_buyer("insert_buyer", [&](Connection& c) {
        Query q(c, "INSERT INTO buyers (" LF_BUYER_COLUMNS
                   ", verticals) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        if (int rc = q.bind(b.id)
                         .bind(b.active)
                         .bind(doc)
                         .bind(b.created_at_ms)
                         .bind(b.updated_at_ms)
                         .bind(verticals)
                         .run())
          return report(c, rc, "insert_buyer");
        return StoreStatus::kOk;
      });
    });
  }

  /// Replaces the configuration; the creation time stays the one first stored.
  StoreStatus update_buyer(Buyer& b) override {
    return guarded("update_buyer", StoreStatus::kUnavailable, [&] {
      const std::string doc = dump(buyer_to_json(b, /*mask_secrets=*/false));
      const std::string verticals = verticals_json(b);
      return write_buyer("update_buyer", [&](Connection& c) {
        return write_versioned(
            c, "update_buyer",
            "UPDATE buyers SET active = ?2, doc = ?3, updated_at = ?4, verticals = ?5,"
            " version = version + 1 WHERE id = ?1 AND (?6 = 0 OR version = ?6) RETURNING version",
            "SELECT 1 FROM buyers WHERE id = ?1", b.id,
            [&](Query& q) {
              q.bind(b.id)
                  .bind(b.active)
                  .bind(doc)
                  .bind(b.updated_at_ms)
                  .bind(verticals)
                  .bind(b.version);
            },
            b.version);
      });
    });
  }

  std::optional<Buyer> get_buyer(std::string_view id) override {
    return guarded("get_buyer", std::optional<Buyer>{}, [&]() -> std::optional<Buyer> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Query q(*conn, "SELECT " LF_BUYER_READ_COLUMNS " FROM buyers WHERE id = ?1");
      const int rc = q.bind(id).step();
      if (rc == SQLITE_ROW) return read_buyer(q);
      if (rc != SQLITE_DONE) report(*conn, rc, "get_buyer");
      return std::nullopt;
    });
  }

  std::vector<Buyer> list_buyers(const BuyerQuery& bq) override {
    return guarded("list_buyers", std::vector<Buyer>{}, [&] {
      std::vector<Buyer> out;
      auto conn = readers_.acquire();
      if (!conn) return out;
      Query q(*conn, "SELECT " LF_BUYER_READ_COLUMNS
                     " FROM buyers"
                     " WHERE (?1 < 0 OR active = ?1)"
                     " AND (?2 = '' OR EXISTS (SELECT 1 FROM json_each(buyers.verticals)"
                     "                         WHERE json_each.value = ?2))"
                     " AND id > ?3 ORDER BY id LIMIT ?4");
      q.bind(static_cast<std::int64_t>(bq.active ? (*bq.active ? 1 : 0) : -1))
          .bind(bq.vertical)
          .bind(bq.after_id)
          .bind(clamp_limit(bq.limit));
      int rc;
      while ((rc = q.step()) == SQLITE_ROW)
        if (auto b = read_buyer(q)) out.push_back(std::move(*b));
      if (rc != SQLITE_DONE) {
        report(*conn, rc, "list_buyers");
        out.clear();
      }
      return out;
    });
  }

  /// On a failed read, the last value seen: a transient error must not look like a change
  /// (a reload that then fails too would leave a worker with no buyers).
  std::int64_t buyers_version() override {
    return guarded("buyers_version", last_buyers_version_.load(), [&] {
      auto conn = readers_.acquire();
      if (!conn) return last_buyers_version_.load();
      Query q(*conn, "SELECT version FROM buyers_version WHERE id = 1");
      const int rc = q.step();
      if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE) report(*conn, rc, "buyers_version");
        return last_buyers_version_.load();
      }
      const std::int64_t v = q.int64(0);
      last_buyers_version_ = v;
      return v;
    });
  }

  // --- leads ------------------------------------------------------------------------------------

  /// An empty vector (instead of one result per lead) means nothing was written.
  ///
  /// Committed without an fsync of its own (synchronous NORMAL for this transaction): a pending
  /// row is worth keeping only once something depends on it, and everything that does (the
  /// lead's post intent, its outcome) commits with an fsync of the write-ahead log later, which
  /// makes every frame before it durable too. A process crash loses nothing (the frames are in
  /// the file); a power loss before that fsync may lose the row, and the lead, not yet committed
  /// in the queue, is delivered and inserted again. The worker waits on this insert before every
  /// auction, and a sync seller waits on the worker.
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads) override {
    return guarded("insert_leads", std::vector<LeadInsertResult>{}, [&] {
      std::vector<LeadInsertResult> results(leads.size());
      if (leads.empty()) return results;
      std::vector<std::string> custom(leads.size());
      for (std::size_t i = 0; i < leads.size(); ++i)
        custom[i] = dump(custom_fields_to_json(leads[i].custom_fields));

      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      const UnsyncedCommit unsynced(c);  // declared first: back to FULL after the transaction
      Transaction tx(c);
      if (int rc = tx.begin()) return failed(c, rc, "insert_leads", results);
      for (std::size_t i = 0; i < leads.size(); ++i) {
        {
          Query q(c, "INSERT INTO leads (" LF_LEAD_COLUMNS
                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                     "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
                     "?22, ?23, ?24) ON CONFLICT (id) DO NOTHING");
          bind_lead(q, leads[i], custom[i]);
          if (int rc = q.run()) return failed(c, rc, "insert_leads", results);
        }
        if (c.changes() > 0) {
          results[i].inserted = true;
          continue;
        }
        // A redelivery: report what became of the lead the first time.
        Query q(c, "SELECT status FROM leads WHERE id = ?1");
        const int rc = q.bind(leads[i].id).step();
        if (rc != SQLITE_ROW) return failed(c, rc, "insert_leads", results);
        results[i].existing_status =
            parse_delivery_status(q.text(0)).value_or(DeliveryStatus::kPending);
      }
      if (int rc = tx.commit()) return failed(c, rc, "insert_leads", results);
      return results;
    });
  }

  std::optional<LeadRecord> get_lead(std::string_view id) override {
    auto r = read_optional<LeadRecord>(
        "get_lead",
        "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
        ", attempts, ineligible FROM leads WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, [](const Query& q) { return read_lead(q, true); });
    const bool sold = r && (r->distribution.status == DeliveryStatus::kDelivered ||
                            r->distribution.status == DeliveryStatus::kReturned);
    if (sold) {
      // Committed with the status it was read with (or later, by a settlement).
      auto sales = read_rows<Sale>(
          "get_lead", "SELECT " LF_SALE_COLUMNS " FROM sales WHERE lead_id = ?1 ORDER BY slot",
          [&](Query& q) { q.bind(id); }, read_sale<Query>);
      if (sales) attach_sales(*r, std::move(*sales));
    }
    return r;
  }

  std::vector<LeadRecord> list_leads(const LeadQuery& lq) override {
    return guarded("list_leads", std::vector<LeadRecord>{}, [&] {
      // One statement per combination of filters (at most 2^8, each cached once): a fixed
      // "(? = '' OR col = ?)" form would hide the usable index from the planner.
      std::string sql =
          "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS " FROM leads WHERE 1 = 1";
      if (!lq.seller_id.empty()) sql += " AND seller_id = ?";
      if (lq.status) sql += " AND status = ?";
      if (!lq.vertical.empty()) sql += " AND vertical = ?";
      if (!lq.source.empty()) sql += " AND source = ?";
      // Every lead the buyer bought, a share of a shared sale included.
      if (!lq.buyer_id.empty()) sql += " AND id IN (SELECT lead_id FROM sales WHERE buyer_id = ?)";
      if (lq.created_from_ms != 0) sql += " AND received_at >= ?";
      if (lq.created_to_ms != 0) sql += " AND received_at < ?";
      if (!lq.before_id.empty()) sql += " AND id < ?";
      sql += " ORDER BY id DESC LIMIT ?";

      std::vector<LeadRecord> out;
      auto conn = readers_.acquire();
      if (!conn) return out;
      Query q(*conn, sql);
      if (!lq.seller_id.empty()) q.bind(lq.seller_id);
      if (lq.status) q.bind(to_string(*lq.status));
      if (!lq.vertical.empty()) q.bind(lq.vertical);
      if (!lq.source.empty()) q.bind(lq.source);
      if (!lq.buyer_id.empty()) q.bind(lq.buyer_id);
      if (lq.created_from_ms != 0) q.bind(lq.created_from_ms);
      if (lq.created_to_ms != 0) q.bind(lq.created_to_ms);
      if (!lq.before_id.empty()) q.bind(lq.before_id);
      q.bind(clamp_limit(lq.limit));
      int rc;
      while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_lead(q, false));
      if (rc != SQLITE_DONE) {
        report(*conn, rc, "list_leads");
        out.clear();
      }
      return out;
    });
  }

  /// "Earlier" orders leads by (received_at, id): when the lead itself is stored, only leads
  /// before it count, so of two copies of one person decided side by side exactly one is the
  /// duplicate. When it is not stored yet (an intake check), every other lead counts.
  std::string find_duplicate(std::string_view vertical, std::string_view email,
                             std::string_view phone, std::int64_t since_ms,
                             std::string_view lead_id) override {
    return guarded("find_duplicate", std::string{}, [&] {
      auto conn = readers_.acquire();
      if (!conn) return std::string{};
      std::int64_t until_ms = std::numeric_limits<std::int64_t>::max();
      if (!lead_id.empty()) {
        Query q(*conn, "SELECT received_at FROM leads WHERE id = ?1");
        const int rc = q.bind(lead_id).step();
        if (rc == SQLITE_ROW)
          until_ms = q.int64(0);
        else if (rc != SQLITE_DONE)
          return (report(*conn, rc, "find_duplicate"), std::string{});
      }
      auto probe = [&](const char* sql, std::string_view key) -> std::string {
        if (key.empty()) return {};
        Query q(*conn, sql);
        const int rc =
            q.bind(vertical).bind(key).bind(since_ms).bind(until_ms).bind(lead_id).step();
        if (rc == SQLITE_ROW) return q.text(0);
        if (rc != SQLITE_DONE) report(*conn, rc, "find_duplicate");
        return {};
      };
      std::string found = probe(
          "SELECT id FROM leads WHERE vertical = ?1 AND email = ?2 AND received_at >= ?3"
          " AND received_at <= ?4 AND id <> ?5 AND (received_at < ?4 OR id < ?5)"
          " ORDER BY received_at DESC LIMIT 1",
          email);
      if (found.empty())
        found = probe(
            "SELECT id FROM leads WHERE vertical = ?1 AND phone = ?2 AND received_at >= ?3"
            " AND received_at <= ?4 AND id <> ?5 AND (received_at < ?4 OR id < ?5)"
            " ORDER BY received_at DESC LIMIT 1",
            phone);
      return found;
    });
  }

  /// A newer intent for the same lead replaces the older one (the auction went down its ranking).
  /// With caps, the status check, the counts and the write run in one BEGIN IMMEDIATE
  /// transaction, so two processes reserving a buyer's last slot cannot both see it free.
  StoreStatus record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) override {
    return guarded("record_post_intent", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      return write_post_intent(*writer_, p, caps, /*own_transaction=*/true);
    });
  }

  /// One transaction (one fsync) for the whole batch. If the store fails on any of them, none is
  /// kept and every one answers kUnavailable: also when SQLite rolled the transaction back by
  /// itself (it may after an I/O error or a full disk), since the later intents would otherwise
  /// be written outside it, one by one.
  std::vector<StoreStatus> record_post_intents(std::span<const PostIntentWrite> writes) override {
    const std::vector<StoreStatus> all_failed(writes.size(), StoreStatus::kUnavailable);
    return guarded("record_post_intents", all_failed, [&] {
      std::vector<StoreStatus> results;
      results.reserve(writes.size());
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) {
        report(c, rc, "record_post_intents");
        return all_failed;
      }
      for (const auto& w : writes) {
        const StoreStatus s = write_post_intent(c, w.intent, w.caps, /*own_transaction=*/false);
        if (s == StoreStatus::kUnavailable || !c.in_transaction()) return all_failed;
        results.push_back(s);
      }
      if (int rc = tx.commit()) {
        report(c, rc, "record_post_intents");
        return all_failed;
      }
      return results;
    });
  }

 private:
  /// record_post_intent's body, under write_mu_. Without `own_transaction` the caller's open
  /// transaction holds the write lock, which makes the cap count and the write atomic.
  StoreStatus write_post_intent(Connection& c, const PostIntent& p, std::span<const CapWindow> caps,
                                bool own_transaction) {
    Transaction tx(c);
    if (own_transaction)
      if (int rc = tx.begin()) return report(c, rc, "record_post_intent");
    if (!caps.empty()) {
      // A decided (or unknown) lead answers as it would without caps, not kLimitReached.
      {
        Query q(c, "SELECT status = 'pending' FROM leads WHERE id = ?1");
        const int rc = q.bind(p.lead_id).step();
        if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
        if (rc != SQLITE_ROW) return report(c, rc, "record_post_intent");
        if (!q.boolean(0)) return StoreStatus::kConflict;
      }
      for (const CapWindow& cap : caps) {
        // Intents of decided leads are not counted: a sale counts through its sales row, and
        // an unsold lead's intent reserved nothing that was used.
        const bool cents = cap.unit == CapUnit::kCents;
        Query q(c, cents
                       ? "SELECT (SELECT COALESCE(SUM(price_cents), 0) FROM sales"
                         "  WHERE buyer_id = ?1 AND sold_at >= ?2)"
                         " - (SELECT COALESCE(SUM(price_cents), 0) FROM returns"
                         "    WHERE buyer_id = ?1 AND sold_at >= ?2)"
                         " + (SELECT COALESCE(SUM(post_intents.price_cents), 0) FROM post_intents"
                         "    JOIN leads ON leads.id = post_intents.lead_id"
                         "    WHERE post_intents.buyer_id = ?1 AND post_intents.at >= ?2"
                         "    AND post_intents.lead_id <> ?3 AND leads.status = 'pending')"
                       : "SELECT (SELECT COUNT(*) FROM sales WHERE buyer_id = ?1 AND sold_at >= ?2)"
                         " + (SELECT COUNT(*) FROM post_intents"
                         "    JOIN leads ON leads.id = post_intents.lead_id"
                         "    WHERE post_intents.buyer_id = ?1 AND post_intents.at >= ?2"
                         "    AND post_intents.lead_id <> ?3 AND leads.status = 'pending')");
        const int rc = q.bind(p.buyer_id).bind(cap.since_ms).bind(p.lead_id).step();
        if (rc != SQLITE_ROW) return report(c, rc, "record_post_intent");
        const std::int64_t taking = cents ? p.price : 1;
        if (q.int64(0) + taking > cap.limit) return StoreStatus::kLimitReached;
      }
    }
    {
      Query q(c,
              "INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at, shared)"
              " SELECT id, ?2, ?3, ?4, ?5, ?6 FROM leads WHERE id = ?1 AND status = 'pending'"
              " ON CONFLICT (lead_id, buyer_id) DO UPDATE SET price_cents = excluded.price_cents,"
              " ping_id = excluded.ping_id, at = excluded.at, shared = excluded.shared");
      if (int rc = q.bind(p.lead_id)
                       .bind(p.buyer_id)
                       .bind(p.price)
                       .bind(p.ping_id)
                       .bind(p.at_ms)
                       .bind(p.shared)
                       .run())
        return report(c, rc, "record_post_intent");
    }
    if (c.changes() == 0)
      return exists(c, "SELECT 1 FROM leads WHERE id = ?1", p.lead_id, "record_post_intent",
                    StoreStatus::kConflict);
    {
      // The posts this one follows were answered: an exclusive post replaces every other
      // intent of the lead, a share the exclusive one (the shares stay, posted side by side).
      Query q(c,
              "DELETE FROM post_intents WHERE lead_id = ?1 AND buyer_id <> ?2"
              " AND (?3 = 0 OR shared = 0)");
      if (int rc = q.bind(p.lead_id).bind(p.buyer_id).bind(p.shared).run())
        return report(c, rc, "record_post_intent");
    }
    if (own_transaction)
      if (int rc = tx.commit()) return report(c, rc, "record_post_intent");
    return StoreStatus::kOk;
  }

 public:
  /// BEGIN IMMEDIATE takes the database write lock before the read, so the read, `update` and
  /// the write are one critical section across processes. If `update` throws, nothing is
  /// written (the transaction rolls back) and the answer is kUnavailable.
  StoreStatus update_rate_bucket(std::string_view key,
                                 const std::function<void(RateBucketState&)>& update) override {
    return guarded("update_rate_bucket", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "update_rate_bucket");
      RateBucketState state;
      {
        Query q(c, "SELECT tokens, refilled_at, day, day_count FROM rate_buckets WHERE key = ?1");
        const int rc = q.bind(key).step();
        if (rc == SQLITE_ROW) {
          state.exists = true;
          state.tokens = q.real(0);
          state.refilled_at_ms = q.int64(1);
          state.day = q.int64(2);
          state.day_count = q.int64(3);
        } else if (rc != SQLITE_DONE) {
          return report(c, rc, "update_rate_bucket");
        }
      }
      update(state);
      {
        Query q(c,
                "INSERT INTO rate_buckets (key, tokens, refilled_at, day, day_count)"
                " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (key) DO UPDATE SET"
                " tokens = excluded.tokens, refilled_at = excluded.refilled_at,"
                " day = excluded.day, day_count = excluded.day_count");
        if (int rc = q.bind(key)
                         .bind(state.tokens)
                         .bind(state.refilled_at_ms)
                         .bind(state.day)
                         .bind(state.day_count)
                         .run())
          return report(c, rc, "update_rate_bucket");
      }
      if (int rc = tx.commit()) return report(c, rc, "update_rate_bucket");
      return StoreStatus::kOk;
    });
  }

  std::optional<std::string> shared_secret(std::string_view name,
                                           std::string_view candidate) override {
    return guarded("shared_secret", std::optional<std::string>(),
                   [&]() -> std::optional<std::string> {
                     std::lock_guard lock(write_mu_);
                     Connection& c = *writer_;
                     {
                       Query q(c,
                               "INSERT INTO shared_secrets (name, value) VALUES (?1, ?2)"
                               " ON CONFLICT (name) DO NOTHING");
                       if (int rc = q.bind(name).bind(candidate).run()) {
                         report(c, rc, "shared_secret");
                         return std::nullopt;
                       }
                     }
                     Query q(c, "SELECT value FROM shared_secrets WHERE name = ?1");
                     if (q.bind(name).step() != SQLITE_ROW) {
                       report(c, SQLITE_ERROR, "shared_secret");
                       return std::nullopt;
                     }
                     return q.text(0);
                   });
  }

  /// BEGIN IMMEDIATE, as above: the reads, `update` and the writes of every key are one critical
  /// section across processes.
  StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) override {
    return guarded("update_attempt_windows", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "update_attempt_windows");
      std::vector<std::vector<std::int64_t>> windows(keys.size());
      for (std::size_t i = 0; i < keys.size(); ++i) {
        Query q(c, "SELECT times FROM attempt_windows WHERE key = ?1");
        const int rc = q.bind(keys[i]).step();
        if (rc == SQLITE_ROW)
          windows[i] = store_rows::decode_attempt_times(q.text(0));
        else if (rc != SQLITE_DONE)
          return report(c, rc, "update_attempt_windows");
      }
      update(windows);
      for (std::size_t i = 0; i < keys.size() && i < windows.size(); ++i) {
        if (windows[i].empty()) {
          Query q(c, "DELETE FROM attempt_windows WHERE key = ?1");
          if (int rc = q.bind(keys[i]).run()) return report(c, rc, "update_attempt_windows");
          continue;
        }
        const std::string times = store_rows::encode_attempt_times(windows[i]);
        Query q(c,
                "INSERT INTO attempt_windows (key, times, newest_at) VALUES (?1, ?2, ?3)"
                " ON CONFLICT (key) DO UPDATE SET times = excluded.times,"
                " newest_at = excluded.newest_at");
        if (int rc =
                q.bind(keys[i]).bind(times).bind(store_rows::newest_attempt_time(windows[i])).run())
          return report(c, rc, "update_attempt_windows");
      }
      if (int rc = tx.commit()) return report(c, rc, "update_attempt_windows");
      return StoreStatus::kOk;
    });
  }

  StoreStatus forget_attempt_windows(std::int64_t before_ms) override {
    return guarded("forget_attempt_windows", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Query q(c, "DELETE FROM attempt_windows WHERE newest_at < ?1");
      if (int rc = q.bind(before_ms).run()) return report(c, rc, "forget_attempt_windows");
      return StoreStatus::kOk;
    });
  }

  StoreStatus claim_idempotency_key(const IdempotencyRecord& r, std::int64_t expire_before_ms,
                                    IdempotencyRecord& existing) override {
    return guarded("claim_idempotency_key", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      {
        // Claims the key, or takes it over from an expired claim, in one statement.
        Query q(c,
                "INSERT INTO idempotency_keys (scope, key, request_hash, lead_id, status, response,"
                " created_at) VALUES (?1, ?2, ?3, ?4, 0, '', ?5)"
                " ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash,"
                " lead_id = excluded.lead_id, status = 0, response = '',"
                " created_at = excluded.created_at WHERE idempotency_keys.created_at < ?6");
        if (int rc = q.bind(r.scope)
                         .bind(r.key)
                         .bind(r.request_hash)
                         .bind(r.lead_id)
                         .bind(r.created_at_ms)
                         .bind(expire_before_ms)
                         .run())
          return report(c, rc, "claim_idempotency_key");
      }
      if (c.changes() > 0) return StoreStatus::kOk;
      Query q(c,
              "SELECT scope, key, request_hash, lead_id, status, response, created_at"
              " FROM idempotency_keys WHERE scope = ?1 AND key = ?2");
      q.bind(r.scope).bind(r.key);
      const int rc = q.step();
      if (rc != SQLITE_ROW)
        return report(c, rc == SQLITE_DONE ? SQLITE_ERROR : rc, "claim_idempotency_key");
      existing.scope = q.text(0);
      existing.key = q.text(1);
      existing.request_hash = q.text(2);
      existing.lead_id = q.text(3);
      existing.status = static_cast<int>(q.int64(4));
      existing.response = q.text(5);
      existing.created_at_ms = q.int64(6);
      return StoreStatus::kConflict;
    });
  }

  StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key, int status,
                                       std::string_view response) override {
    return write_one("complete_idempotency_key",
                     "UPDATE idempotency_keys SET status = ?3, response = ?4"
                     " WHERE scope = ?1 AND key = ?2",
                     [&](Query& q) { q.bind(scope).bind(key).bind(status).bind(response); });
  }

  StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) override {
    return write_one("release_idempotency_key",
                     "DELETE FROM idempotency_keys WHERE scope = ?1 AND key = ?2 AND status = 0",
                     [&](Query& q) { q.bind(scope).bind(key); });
  }

  std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) override {
    return read_rows<PostIntent>(
        "get_post_intents",
        "SELECT " LF_POST_INTENT_COLUMNS
        " FROM post_intents WHERE lead_id = ?1 ORDER BY at, buyer_id",
        [&](Query& q) { q.bind(lead_id); }, read_post_intent<Query>);
  }

  /// Per outcome: kOk (written), kConflict (already decided: the first outcome stays; also for
  /// an outcome that decides nothing, i.e. status pending), kNotFound (no such lead). When the
  /// transaction itself fails, every result is kUnavailable and nothing was written.
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) override {
    const std::vector<StoreStatus> all_failed(outcomes.size(), StoreStatus::kUnavailable);
    return guarded("record_outcomes", all_failed, [&] {
      std::vector<std::pair<std::string, std::string>> json_text;
      json_text.reserve(outcomes.size());
      for (const auto& o : outcomes)
        json_text.emplace_back(dump(attempts_to_json(o.distribution.attempts)),
                               dump(ineligible_to_json(o.distribution.ineligible)));

      std::vector<StoreStatus> results(outcomes.size(), StoreStatus::kUnavailable);
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return (report(c, rc, "record_outcomes"), all_failed);
      OutcomeDeltas deltas;
      for (std::size_t i = 0; i < outcomes.size(); ++i) {
        int rc = record_outcome(c, outcomes[i], json_text[i].first, json_text[i].second, results[i],
                                deltas);
        if (rc != SQLITE_OK) return (report(c, rc, "record_outcomes"), all_failed);
      }
      if (int rc = write_outcome_deltas(c, deltas))
        return (report(c, rc, "record_outcomes"), all_failed);
      if (int rc = tx.commit()) return (report(c, rc, "record_outcomes"), all_failed);
      return results;
    });
  }

  std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                          std::int64_t since_ms) override {
    return guarded(
        "count_sales", std::optional<std::int64_t>{}, [&]() -> std::optional<std::int64_t> {
          auto conn = readers_.acquire();
          if (!conn) return std::nullopt;
          Query q(*conn, "SELECT COUNT(*) FROM sales WHERE buyer_id = ?1 AND sold_at >= ?2");
          const int rc = q.bind(buyer_id).bind(since_ms).step();
          if (rc == SQLITE_ROW) return q.int64(0);
          report(*conn, rc, "count_sales");
          return std::nullopt;
        });
  }

  std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) override {
    return guarded("sales_cents", std::optional<Cents>{}, [&]() -> std::optional<Cents> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Query q(*conn,
              "SELECT (SELECT COALESCE(SUM(price_cents), 0) FROM sales"
              "  WHERE buyer_id = ?1 AND sold_at >= ?2)"
              " - (SELECT COALESCE(SUM(price_cents), 0) FROM returns"
              "    WHERE buyer_id = ?1 AND sold_at >= ?2)");
      const int rc = q.bind(buyer_id).bind(since_ms).step();
      if (rc == SQLITE_ROW) return q.int64(0);
      report(*conn, rc, "sales_cents");
      return std::nullopt;
    });
  }

  // --- returns and the ledger -------------------------------------------------------------------

  /// One transaction on the writer (BEGIN IMMEDIATE: nothing changes between the checks and the
  /// writes). The ledger entry is written by the returns table's trigger.
  ReturnResult record_return(const ReturnRequest& r) override {
    return guarded("record_return", ReturnResult{}, [&]() -> ReturnResult {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return (report(c, rc, "record_return"), ReturnResult{});
      ReturnResult out;
      if (int rc = return_in_transaction(c, r, out))
        return (report(c, rc, "record_return"), ReturnResult{});
      if (int rc = tx.commit()) return (report(c, rc, "record_return"), ReturnResult{});
      return out;
    });
  }

  /// One transaction (one fsync) for the whole batch, each return checked as it would be alone
  /// after the ones before it. If the store fails on any of them, none is kept and every one
  /// answers kUnavailable.
  std::vector<ReturnResult> record_returns(std::span<const ReturnRequest> rs) override {
    const std::vector<ReturnResult> all_failed(rs.size());
    return guarded("record_returns", all_failed, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return (report(c, rc, "record_returns"), all_failed);
      std::vector<ReturnResult> out(rs.size());
      for (std::size_t i = 0; i < rs.size(); ++i)
        if (int rc = return_in_transaction(c, rs[i], out[i]))
          return (report(c, rc, "record_returns"), all_failed);
      if (int rc = tx.commit()) return (report(c, rc, "record_returns"), all_failed);
      return out;
    });
  }

  /// record_return's checks and writes, inside the caller's transaction on the writer. A
  /// SQLite failure is returned (the caller rolls back); a refusal is an answer in `out`.
  static int return_in_transaction(Connection& c, const ReturnRequest& r, ReturnResult& out) {
    LeadReturn& ret = out.ret;
    {
      Query q(c,
              "SELECT leads.status, sales.price_cents, sales.payout_cents, sales.sold_at"
              " FROM leads LEFT JOIN sales ON sales.lead_id = leads.id AND sales.buyer_id = ?2"
              " WHERE leads.id = ?1");
      const int rc = q.bind(r.lead_id).bind(r.buyer_id).step();
      if (rc == SQLITE_DONE) return (out.status = ReturnStatus::kNoSuchLead, SQLITE_OK);
      if (rc != SQLITE_ROW) return rc;
      if (q.is_null(1)) return (out.status = ReturnStatus::kNotSold, SQLITE_OK);
      ret.price = q.int64(1);
      ret.payout = q.int64(2);
      ret.sold_at_ms = q.int64(3);
    }
    {
      Query q(c, "SELECT " LF_RETURN_COLUMNS " FROM returns WHERE lead_id = ?1 AND buyer_id = ?2");
      const int rc = q.bind(r.lead_id).bind(r.buyer_id).step();
      if (rc == SQLITE_ROW) {
        out.ret = read_return(q);
        out.status = ReturnStatus::kAlreadyReturned;
        return SQLITE_OK;
      }
      if (rc != SQLITE_DONE) return rc;
    }
    if (!admit_return(r, out)) return SQLITE_OK;
    {
      Query q(c, "INSERT INTO returns (" LF_RETURN_COLUMNS
                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      q.bind(ret.lead_id)
          .bind(ret.buyer_id)
          .bind(ret.reason)
          .bind(ret.note)
          .bind(ret.by_key_id)
          .bind(ret.price)
          .bind(ret.payout)
          .bind(ret.sold_at_ms)
          .bind(ret.returned_at_ms);
      if (int rc = q.run()) return rc;
    }
    {
      // Returned once no sale of it stands: a share returned leaves the others sold.
      Query q(c,
              "UPDATE leads SET status = 'returned' WHERE id = ?1 AND status = 'delivered'"
              " AND NOT EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = ?1"
              "  AND NOT EXISTS (SELECT 1 FROM returns WHERE returns.lead_id = ?1"
              "   AND returns.buyer_id = sales.buyer_id))");
      if (int rc = q.bind(r.lead_id).run()) return rc;
    }
    out.status = ReturnStatus::kReturned;
    return SQLITE_OK;
  }

  /// One transaction on the writer; a sale's ledger entry is written by the sales trigger.
  SettleResult settle_lead(const Settlement& asked, const PayoutRule& payout) override {
    return guarded("settle_lead", SettleResult{}, [&]() -> SettleResult {
      SettleResult out;
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      const auto failed = [&](int rc) {
        report(c, rc, "settle_lead");
        return SettleResult{};
      };
      if (int rc = tx.begin()) return failed(rc);
      Settlement s = asked;
      // The lead: failed, or settled before (a shared sale is settled buyer by buyer).
      std::string status;
      {
        Query q(c,
                "SELECT status, EXISTS (SELECT 1 FROM settlements WHERE lead_id = ?1)"
                " FROM leads WHERE id = ?1");
        const int rc = q.bind(s.lead_id).step();
        if (rc == SQLITE_DONE) return (out.status = SettleStatus::kNoSuchLead, out);
        if (rc != SQLITE_ROW) return failed(rc);
        status = q.text(0);
        if (status != "failed" && !q.boolean(1))
          return (out.status = SettleStatus::kNotUnknown, out);
      }
      if (s.buyer_id.empty()) {
        Query q(c, "SELECT buyer_id FROM post_intents WHERE lead_id = ?1 LIMIT 2");
        q.bind(s.lead_id);
        int rc;
        int found = 0;
        while ((rc = q.step()) == SQLITE_ROW) {
          ++found;
          s.buyer_id = q.text(0);
        }
        if (rc != SQLITE_DONE) return failed(rc);
        if (found == 0) return (out.status = SettleStatus::kNotUnknown, out);
        if (found > 1) return (out.status = SettleStatus::kBuyerNeeded, out);
      }
      {
        Query q(c, "SELECT " LF_SETTLEMENT_COLUMNS
                   " FROM settlements WHERE lead_id = ?1 AND buyer_id = ?2");
        const int rc = q.bind(s.lead_id).bind(s.buyer_id).step();
        if (rc == SQLITE_ROW) return {SettleStatus::kAlreadySettled, read_settlement(q)};
        if (rc != SQLITE_DONE) return failed(rc);
      }
      {
        Query q(c, "SELECT 1 FROM post_intents WHERE lead_id = ?1 AND buyer_id = ?2");
        const int rc = q.bind(s.lead_id).bind(s.buyer_id).step();
        if (rc == SQLITE_DONE) return (out.status = SettleStatus::kNotUnknown, out);
        if (rc != SQLITE_ROW) return failed(rc);
      }
      // What the lead's sales (settled ones, for a shared sale) hold so far.
      std::int64_t slots = 0;
      Cents revenue = 0, paid = 0;
      {
        Query q(c,
                "SELECT COUNT(*), COALESCE(SUM(price_cents), 0), COALESCE(SUM(payout_cents), 0)"
                " FROM sales WHERE lead_id = ?1");
        const int rc = q.bind(s.lead_id).step();
        if (rc != SQLITE_ROW) return failed(rc);
        slots = q.int64(0);
        revenue = q.int64(1);
        paid = q.int64(2);
      }
      s.payout = s.sold ? payout(revenue + s.price) - paid : 0;
      {
        Query q(c, "INSERT INTO settlements (" LF_SETTLEMENT_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
        q.bind(s.lead_id)
            .bind(s.buyer_id)
            .bind(s.sold)
            .bind(s.price)
            .bind(s.payout)
            .bind(s.buyer_lead_id)
            .bind(s.note)
            .bind(s.by_key_id)
            .bind(s.at_ms);
        if (int rc = q.run()) return failed(rc);
      }
      if (s.sold) {
        {
          Query q(c,
                  "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
                  " email, phone, buyer_lead_id) SELECT id, ?2, ?3, ?4, ?5, ?6, email, phone, ?7"
                  " FROM leads WHERE id = ?1");
          if (int rc = q.bind(s.lead_id)
                           .bind(slots)
                           .bind(s.buyer_id)
                           .bind(s.price)
                           .bind(s.payout)
                           .bind(s.at_ms)
                           .bind(s.buyer_lead_id)
                           .run())
            return failed(rc);
        }
        // The lead sums its sales up; the first buyer to take it is the one it names.
        Query q(c,
                "UPDATE leads SET status = 'delivered', price_cents = ?2, payout_cents = ?3,"
                " buyer_id = CASE WHEN ?4 = 0 THEN ?5 ELSE buyer_id END,"
                " buyer_lead_id = CASE WHEN ?4 = 0 THEN ?6 ELSE buyer_lead_id END,"
                " reason = ?7, decided_at = ?8 WHERE id = ?1");
        if (int rc = q.bind(s.lead_id)
                         .bind(revenue + s.price)
                         .bind(paid + s.payout)
                         .bind(slots)
                         .bind(s.buyer_id)
                         .bind(s.buyer_lead_id)
                         .bind(settled_reason(true))
                         .bind(s.at_ms)
                         .run())
          return failed(rc);
        if (status == "failed")
          if (int rc = settled_in_rollup(c, s.lead_id, true)) return failed(rc);
      } else {
        // Unsold once no buyer is left to settle and none took it.
        Query q(c,
                "UPDATE leads SET status = 'unsold', reason = ?2, decided_at = ?3"
                " WHERE id = ?1 AND status = 'failed'"
                " AND NOT EXISTS (SELECT 1 FROM post_intents WHERE lead_id = ?1"
                "  AND buyer_id NOT IN (SELECT buyer_id FROM settlements WHERE lead_id = ?1))");
        if (int rc = q.bind(s.lead_id).bind(settled_reason(false)).bind(s.at_ms).run())
          return failed(rc);
        if (c.changes() > 0)
          if (int rc = settled_in_rollup(c, s.lead_id, false)) return failed(rc);
      }
      if (int rc = tx.commit()) return failed(rc);
      return {SettleStatus::kSettled, std::move(s)};
    });
  }

  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view lead_id) override {
    return read_rows<Settlement>(
        "settlements_of_lead",
        "SELECT " LF_SETTLEMENT_COLUMNS
        " FROM settlements WHERE lead_id = ?1 ORDER BY at, buyer_id",
        [&](Query& q) { q.bind(lead_id); }, read_settlement<Query>);
  }

  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view lead_id) override {
    return read_rows<LeadReturn>(
        "returns_of_lead",
        "SELECT " LF_RETURN_COLUMNS " FROM returns WHERE lead_id = ?1 ORDER BY returned_at",
        [&](Query& q) { q.bind(lead_id); }, read_return<Query>);
  }

  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& lq) override {
    return read_rows<LedgerEntry>(
        "list_ledger",
        "SELECT " LF_LEDGER_COLUMNS
        " FROM ledger_entries"
        " WHERE (?1 = '' OR lead_id = ?1) AND id > ?2 ORDER BY id LIMIT ?3",
        [&](Query& q) { q.bind(lq.lead_id).bind(lq.after_id).bind(clamp_limit(lq.limit)); },
        read_ledger_entry<Query>);
  }

  std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                          std::int64_t since_ms) override {
    return guarded(
        "return_stats", std::optional<ReturnStats>{}, [&]() -> std::optional<ReturnStats> {
          auto conn = readers_.acquire();
          if (!conn) return std::nullopt;
          Query q(*conn,
                  "SELECT (SELECT COUNT(*) FROM sales"
                  "  WHERE buyer_id = ?1 AND sold_at >= ?2),"
                  " (SELECT COUNT(*) FROM returns WHERE buyer_id = ?1 AND sold_at >= ?2)");
          const int rc = q.bind(buyer_id).bind(since_ms).step();
          if (rc != SQLITE_ROW) {
            report(*conn, rc, "return_stats");
            return std::nullopt;
          }
          return ReturnStats{q.int64(0), q.int64(1)};
        });
  }

  std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view email,
                                          std::string_view phone, std::int64_t since_ms) override {
    return guarded("buyer_bought_person", std::optional<bool>{}, [&]() -> std::optional<bool> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      bool failed = false;
      auto probe = [&](const char* sql, std::string_view key) {
        if (key.empty() || failed) return false;
        Query q(*conn, sql);
        const int rc = q.bind(buyer_id).bind(key).bind(since_ms).step();
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
          report(*conn, rc, "buyer_bought_person");
          failed = true;
        }
        return rc == SQLITE_ROW;
      };
      const bool bought =
          probe(
              "SELECT 1 FROM sales WHERE buyer_id = ?1 AND email = ?2 AND sold_at >= ?3"
              " LIMIT 1",
              email) ||
          probe(
              "SELECT 1 FROM sales WHERE buyer_id = ?1 AND phone = ?2 AND sold_at >= ?3"
              " LIMIT 1",
              phone);
      if (failed) return std::nullopt;
      return bought;
    });
  }

  /// `invalid` counts whole hours: posts in the hour that contains `since_ms` all count.
  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& rq) override {
    static constexpr const char* kColumns[] = {"sales",   "revenue",          "payout",
                                               "returns", "returned_revenue", "returned_payout"};
    auto sums =
        fold_rollup<6>("revenue_rollup", store_rows::RollupKind::kRevenue, "revenue", kColumns, rq);
    if (!sums) return std::nullopt;
    std::vector<RevenueCell> out;
    out.reserve(sums->size());
    for (auto& [key, f] : *sums)
      out.push_back({key.first, std::move(key.second), f[0], f[1], f[2], f[3], f[4], f[5]});
    return out;
  }

  std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                           std::int64_t since_ms) override {
    return guarded(
        "count_queued", std::optional<std::int64_t>{}, [&]() -> std::optional<std::int64_t> {
          auto conn = readers_.acquire();
          if (!conn) return std::nullopt;
          // The leads still pending are few, whatever the campaign's history holds.
          Query q(*conn,
                  "SELECT COUNT(*) FROM leads INDEXED BY leads_by_status WHERE status = 'pending'"
                  " AND campaign_id = ?1 AND received_at >= ?2");
          const int rc = q.bind(campaign_id).bind(since_ms).step();
          if (rc == SQLITE_ROW) return q.int64(0);
          report(*conn, rc, "count_queued");
          return std::nullopt;
        });
  }

  /// The campaign's count, and its row of the performance rollup, in one transaction.
  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override {
    guarded("count_invalid", 0, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "count_invalid"), 0;
      {
        Query q(c,
                "INSERT INTO invalid_counts (campaign_id, hour_start, count) VALUES (?1, ?2, 1)"
                " ON CONFLICT (campaign_id, hour_start) DO UPDATE SET count = count + 1");
        if (int rc = q.bind(campaign_id).bind(hour_start(at_ms)).run())
          return report(c, rc, "count_invalid"), 0;
      }
      {
        Query q(c,
                "INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id,"
                " vertical, source, invalid) SELECT ?2, seller_id, id, '', vertical, '', 1"
                " FROM campaigns WHERE id = ?1"
                " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source)"
                " DO UPDATE SET invalid = invalid + 1");
        if (int rc = q.bind(campaign_id).bind(at_ms - at_ms % kRollupBucketMs).run())
          return report(c, rc, "count_invalid"), 0;
      }
      {
        static const std::string sql =
            "INSERT INTO performance_tiers (tier, bucket, seller_id, campaign_id, buyer_id,"
            " vertical, source, invalid) SELECT t.tier, ?2 - ?2 % t.grain_ms, " +
            store_rows::tier_key_columns({"c.seller_id", "c.id", "''", "c.vertical", "''"}) +
            ", 1 FROM campaigns AS c, rollup_tiers AS t WHERE c.id = ?1"
            " ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)"
            " DO UPDATE SET invalid = invalid + 1";
        Query q(c, sql);
        if (int rc = q.bind(campaign_id).bind(at_ms - at_ms % kRollupBucketMs).run())
          return report(c, rc, "count_invalid"), 0;
      }
      if (int rc = tx.commit()) return report(c, rc, "count_invalid"), 0;
      return 0;
    });
  }

  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& rq) override {
    auto sums = fold_rollup<kFigures>("performance_rollup", store_rows::RollupKind::kPerformance,
                                      "performance", kPerformanceColumns, rq);
    if (!sums) return std::nullopt;
    std::vector<PerformanceCell> out;
    out.reserve(sums->size());
    for (auto& [key, f] : *sums) out.push_back({key.first, std::move(key.second), f});
    return out;
  }

  /// The sums of a rollup for `rq`, per bucket (by_bucket) and group keys, in the order of
  /// those: the rows of each range of the plan (store_rows::plan_rollup: the tiers' whole hours
  /// and days, quarter hours at the edges) are read in the table's key order and added up
  /// here. SQLite runs an aggregate step for every row and every SUM (27 of them for a
  /// performance row), which was most of a report's time: over 3 million generated leads a
  /// 30-day performance report by buyer spent seconds in SUM steps over 1.3 million rows
  /// (scripts/bench.sh reports). Same answers as SUM ... GROUP BY: integer sums, and one cell
  /// of zeros for a sum with neither cut nor keys over no rows.
  template <std::size_t N>
  std::optional<
      std::map<std::pair<std::int64_t, std::vector<std::string>>, std::array<std::int64_t, N>>>
  fold_rollup(const char* op, store_rows::RollupKind kind, const std::string& table,
              const char* const (&columns)[N], const RollupQuery& rq) {
    using Sums =
        std::map<std::pair<std::int64_t, std::vector<std::string>>, std::array<std::int64_t, N>>;
    // ?1 and ?2 the range, ?3 the tier (in the tiers' table), then the filters.
    const auto select = [&](bool tiers) {
      std::string sql = "SELECT bucket";
      for (ReportKey k : rq.group) sql += std::string(", ") + rollup_column(k);
      for (const char* c : columns) sql += std::string(", ") + c;
      sql += " FROM " + table + (tiers ? "_tiers" : "_rollup") +
             " WHERE bucket >= ?1 AND bucket < ?2 AND " + (tiers ? "tier = ?3" : "?3 = 0");
      int n = 3;
      for (const auto& f : rq.filters)
        sql += std::string(" AND ") + rollup_column(f.first) + " = ?" + std::to_string(++n);
      return sql;
    };
    const std::vector<store_rows::RollupRange> plan = store_rows::plan_rollup(rq, kind);
    // With cuts, a row counts in the stretch holding its bucket.
    const std::vector<std::int64_t> starts = store_rows::sum_starts(rq);
    // Without cuts (no stretch starts at or before it), the row's own bucket.
    const auto sum_of = [&](std::int64_t bucket) {
      const auto after = std::upper_bound(starts.begin(), starts.end(), bucket);
      return after == starts.begin() ? bucket : *(after - 1);
    };
    return guarded(op, std::optional<Sums>{}, [&]() -> std::optional<Sums> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Sums sums;
      std::pair<std::int64_t, std::vector<std::string>> key{0, {}};
      key.second.resize(rq.group.size());
      const int first = 1 + static_cast<int>(rq.group.size());
      const std::string rollup_sql = select(false), tiers_sql = select(true);
      for (const store_rows::RollupRange& range : plan) {
        Query q(*conn, range.tier == 0 ? rollup_sql : tiers_sql);
        q.bind(range.from_ms).bind(range.to_ms).bind(static_cast<std::int64_t>(range.tier));
        for (const auto& f : rq.filters) q.bind(std::string_view(f.second));
        // Rows of one cell come together when there are no keys (sorted by bucket); otherwise
        // they are looked up by their keys.
        int rc;
        std::array<std::int64_t, N>* cell = nullptr;
        while ((rc = q.step()) == SQLITE_ROW) {
          const std::int64_t bucket = rq.by_bucket ? sum_of(q.int64(0)) : 0;
          bool same = cell != nullptr && bucket == key.first;
          for (std::size_t k = 0; k < rq.group.size(); ++k) {
            std::string v = q.text(1 + static_cast<int>(k));
            if (same && v != key.second[k]) same = false;
            key.second[k] = std::move(v);
          }
          if (!same) {
            key.first = bucket;
            auto [it, fresh] = sums.try_emplace(key);
            if (fresh) it->second.fill(0);
            cell = &it->second;
          }
          for (std::size_t i = 0; i < N; ++i) (*cell)[i] += q.int64(first + static_cast<int>(i));
        }
        if (rc != SQLITE_DONE) {
          report(*conn, rc, op);
          return std::nullopt;
        }
      }
      if (!rq.by_bucket && rq.group.empty() && sums.empty()) sums[{0, {}}].fill(0);
      return sums;
    });
  }

  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& rq) override {
    static constexpr const char* kColumns[] = {"leads"};
    auto sums =
        fold_rollup<1>("unsold_rollup", store_rows::RollupKind::kUnsold, "unsold", kColumns, rq);
    if (!sums) return std::nullopt;
    std::vector<UnsoldCell> out;
    out.reserve(sums->size());
    for (auto& [key, f] : *sums) out.push_back({key.first, std::move(key.second), f[0]});
    return out;
  }

 private:
  static std::int64_t clamp_limit(int limit) { return std::clamp<std::int64_t>(limit, 1, 1000); }

  static std::int64_t hour_start(std::int64_t ms) {
    const std::int64_t h = ms / kHourMs - (ms % kHourMs < 0 ? 1 : 0);  // floor, also below 0
    return h * kHourMs;
  }

  /// A settlement moved a failed lead to sold or unsold: so do its rows of the rollups.
  static int settled_in_rollup(Connection& c, std::string_view lead_id, bool sold) {
    LeadKeys keys;
    if (int rc = read_lead_keys(c, lead_id, keys)) return rc;
    OutcomeDeltas deltas;
    store_rows::add_settled(deltas.performance, keys, sold);
    if (!sold) store_rows::add_settled_unsold(deltas.unsold, keys);
    return write_outcome_deltas(c, deltas);
  }

  static std::vector<LeadInsertResult> failed(const Connection& c, int rc, const char* op,
                                              std::vector<LeadInsertResult>& results) {
    report(c, rc, op);
    results.clear();
    return results;
  }

  /// kOk-like `found` when the row of `sql` (one ?1 parameter) exists, kNotFound when not.
  /// One writing statement; kNotFound when it changed no row.
  template <class Bind>
  StoreStatus changed_one(const char* op, const char* sql, Bind&& bind) {
    return guarded(op, StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Query q(c, sql);
      bind(q);
      if (int rc = q.run()) return report(c, rc, op);
      return c.changes() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
    });
  }

  /// A conditional write of one record on the writer (held): `sql` changes the row whose id is
  /// `id` if it is at the version its last parameter names (0: any), adds one to the version and
  /// returns it. kOk with `version` the new one; kConflict when the row of `exists_sql` (one ?1
  /// parameter: `id`) is there but moved on, kNotFound when it is not.
  template <class Bind>
  static StoreStatus write_versioned(Connection& c, const char* op, const char* sql,
                                     const char* exists_sql, std::string_view id, Bind&& bind,
                                     std::int64_t& version) {
    {
      Query q(c, sql);
      bind(q);
      const int rc = q.step();
      if (rc == SQLITE_ROW) {
        version = q.int64(0);
        return StoreStatus::kOk;
      }
      if (rc != SQLITE_DONE) return report(c, rc, op);
    }
    return exists(c, exists_sql, id, op, StoreStatus::kConflict);
  }

  static StoreStatus exists(Connection& c, const char* sql, std::string_view key, const char* op,
                            StoreStatus found) {
    Query q(c, sql);
    const int rc = q.bind(key).step();
    if (rc == SQLITE_ROW) return found;
    if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
    return report(c, rc, op);
  }

  /// A buyer change and the version bump, in one transaction.
  template <class Body>
  StoreStatus write_buyer(const char* op, Body&& body) {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, op);
    const StoreStatus st = body(c);
    if (st != StoreStatus::kOk) return st;
    if (int rc = Query(c, "UPDATE buyers_version SET version = version + 1 WHERE id = 1").run())
      return report(c, rc, op);
    if (int rc = tx.commit()) return report(c, rc, op);
    return StoreStatus::kOk;
  }

  std::atomic<std::int64_t> last_buyers_version_{0};
};

#undef LF_LEAD_COLUMNS
#undef LF_DISTRIBUTION_COLUMNS
#undef LF_CAMPAIGN_COLUMNS
#undef LF_API_KEY_COLUMNS
#undef LF_API_KEY_READ_COLUMNS
#undef LF_BUYER_COLUMNS
#undef LF_RETURN_COLUMNS
#undef LF_SETTLEMENT_COLUMNS
#undef LF_SELLER_COLUMNS
#undef LF_LEDGER_COLUMNS

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const std::string& path, std::string& error) {
  try {
    auto writer = Connection::open(path, /*writer=*/true, error);
    if (!writer) return nullptr;
    return std::make_unique<SqliteStore>(path, std::move(writer));
  } catch (const std::exception& e) {
    error = std::string("cannot open SQLite database '") + path + "': " + e.what();
    return nullptr;
  }
}

}  // namespace leadflow
