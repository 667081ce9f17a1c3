// The PostgreSQL adapter of the Store port (scale-out: several ingest and worker processes share
// one database). The SQLite adapter is the reference for every behaviour; this file promises the
// same through the contract suite (tests/support/store_contract_tests.inc).
//
// Connections: a fixed pool, each connection used by one thread at a time. A connection found
// broken (server restarted, backend killed) is dropped and re-made on a later use; a call whose
// connection died before it could have committed anything is retried once on a fresh one, so a
// PostgreSQL restart costs few failed calls. While the server is down, connecting fails fast
// (connect_timeout, TCP keepalives and tcp_user_timeout bound every wait) and calls answer
// kUnavailable / nullopt / empty.
//
// Queries are PQexecParams with text parameters only; batches travel as array parameters
// (unnest), so a batch costs a few round trips, not one per row. A batch whose rows each need a
// statement of their own (post intents) is sent as one pipeline: one round trip. Every libpq
// failure becomes a StoreStatus here: integrity violations (SQLSTATE class 23) are kConflict,
// everything else is kUnavailable. Internally failures are thrown as PgError and caught at the
// port: no exception leaves the adapter. The schema is in schema.cpp, the libpq wrapper in
// driver.hpp.

#include "leadflow/store/pg_store.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attempt_times.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "performance_rows.hpp"
#include "pg/driver.hpp"
#include "pg/redact.hpp"
#include "pg/rollup_rows.hpp"
#include "pg/schema.hpp"
#include "rollup_tiers.hpp"
#include "rows.hpp"
#include "unsold_rows.hpp"

namespace leadflow {
namespace {

using nlohmann::json;
using namespace store_rows;  // the column lists and row readers shared with SQLite
using namespace pg;          // the libpq wrapper (driver.hpp)

constexpr std::int64_t kHourMs = 3'600'000;
// libpq settings bounding every wait on a dead server or network: keepalives find a silent peer
// within about a minute of idleness, tcp_user_timeout fails a send the peer never acknowledges.
constexpr const char* kKeepalivesIdleS = "30";
constexpr const char* kKeepalivesIntervalS = "10";
constexpr const char* kKeepalivesCount = "3";
constexpr const char* kTcpUserTimeoutMs = "15000";

// A watch whose connection is lost tries again this often.
constexpr auto kWatchRetryPause = std::chrono::milliseconds(200);

// ------------------------------------------------------------------------------------------------
// Announcements: NOTIFY, and a LISTEN on a connection of its own
// ------------------------------------------------------------------------------------------------

/// Whether `channel` may be used as an (unquoted-safe) PostgreSQL channel name.
bool valid_channel(std::string_view channel) {
  if (channel.empty() || channel.size() > 63) return false;
  return std::all_of(channel.begin(), channel.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
}

/// A LISTEN on a connection outside the pool, served by one thread: it waits on the
/// connection's socket and on an eventfd (stop), hands every notification's payload to the
/// callback, and after a lost connection connects and listens again, pausing between attempts
/// and logging once per outage. Each time it listens it calls `on_listening` first.
class PgWatch final : public StoreWatch {
 public:
  PgWatch(ConnectSettings settings, std::string channel,
          std::function<void(std::string_view)> on_payload, std::function<void()> on_listening)
      : settings_(std::move(settings)),
        channel_(std::move(channel)),
        on_payload_(std::move(on_payload)),
        on_listening_(std::move(on_listening)),
        wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    thread_ = std::thread([this] { run(); });
  }
  PgWatch(const PgWatch&) = delete;
  PgWatch& operator=(const PgWatch&) = delete;
  ~PgWatch() override {
    stopping_ = true;
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_, &one, sizeof one);
    thread_.join();
    ::close(wake_);
  }

  bool listening() const override { return listening_; }

 private:
  /// Waits until `fd` is readable, stop() is called or `timeout_ms` passes (-1: no limit).
  /// False once stopping.
  bool wait(int fd, int timeout_ms) {
    pollfd fds[2] = {{wake_, POLLIN, 0}, {fd, POLLIN, 0}};
    while (!stopping_) {
      const int rc = ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
      if (rc >= 0 || errno != EINTR) break;
    }
    return !stopping_;
  }

  void run() {
    std::unique_ptr<Connection> conn;
    bool down = false;
    const std::string listen = "LISTEN " + channel_;
    while (!stopping_) {
      if (!conn) {
        std::string error;
        conn = Connection::open(settings_, error);
        if (conn) {
          try {
            conn->exec_script(listen.c_str(), Effect::kRead);
          } catch (const PgError& e) {
            conn.reset();
            error = e.message;
          }
        }
        if (!conn) {
          if (!std::exchange(down, true))
            log(LogLevel::kWarn, "store_watch_down", {{"channel", channel_}, {"detail", error}});
          wait(-1, static_cast<int>(kWatchRetryPause.count()));
          continue;
        }
        if (std::exchange(down, false))
          log(LogLevel::kInfo, "store_watch_resumed", {{"channel", channel_}});
        // Listening from here: what the callback reads now, and what is announced from now on,
        // leave nothing out.
        listening_ = true;
        if (on_listening_) {
          try {
            on_listening_();
          } catch (const std::exception& e) {
            log(LogLevel::kError, "store_watch_callback_failed",
                {{"channel", channel_}, {"error", e.what()}});
          }
        }
      }
      if (!wait(conn->socket(), -1)) break;
      try {
        for (const std::string& payload : conn->take_notifications()) {
          try {
            on_payload_(payload);
          } catch (const std::exception& e) {
            log(LogLevel::kError, "store_watch_callback_failed",
                {{"channel", channel_}, {"error", e.what()}});
          }
        }
      } catch (const PgError& e) {
        log(LogLevel::kWarn, "store_watch_down", {{"channel", channel_}, {"detail", e.message}});
        listening_ = false;
        down = true;
        conn.reset();
      }
    }
  }

  const ConnectSettings settings_;
  const std::string channel_;
  const std::function<void(std::string_view)> on_payload_;
  const std::function<void()> on_listening_;
  const int wake_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> listening_{false};
  std::thread thread_;
};

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

/// The PostgreSQL Store. Thread-safe: every call leases a connection from the pool; several
/// processes may share one database (atomicity comes from transactions, row locks and advisory
/// locks, never from in-process mutexes).
class PgStore final : public Store, private PgCalls {
 public:
  explicit PgStore(ConnectSettings settings, std::size_t pool_size)
      : PgCalls(std::move(settings), pool_size) {}

  using PgCalls::pool;

  // --- schema -----------------------------------------------------------------------------------

  StoreStatus migrate() override {
    return run("migrate", StoreStatus::kUnavailable,
               [&](Connection& c) { return apply_migrations(c); });
  }

  bool healthy() override {
    return run("healthy", false,
               [&](Connection& c) { return c.exec("SELECT 1", Effect::kRead).rows() == 1; });
  }

  // --- accounts ---------------------------------------------------------------------------------

  StoreStatus insert_seller(const Seller& s) override {
    return write("insert_seller",
                 "INSERT INTO sellers (" LF_SELLER_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6)",
                 Params()
                     .add(s.id)
                     .add(s.name)
                     .add(s.active)
                     .add(s.created_at_ms)
                     .add(s.payout_fixed)
                     .add(s.payout_value));
  }

  std::optional<Seller> get_seller(std::string_view id) override {
    return read_one<Seller>("get_seller",
                            "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers WHERE id = $1",
                            Params().add(id), read_seller<Row>);
  }

  StoreStatus update_seller(Seller& s) override {
    return run("update_seller", StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(
          "WITH changed AS (UPDATE sellers SET name = $2, active = $3, payout_fixed = $4,"
          " payout_value = $5, version = version + 1"
          " WHERE id = $1 AND ($6::BIGINT = 0 OR version = $6::BIGINT) RETURNING version)"
          " SELECT (SELECT version FROM changed), EXISTS (SELECT 1 FROM sellers WHERE id = $1)",
          Params()
              .add(s.id)
              .add(s.name)
              .add(s.active)
              .add(s.payout_fixed)
              .add(s.payout_value)
              .add(s.version),
          Effect::kWrite);
      return versioned(r, s.version);
    });
  }

  std::vector<Seller> list_sellers() override {
    return read_all<Seller>("list_sellers",
                            "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers ORDER BY id", Params(),
                            read_seller<Row>);
  }

  StoreStatus insert_campaign(const Campaign& c) override {
    return write("insert_campaign",
                 "INSERT INTO campaigns (" LF_CAMPAIGN_COLUMNS
                 ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                 Params()
                     .add(c.id)
                     .add(c.seller_id)
                     .add(c.name)
                     .add(c.vertical)
                     .add(c.active)
                     .add(c.async_mode)
                     .add(c.sync_timeout_ms)
                     .add(c.rate_limit_per_minute)
                     .add(c.payout_fixed)
                     .add(c.payout_value)
                     .add(c.key_hash)
                     .add(c.key_hint)
                     .add(c.created_at_ms));
  }

  std::optional<Campaign> get_campaign(std::string_view id) override {
    return read_one<Campaign>("get_campaign",
                              "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE id = $1",
                              Params().add(id), read_campaign<Row>);
  }

  StoreStatus update_campaign(Campaign& cp) override {
    return run("update_campaign", StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(
          "WITH changed AS (UPDATE campaigns SET name = $2, active = $3, async_mode = $4,"
          " sync_timeout_ms = $5, rate_limit_per_minute = $6, payout_fixed = $7,"
          " payout_value = $8, version = version + 1"
          " WHERE id = $1 AND ($9::BIGINT = 0 OR version = $9::BIGINT) RETURNING version)"
          " SELECT (SELECT version FROM changed), EXISTS (SELECT 1 FROM campaigns WHERE id = $1)",
          Params()
              .add(cp.id)
              .add(cp.name)
              .add(cp.active)
              .add(cp.async_mode)
              .add(cp.sync_timeout_ms)
              .add(cp.rate_limit_per_minute)
              .add(cp.payout_fixed)
              .add(cp.payout_value)
              .add(cp.version),
          Effect::kWrite);
      return versioned(r, cp.version);
    });
  }

  Lookup<Campaign> find_campaign_by_key_hash(std::string_view key_hash) override {
    return lookup<Campaign>("find_campaign_by_key_hash",
                            "SELECT " LF_CAMPAIGN_READ_COLUMNS
                            " FROM campaigns WHERE key_hash = $1",
                            Params().add(key_hash), read_campaign<Row>);
  }

  std::vector<Campaign> list_campaigns(std::string_view seller_id) override {
    return read_all<Campaign>("list_campaigns",
                              "SELECT " LF_CAMPAIGN_READ_COLUMNS
                              " FROM campaigns"
                              " WHERE $1 = '' OR seller_id = $1 ORDER BY id",
                              Params().add(seller_id), read_campaign<Row>);
  }

  StoreStatus insert_api_key(const ApiKey& k) override {
    return write("insert_api_key",
                 "INSERT INTO api_keys (" LF_API_KEY_COLUMNS
                 ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                 Params()
                     .add(k.id)
                     .add_or_null(k.seller_id)
                     .add(k.name)
                     .add(to_string(k.plan))
                     .add(static_cast<std::int64_t>(k.scopes))
                     .add(k.key_hash)
                     .add(k.key_hint)
                     .add(k.created_at_ms)
                     .add(k.revoked_at_ms)
                     .add_or_null(k.buyer_id));
  }

  Lookup<ApiKey> find_api_key_by_hash(std::string_view key_hash) override {
    return lookup<ApiKey>("find_api_key_by_hash",
                          "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE key_hash = $1",
                          Params().add(key_hash), read_api_key<Row>);
  }

  std::vector<ApiKey> list_api_keys() override {
    return read_all<ApiKey>("list_api_keys",
                            "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys ORDER BY id",
                            Params(), read_api_key<Row>);
  }

  Lookup<ApiKey> get_api_key(std::string_view id) override {
    return lookup<ApiKey>("get_api_key",
                          "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE id = $1",
                          Params().add(id), read_api_key<Row>);
  }

  /// Revoking a revoked key is kOk and keeps the first revocation time.
  StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms,
                             std::int64_t if_version) override {
    return run("revoke_api_key", StoreStatus::kUnavailable, [&](Connection& c) {
      // 0 means "live": a revocation is never recorded as 0. The version read beside the
      // update is the one before it (one snapshot): it tells a key that moved on from one
      // revoked before at the version asked.
      const Result r = c.exec(
          "WITH revoked AS (UPDATE api_keys SET revoked_at = $2, version = version + 1"
          "                 WHERE id = $1 AND revoked_at = 0"
          "                 AND ($3::BIGINT = 0 OR version = $3::BIGINT) RETURNING 1)"
          " SELECT EXISTS (SELECT 1 FROM revoked), (SELECT version FROM api_keys WHERE id = $1)",
          Params().add(id).add(std::max<std::int64_t>(at_ms, 1)).add(if_version), Effect::kWrite);
      if (r.boolean(0, 0)) return StoreStatus::kOk;
      if (r.is_null(0, 1)) return StoreStatus::kNotFound;
      return if_version == kAnyVersion || r.int64(0, 1) == if_version ? StoreStatus::kOk
                                                                      : StoreStatus::kConflict;
    });
  }

  StoreStatus touch_api_key(std::string_view id, std::int64_t at_ms) override {
    return changed_one("touch_api_key",
                       "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND last_used_at < $2"
                       " RETURNING 1",
                       Params().add(id).add(at_ms));
  }

  // --- dashboard users and their sessions -------------------------------------------------------

  StoreStatus insert_user(const User& u) override {
    return write("insert_user",
                 "INSERT INTO users (" LF_USER_COLUMNS
                 ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                 Params()
                     .add(u.id)
                     .add(u.email)
                     .add(u.name)
                     .add_or_null(u.seller_id)
                     .add_or_null(u.buyer_id)
                     .add(u.password_hash)
                     .add(u.active)
                     .add(u.created_at_ms)
                     .add(u.last_login_at_ms));
  }

  Lookup<User> get_user(std::string_view id) override {
    return lookup<User>("get_user", "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE id = $1",
                        Params().add(id), read_user<Row>);
  }

  Lookup<User> find_user_by_email(std::string_view email) override {
    return lookup<User>("find_user_by_email",
                        "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE email = $1",
                        Params().add(email), read_user<Row>);
  }

  std::vector<User> list_users() override {
    return read_all<User>("list_users", "SELECT " LF_USER_READ_COLUMNS " FROM users ORDER BY id",
                          Params(), read_user<Row>);
  }

  StoreStatus update_user(User& u, std::string_view keep_session) override {
    return run("update_user", StoreStatus::kUnavailable, [&](Connection& c) {
      Transaction tx(c);
      const Result before = c.exec("SELECT password_hash <> $2 FROM users WHERE id = $1 FOR UPDATE",
                                   Params().add(u.id).add(u.password_hash), Effect::kWrite);
      if (before.rows() == 0) return StoreStatus::kNotFound;  // the transaction rolls back
      const Result changed = c.exec(
          "UPDATE users SET name = $2, active = $3, password_hash = $4,"
          " version = version + 1"
          " WHERE id = $1 AND ($5::BIGINT = 0 OR version = $5::BIGINT) RETURNING version",
          Params().add(u.id).add(u.name).add(u.active).add(u.password_hash).add(u.version),
          Effect::kWrite);
      // The row is locked and there: another change came first.
      if (changed.rows() == 0) return StoreStatus::kConflict;
      u.version = changed.int64(0, 0);
      if (!u.active || before.boolean(0, 0))
        c.exec("DELETE FROM user_sessions WHERE user_id = $1 AND token_hash <> $2",
               Params().add(u.id).add(keep_session), Effect::kWrite);
      tx.commit();
      return StoreStatus::kOk;
    });
  }

  StoreStatus set_user_password(std::string_view user_id, std::string_view password_hash,
                                std::string_view keep_session) override {
    return run("set_user_password", StoreStatus::kUnavailable, [&](Connection& c) {
      Transaction tx(c);
      const Result changed = c.exec(
          "UPDATE users SET password_hash = $2, version = version + 1"
          " WHERE id = $1 AND active RETURNING 1",
          Params().add(user_id).add(password_hash), Effect::kWrite);
      if (changed.rows() == 0) return StoreStatus::kNotFound;  // the transaction rolls back
      c.exec("DELETE FROM user_sessions WHERE user_id = $1 AND token_hash <> $2",
             Params().add(user_id).add(keep_session), Effect::kWrite);
      tx.commit();
      return StoreStatus::kOk;
    });
  }

  StoreStatus record_login(std::string_view user_id, std::int64_t at_ms, std::string_view rehashed,
                           std::string_view verified) override {
    return changed_one(
        "record_login",
        "UPDATE users SET last_login_at = $2,"
        " password_hash = CASE WHEN $3 <> '' AND password_hash = $4 THEN $3 ELSE password_hash END"
        " WHERE id = $1 RETURNING 1",
        Params().add(user_id).add(at_ms).add(rehashed).add(verified));
  }

  StoreStatus insert_session(const UserSession& s) override {
    return write("insert_session",
                 "INSERT INTO user_sessions (" LF_SESSION_COLUMNS
                 ") VALUES ($1, $2, $3, $4, $5, $6)",
                 Params()
                     .add(s.token_hash)
                     .add(s.user_id)
                     .add(s.csrf_token)
                     .add(s.created_at_ms)
                     .add(s.expires_at_ms)
                     .add(s.last_seen_at_ms));
  }

  Lookup<UserSession> find_session(std::string_view token_hash) override {
    return lookup<UserSession>(
        "find_session", "SELECT " LF_SESSION_COLUMNS " FROM user_sessions WHERE token_hash = $1",
        Params().add(token_hash), read_session<Row>);
  }

  StoreStatus touch_session(std::string_view token_hash, std::int64_t at_ms) override {
    return changed_one(
        "touch_session",
        "UPDATE user_sessions SET last_seen_at = $2 WHERE token_hash = $1 RETURNING 1",
        Params().add(token_hash).add(at_ms));
  }

  StoreStatus delete_session(std::string_view token_hash) override {
    return changed_one("delete_session",
                       "DELETE FROM user_sessions WHERE token_hash = $1 RETURNING 1",
                       Params().add(token_hash));
  }

  StoreStatus delete_user_sessions(std::string_view user_id) override {
    return write("delete_user_sessions", "DELETE FROM user_sessions WHERE user_id = $1",
                 Params().add(user_id));
  }

  StoreStatus delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) override {
    return write("delete_expired_sessions",
                 "DELETE FROM user_sessions WHERE expires_at <= $1 OR last_seen_at < $2",
                 Params().add(now_ms).add(idle_before_ms));
  }

  /// The answer of a conditional write of one record, a row of (the new version or NULL when
  /// nothing was written, whether the record exists): kOk with `version` the new one, kConflict
  /// when the record moved past the version asked, kNotFound when there is none.
  static StoreStatus versioned(const Result& r, std::int64_t& version) {
    if (!r.is_null(0, 0)) {
      version = r.int64(0, 0);
      return StoreStatus::kOk;
    }
    return r.boolean(0, 1) ? StoreStatus::kConflict : StoreStatus::kNotFound;
  }

  // --- dashboard users' second factor -----------------------------------------------------------

  Lookup<UserTotp> get_user_totp(std::string_view user_id) override {
    return lookup<UserTotp>("get_user_totp", LF_USER_TOTP_SELECT " WHERE user_id = $1",
                            Params().add(user_id), read_user_totp<Row>);
  }

  Lookup<UserTotp> find_user_totp_by_challenge(std::string_view challenge_hash) override {
    return lookup<UserTotp>("find_user_totp_by_challenge",
                            LF_USER_TOTP_SELECT
                            " WHERE challenge_hash = $1 AND challenge_hash <> ''",
                            Params().add(challenge_hash), read_user_totp<Row>);
  }

  StoreStatus begin_user_totp(const UserTotp& t) override {
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

  StoreStatus enable_user_totp(std::string_view user_id, std::int64_t step,
                               const std::vector<std::string>& recovery_hashes) override {
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

  StoreStatus accept_user_totp_step(std::string_view user_id, std::int64_t step) override {
    return changed_one("accept_user_totp_step",
                       "UPDATE user_totp SET last_step = $2"
                       " WHERE user_id = $1 AND enabled AND last_step < $2 RETURNING 1",
                       Params().add(user_id).add(step));
  }

  StoreStatus use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                std::int64_t at_ms) override {
    // 0 means "unused": a use is never recorded as 0.
    return changed_one("use_recovery_code",
                       "UPDATE user_recovery_codes SET used_at = $3"
                       " WHERE user_id = $1 AND code_hash = $2 AND used_at = 0 RETURNING 1",
                       Params().add(user_id).add(code_hash).add(std::max<std::int64_t>(at_ms, 1)));
  }

  StoreStatus set_user_totp_challenge(std::string_view user_id, std::string_view challenge_hash,
                                      std::int64_t expires_at_ms) override {
    return changed_one("set_user_totp_challenge",
                       "UPDATE user_totp SET challenge_hash = $2, challenge_expires_at = $3"
                       " WHERE user_id = $1 AND enabled RETURNING 1",
                       Params().add(user_id).add(challenge_hash).add(expires_at_ms));
  }

  StoreStatus take_user_totp_challenge(std::string_view user_id,
                                       std::string_view challenge_hash) override {
    return changed_one("take_user_totp_challenge",
                       "UPDATE user_totp SET challenge_hash = '', challenge_expires_at = 0"
                       " WHERE user_id = $1 AND challenge_hash = $2 AND challenge_hash <> ''"
                       " RETURNING 1",
                       Params().add(user_id).add(challenge_hash));
  }

  StoreStatus delete_user_totp(std::string_view user_id) override {
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

  /// One writing statement ending in RETURNING 1; kNotFound when it changed no row.
  StoreStatus changed_one(const char* op, const char* sql, const Params& params) {
    return run(op, StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(sql, params, Effect::kWrite);
      return r.rows() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
    });
  }

  // --- buyers -----------------------------------------------------------------------------------

  /// The buyer and the version bump in one statement (so in one transaction).
  StoreStatus insert_buyer(const Buyer& b) override {
    return run("insert_buyer", StoreStatus::kUnavailable, [&](Connection& c) {
      c.exec("WITH inserted AS (INSERT INTO buyers (" LF_BUYER_COLUMNS
             ", verticals)"
             "                  VALUES ($1, $2, $3, $4, $5, $6) RETURNING 1)"
             " UPDATE buyers_version SET version = version + 1"
             " WHERE id = 1 AND EXISTS (SELECT 1 FROM inserted)",
             Params()
                 .add(b.id)
                 .add(b.active)
                 .add(dump(buyer_to_json(b, /*mask_secrets=*/false)))
                 .add(b.created_at_ms)
                 .add(b.updated_at_ms)
                 .add(dump(json(b.verticals))),
             Effect::kWrite);
      return StoreStatus::kOk;
    });
  }

  /// Replaces the configuration; the creation time stays the one first stored.
  StoreStatus update_buyer(Buyer& b) override {
    return run("update_buyer", StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(
          "WITH updated AS (UPDATE buyers SET active = $2, doc = $3, updated_at = $4,"
          "                 verticals = $5, version = version + 1"
          "                 WHERE id = $1 AND ($6::BIGINT = 0 OR version = $6::BIGINT)"
          "                 RETURNING version),"
          " bumped AS (UPDATE buyers_version SET version = version + 1"
          "            WHERE id = 1 AND EXISTS (SELECT 1 FROM updated))"
          " SELECT (SELECT version FROM updated), EXISTS (SELECT 1 FROM buyers WHERE id = $1)",
          Params()
              .add(b.id)
              .add(b.active)
              .add(dump(buyer_to_json(b, /*mask_secrets=*/false)))
              .add(b.updated_at_ms)
              .add(dump(json(b.verticals)))
              .add(b.version),
          Effect::kWrite);
      return versioned(r, b.version);
    });
  }

  std::optional<Buyer> get_buyer(std::string_view id) override {
    return run("get_buyer", std::optional<Buyer>{}, [&](Connection& c) -> std::optional<Buyer> {
      const Result r = c.exec("SELECT " LF_BUYER_READ_COLUMNS " FROM buyers WHERE id = $1",
                              Params().add(id), Effect::kRead);
      if (r.rows() == 0) return std::nullopt;
      return read_buyer(Row{r, 0});
    });
  }

  std::vector<Buyer> list_buyers(const BuyerQuery& bq) override {
    return run("list_buyers", std::vector<Buyer>{}, [&](Connection& c) {
      Params params;
      if (bq.active)
        params.add(*bq.active);
      else
        params.add_null();
      params.add(bq.vertical).add(bq.after_id).add(clamp_limit(bq.limit));
      // Unnamed statements are planned with their parameter values, so the "$n IS NULL OR"
      // branches fold away before planning.
      const Result r = c.exec("SELECT " LF_BUYER_READ_COLUMNS
                              " FROM buyers"
                              " WHERE ($1::BOOLEAN IS NULL OR active = $1::BOOLEAN)"
                              " AND ($2 = '' OR verticals::JSONB ? $2)"
                              " AND id > $3 ORDER BY id LIMIT $4",
                              params, Effect::kRead);
      std::vector<Buyer> out;
      for (int i = 0; i < r.rows(); ++i)
        if (auto b = read_buyer(Row{r, i})) out.push_back(std::move(*b));
      return out;
    });
  }

  /// On a failed read, the last value seen: a transient error must not look like a change
  /// (a reload that then fails too would leave a worker with no buyers).
  std::int64_t buyers_version() override {
    return run("buyers_version", last_buyers_version_.load(), [&](Connection& c) {
      const Result r = c.exec("SELECT version FROM buyers_version WHERE id = 1", Effect::kRead);
      if (r.rows() == 0) return last_buyers_version_.load();
      const std::int64_t v = r.int64(0, 0);
      last_buyers_version_ = v;
      return v;
    });
  }

  // --- leads ------------------------------------------------------------------------------------

  /// One INSERT for the whole batch (its own transaction), then one read of the statuses of the
  /// leads that already existed. Rows are inserted in id order, so two batches sharing leads
  /// wait on each other instead of deadlocking. An empty vector means nothing was written.
  ///
  /// The transaction commits without waiting for its WAL to reach the disk (synchronous_commit
  /// off): a pending row is worth keeping only once something depends on it, and everything
  /// that does (the lead's post intent, its outcome) commits synchronously later, which flushes
  /// the WAL up to itself and so this insert with it. A server crash before that may lose the
  /// row; the lead, not yet committed in the queue, is delivered and inserted again. The
  /// worker waits on this insert before every auction, and a sync seller waits on the worker.
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads) override {
    return run("insert_leads", std::vector<LeadInsertResult>{}, [&](Connection& c) {
      std::vector<LeadInsertResult> results(leads.size());
      if (leads.empty()) return results;
      constexpr int kColumns = 24;
      ArrayText cols[kColumns];
      for (const Lead& l : leads) {
        int i = 0;
        for (std::string_view v :
             {std::string_view(l.id), std::string_view(l.seller_id),
              std::string_view(l.campaign_id), std::string_view(l.api_key_id),
              surface_name(l.surface), std::string_view(l.first_name),
              std::string_view(l.last_name), std::string_view(l.email), std::string_view(l.phone),
              std::string_view(l.zip_code), std::string_view(l.zip4), std::string_view(l.state),
              std::string_view(l.vertical), std::string_view(l.source),
              std::string_view(l.landing_page), std::string_view(l.ip_address),
              std::string_view(l.user_agent), std::string_view(l.trustedform_cert_url),
              std::string_view(l.jornaya_leadid)})
          cols[i++].add(v);
        if (l.tcpa_consent)
          cols[i++].add(*l.tcpa_consent);
        else
          cols[i++].add_null();
        cols[i++].add(l.tcpa_consent_text);
        cols[i++].add(dump(custom_fields_to_json(l.custom_fields)));
        cols[i++].add(l.received_at_ms);
        cols[i++].add(l.sync_wait_ms);
      }
      Params params;
      for (const auto& col : cols) params.add(col.str());

      std::vector<Statement> statements;
      statements.push_back({"BEGIN", Params()});
      statements.push_back({"SET LOCAL synchronous_commit TO OFF", Params()});
      statements.push_back(
          {"INSERT INTO leads (" LF_LEAD_COLUMNS ") SELECT " LF_LEAD_COLUMNS
           " FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::TEXT[],"
           " $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[], $11::TEXT[], $12::TEXT[],"
           " $13::TEXT[], $14::TEXT[], $15::TEXT[], $16::TEXT[], $17::TEXT[], $18::TEXT[],"
           " $19::TEXT[], $20::BOOLEAN[], $21::TEXT[], $22::TEXT[], $23::BIGINT[],"
           " $24::INTEGER[]) WITH ORDINALITY AS batch (" LF_LEAD_COLUMNS ", ord)"
           " ORDER BY id, ord ON CONFLICT (id) DO NOTHING RETURNING id",
           std::move(params)});
      statements.push_back({"COMMIT", Params()});
      const std::vector<Result> done = c.exec_pipeline(statements, Effect::kWrite);
      const Result& inserted = done[2];

      std::unordered_set<std::string> fresh;
      for (int i = 0; i < inserted.rows(); ++i) fresh.insert(inserted.text(i, 0));
      // Of two copies of one id in the batch, the first is the inserted one.
      ArrayText existing;
      bool any_existing = false;
      for (std::size_t i = 0; i < leads.size(); ++i) {
        results[i].inserted = fresh.erase(leads[i].id) > 0;
        if (!results[i].inserted) {
          existing.add(leads[i].id);
          any_existing = true;
        }
      }
      if (!any_existing) return results;
      // A redelivery: report what became of the lead the first time.
      const Result statuses = c.exec("SELECT id, status FROM leads WHERE id = ANY ($1::TEXT[])",
                                     Params().add(existing.str()), Effect::kRead);
      std::unordered_map<std::string, DeliveryStatus> status_of;
      for (int i = 0; i < statuses.rows(); ++i)
        status_of[statuses.text(i, 0)] =
            parse_delivery_status(statuses.text(i, 1)).value_or(DeliveryStatus::kPending);
      for (std::size_t i = 0; i < leads.size(); ++i)
        if (!results[i].inserted)
          if (auto it = status_of.find(leads[i].id); it != status_of.end())
            results[i].existing_status = it->second;
      return results;
    });
  }

  std::optional<LeadRecord> get_lead(std::string_view id) override {
    auto r =
        read_one<LeadRecord>("get_lead",
                             "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                             ", attempts, ineligible FROM leads WHERE id = $1",
                             Params().add(id), [](const Row& q) { return read_lead(q, true); });
    const bool sold = r && (r->distribution.status == DeliveryStatus::kDelivered ||
                            r->distribution.status == DeliveryStatus::kReturned);
    if (sold) {
      // Committed with the status it was read with (or later, by a settlement).
      auto sales = read_rows<Sale>(
          "get_lead", "SELECT " LF_SALE_COLUMNS " FROM sales WHERE lead_id = $1 ORDER BY slot",
          Params().add(id), read_sale<Row>);
      if (sales) attach_sales(*r, std::move(*sales));
    }
    return r;
  }

  std::vector<LeadRecord> list_leads(const LeadQuery& lq) override {
    return run("list_leads", std::vector<LeadRecord>{}, [&](Connection& c) {
      // Only the filters in use appear, each as a placeholder: the values stay parameters.
      std::string sql =
          "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS " FROM leads WHERE TRUE";
      Params params;
      auto filter = [&](const char* condition, auto value) {
        params.add(value);
        sql += " AND ";
        sql += condition;
        sql += " $" + std::to_string(params.size());
      };
      if (!lq.seller_id.empty()) filter("seller_id =", lq.seller_id);
      if (lq.status) filter("status =", to_string(*lq.status));
      if (!lq.vertical.empty()) filter("vertical =", lq.vertical);
      if (!lq.source.empty()) filter("source =", lq.source);
      // Every lead the buyer bought, a share of a shared sale included.
      if (!lq.buyer_id.empty()) {
        filter("id IN (SELECT lead_id FROM sales WHERE buyer_id =", lq.buyer_id);
        sql += ")";
      }
      if (lq.created_from_ms != 0) filter("received_at >=", lq.created_from_ms);
      if (lq.created_to_ms != 0) filter("received_at <", lq.created_to_ms);
      if (!lq.before_id.empty()) filter("id <", lq.before_id);
      params.add(clamp_limit(lq.limit));
      sql += " ORDER BY id DESC LIMIT $" + std::to_string(params.size());

      const Result r = c.exec(sql.c_str(), params, Effect::kRead);
      std::vector<LeadRecord> out;
      out.reserve(static_cast<std::size_t>(r.rows()));
      for (int i = 0; i < r.rows(); ++i) out.push_back(read_lead(Row{r, i}, false));
      return out;
    });
  }

  /// "Earlier" orders leads by (received_at, id): when the lead itself is stored, only leads
  /// before it count, so of two copies of one person decided side by side exactly one is the
  /// duplicate. When it is not stored yet (an intake check), every other lead counts.
  std::string find_duplicate(std::string_view vertical, std::string_view email,
                             std::string_view phone, std::int64_t since_ms,
                             std::string_view lead_id) override {
    return run("find_duplicate", std::string{}, [&](Connection& c) -> std::string {
      // One statement: the lead's own time, then the e-mail probe, then the phone probe, each
      // an index range scan.
      const Result r = c.exec(
          "WITH self AS (SELECT COALESCE((SELECT received_at FROM leads WHERE id = $5),"
          "                              9223372036854775807) AS until_ms)"
          " SELECT COALESCE("
          "  (SELECT id FROM leads, self WHERE $2 <> '' AND vertical = $1 AND email = $2"
          "   AND received_at >= $4 AND received_at <= until_ms AND id <> $5"
          "   AND (received_at < until_ms OR id < $5) ORDER BY received_at DESC LIMIT 1),"
          "  (SELECT id FROM leads, self WHERE $3 <> '' AND vertical = $1 AND phone = $3"
          "   AND received_at >= $4 AND received_at <= until_ms AND id <> $5"
          "   AND (received_at < until_ms OR id < $5) ORDER BY received_at DESC LIMIT 1),"
          "  '')",
          Params().add(vertical).add(email).add(phone).add(since_ms).add(lead_id), Effect::kRead);
      return r.text(0, 0);
    });
  }

  /// Without caps: one statement; the lead row is share-locked so a concurrent outcome either
  /// waits for the intent or makes it kConflict. With caps: a batch of one (see
  /// record_post_intents), one round trip.
  StoreStatus record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) override {
    if (!caps.empty()) {
      const PostIntentWrite write{p, std::vector<CapWindow>(caps.begin(), caps.end())};
      return record_post_intents(std::span(&write, 1)).front();
    }
    // The posts this one follows were answered: an exclusive post replaces every other intent
    // of the lead, a share the exclusive one (the shares stay, posted side by side).
    static constexpr const char* kUpsert =
        "WITH written AS ("
        " INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at, shared)"
        " SELECT id, $2, $3, $4, $5, $6 FROM leads WHERE id = $1 AND status = 'pending' FOR SHARE"
        " ON CONFLICT (lead_id, buyer_id) DO UPDATE SET price_cents = excluded.price_cents,"
        " ping_id = excluded.ping_id, at = excluded.at, shared = excluded.shared"
        " RETURNING 1),"
        " replaced AS (DELETE FROM post_intents WHERE lead_id = $1 AND buyer_id <> $2"
        " AND (NOT $6 OR NOT shared) AND EXISTS (SELECT 1 FROM written))"
        " SELECT (SELECT COUNT(*) FROM written),"
        " EXISTS (SELECT 1 FROM leads WHERE id = $1)";
    return run("record_post_intent", StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(kUpsert,
                              Params()
                                  .add(p.lead_id)
                                  .add(p.buyer_id)
                                  .add(p.price)
                                  .add(p.ping_id)
                                  .add(p.at_ms)
                                  .add(p.shared),
                              Effect::kWrite);
      if (r.int64(0, 0) > 0) return StoreStatus::kOk;
      return r.boolean(0, 1) ? StoreStatus::kConflict : StoreStatus::kNotFound;
    });
  }

  /// The whole batch is one transaction sent as one pipeline (one round trip): BEGIN; the
  /// advisory lock of every buyer reserving a cap slot, in one order for every process (so
  /// batches wait for each other instead of deadlocking); a share lock on every lead of the
  /// batch, in id order (as record_outcomes locks them, so the two wait for each other instead
  /// of deadlocking, and no lead is decided under an intent being written); then one statement
  /// per intent, in the batch's order; COMMIT. Each intent's statement checks its lead and
  /// counts its buyer's sales and open intents after the locks were taken, in a snapshot that
  /// holds every reservation committed before them and the batch's own earlier intents, and
  /// writes only if every window has room: a refusal is an answer, not an error, and the rest
  /// of the batch goes on. If any statement fails, the server skips the rest, nothing is kept,
  /// and every answer is kUnavailable.
  std::vector<StoreStatus> record_post_intents(std::span<const PostIntentWrite> writes) override {
    // $1 lead, $2 buyer, $3 price, $4 ping id, $5 at, $6, $7 and $8 the windows' starts,
    // limits and units (true: a budget in cents; empty arrays: no cap). A window is over when
    // what it holds plus this intent (one lead, or its price) passes its limit. Intents of
    // decided leads are not counted: a sale counts through its sales row, and an unsold lead's
    // intent reserved nothing that was used.
    static constexpr const char* kIntent =
        "WITH lead AS (SELECT status = 'pending' AS pending FROM leads WHERE id = $1),"
        " capped AS (SELECT EXISTS (SELECT 1 FROM unnest($6::BIGINT[], $7::BIGINT[],"
        "   $8::BOOLEAN[]) AS w (since_ms, cap, cents)"
        "  CROSS JOIN LATERAL (SELECT COUNT(*) AS n, COALESCE(SUM(price_cents), 0)"
        "   - (SELECT COALESCE(SUM(r.price_cents), 0) FROM returns AS r"
        "      WHERE r.buyer_id = $2 AND r.sold_at >= w.since_ms) AS spent"
        "   FROM sales WHERE buyer_id = $2 AND sold_at >= w.since_ms) AS s"
        "  CROSS JOIN LATERAL (SELECT COUNT(*) AS n,"
        "   COALESCE(SUM(post_intents.price_cents), 0) AS spent"
        "   FROM post_intents JOIN leads AS l ON l.id = post_intents.lead_id"
        "   WHERE post_intents.buyer_id = $2 AND post_intents.at >= w.since_ms"
        "   AND post_intents.lead_id <> $1 AND l.status = 'pending') AS o"
        "  WHERE CASE WHEN w.cents THEN s.spent + o.spent + $3::BIGINT"
        "   ELSE s.n + o.n + 1 END > w.cap) AS over_cap),"
        " written AS (INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at,"
        "  shared) SELECT $1, $2, $3::BIGINT, $4::TEXT, $5::BIGINT, $9::BOOLEAN FROM lead, capped"
        "  WHERE lead.pending AND NOT capped.over_cap"
        "  ON CONFLICT (lead_id, buyer_id) DO UPDATE SET price_cents = excluded.price_cents,"
        "  ping_id = excluded.ping_id, at = excluded.at, shared = excluded.shared"
        "  RETURNING 1),"
        // As record_post_intent: the posts this one follows were answered.
        " replaced AS (DELETE FROM post_intents WHERE lead_id = $1 AND buyer_id <> $2"
        "  AND (NOT $9::BOOLEAN OR NOT shared) AND EXISTS (SELECT 1 FROM written))"
        " SELECT (SELECT COUNT(*) FROM written), (SELECT pending FROM lead),"
        " (SELECT over_cap FROM capped)";
    const std::vector<StoreStatus> all_failed(writes.size(), StoreStatus::kUnavailable);
    if (writes.empty()) return {};
    std::vector<Statement> statements;
    statements.reserve(writes.size() + 4);
    statements.push_back({"BEGIN", Params()});
    ArrayText reserving, leads;
    bool any_caps = false;
    for (const auto& w : writes) {
      leads.add(w.intent.lead_id);
      if (w.caps.empty()) continue;
      reserving.add(w.intent.buyer_id);
      any_caps = true;
    }
    // OFFSET 0 keeps the sorted subquery from being merged into the outer query, so the locks
    // are taken in the sorted order.
    if (any_caps)
      statements.push_back(
          {"SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(b, 0) AS k"
           " FROM unnest($1::TEXT[]) AS b ORDER BY 1 OFFSET 0) AS sorted",
           Params().add(reserving.str())});
    statements.push_back({"SELECT 1 FROM leads WHERE id = ANY ($1::TEXT[]) ORDER BY id FOR SHARE",
                          Params().add(leads.str())});
    const std::size_t first_intent = statements.size();
    for (const auto& w : writes) {
      ArrayText since, limit, cents;
      for (const CapWindow& cap : w.caps) {
        since.add(cap.since_ms);
        limit.add(cap.limit);
        cents.add(cap.unit == CapUnit::kCents);
      }
      statements.push_back({kIntent, Params()
                                         .add(w.intent.lead_id)
                                         .add(w.intent.buyer_id)
                                         .add(w.intent.price)
                                         .add(w.intent.ping_id)
                                         .add(w.intent.at_ms)
                                         .add(since.str())
                                         .add(limit.str())
                                         .add(cents.str())
                                         .add(w.intent.shared)});
    }
    statements.push_back({"COMMIT", Params()});
    return run("record_post_intents", all_failed, [&](Connection& c) {
      // The COMMIT travels with the rest: once sent, the outcome is unknown if the connection
      // breaks, so the call is never retried.
      c.mark_not_retryable();
      const std::vector<Result> results = c.exec_pipeline(statements, Effect::kWrite);
      std::vector<StoreStatus> out;
      out.reserve(writes.size());
      for (std::size_t i = 0; i < writes.size(); ++i) {
        const Result& r = results[first_intent + i];
        if (r.int64(0, 0) > 0)
          out.push_back(StoreStatus::kOk);
        else if (r.is_null(0, 1))
          out.push_back(StoreStatus::kNotFound);
        else if (!r.boolean(0, 1))
          out.push_back(StoreStatus::kConflict);
        else if (r.boolean(0, 2))
          out.push_back(StoreStatus::kLimitReached);
        else
          out.push_back(StoreStatus::kConflict);
      }
      return out;
    });
  }

  std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) override {
    return read_rows<PostIntent>("get_post_intents",
                                 "SELECT " LF_POST_INTENT_COLUMNS
                                 " FROM post_intents WHERE lead_id = $1 ORDER BY at, buyer_id",
                                 Params().add(lead_id), read_post_intent<Row>);
  }

  /// Per outcome: kOk (written), kConflict (already decided: the first outcome stays; also for
  /// an outcome that decides nothing, i.e. status pending), kNotFound (no such lead). When the
  /// transaction itself fails, every result is kUnavailable and nothing was written.
  ///
  /// One transaction, two round trips for any batch size (pipelines): BEGIN and the lock of the
  /// batch's lead rows in id order (so batches overlapping in any order wait instead of
  /// deadlocking); the winners are decided here from the locked statuses; then one statement
  /// writing every winner's lead row and sale, and COMMIT. A seller waiting on a sync lead
  /// waits on this write.
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) override {
    const std::vector<StoreStatus> all_failed(outcomes.size(), StoreStatus::kUnavailable);
    if (outcomes.empty()) return {};
    return run("record_outcomes", all_failed, [&](Connection& c) {
      std::vector<StoreStatus> results(outcomes.size(), StoreStatus::kUnavailable);
      ArrayText ids;
      for (const auto& o : outcomes) ids.add(o.lead_id);
      // On any failure from here the pool rolls the open transaction back.
      const std::vector<Result> begun = c.exec_pipeline(
          {{"BEGIN", Params()},
           {"SELECT id, status, EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = leads.id),"
            " received_at, seller_id, campaign_id, vertical, source"
            " FROM leads WHERE id = ANY ($1::TEXT[]) ORDER BY id FOR UPDATE",
            Params().add(ids.str())}},
          Effect::kRead);
      const Result& locked = begun[1];
      struct Current {
        bool pending;
        bool has_sale;
        LeadKeys keys;
      };
      std::unordered_map<std::string, Current> current;
      for (int i = 0; i < locked.rows(); ++i)
        current[locked.text(i, 0)] = {
            locked.text(i, 1) == "pending", locked.boolean(i, 2),
            LeadKeys{locked.int64(i, 3), locked.text(i, 4), locked.text(i, 5), locked.text(i, 6),
                     locked.text(i, 7)}};
      PerformanceDeltas performance;
      UnsoldDeltas unsold;

      ArrayText id, status, buyer, price, payout, buyer_lead_id, reason, decided_at, attempts,
          ineligible;
      ArrayText sale_lead, sale_slot, sale_buyer, sale_price, sale_payout, sale_reference;
      bool any = false;
      for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const OutcomeRecord& o = outcomes[i];
        const Distribution& d = o.distribution;
        const auto it = current.find(o.lead_id);
        if (it == current.end()) {
          results[i] = StoreStatus::kNotFound;
          continue;
        }
        const std::vector<Sale> sales = sales_of(d);
        const bool sale = !sales.empty();
        // A pending outcome decides nothing; a decided lead keeps its first outcome; a sale
        // row already there (never for a pending lead, unless data was damaged) refuses a sale.
        if (d.status == DeliveryStatus::kPending || !it->second.pending ||
            (sale && it->second.has_sale)) {
          results[i] = StoreStatus::kConflict;
          continue;
        }
        it->second.pending = false;  // a later outcome of this lead in the batch conflicts
        results[i] = StoreStatus::kOk;
        any = true;
        id.add(o.lead_id);
        status.add(to_string(d.status));
        buyer.add(d.buyer_id);
        price.add(d.price);
        payout.add(d.payout);
        buyer_lead_id.add(d.buyer_lead_id);
        reason.add(d.reason);
        decided_at.add(d.decided_at_ms);
        attempts.add(dump(attempts_to_json(d.attempts)));
        ineligible.add(dump(ineligible_to_json(d.ineligible)));
        add_outcome(performance, it->second.keys, d);
        add_unsold(unsold, it->second.keys, d);
        for (std::size_t slot = 0; slot < sales.size(); ++slot) {
          sale_lead.add(o.lead_id);
          sale_slot.add(static_cast<std::int64_t>(slot));
          sale_buyer.add(sales[slot].buyer_id);
          sale_price.add(sales[slot].price);
          sale_payout.add(sales[slot].payout);
          sale_reference.add(sales[slot].buyer_lead_id);
        }
      }
      std::vector<Statement> finish;
      if (any) {
        finish.push_back(
            {"WITH batch AS (SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[],"
             "   $4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::TEXT[],"
             "   $10::TEXT[]) AS b (id, status, buyer_id, price, payout, buyer_lead_id, reason,"
             "   decided_at, attempts, ineligible)),"
             " decided AS (UPDATE leads SET status = batch.status, buyer_id = batch.buyer_id,"
             "   price_cents = batch.price, payout_cents = batch.payout,"
             "   buyer_lead_id = batch.buyer_lead_id, reason = batch.reason,"
             "   decided_at = batch.decided_at, attempts = batch.attempts,"
             "   ineligible = batch.ineligible"
             "   FROM batch WHERE leads.id = batch.id"
             "   RETURNING leads.id, leads.decided_at, leads.email, leads.phone, leads.seller_id,"
             "   leads.campaign_id, leads.vertical, leads.source),"
             " sold AS (SELECT * FROM unnest($11::TEXT[], $12::INTEGER[], $13::TEXT[],"
             "   $14::BIGINT[], $15::BIGINT[], $16::TEXT[]) AS s (lead_id, slot, buyer_id, price,"
             "   payout, buyer_lead_id))"
             " INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
             "   email, phone, buyer_lead_id)"
             " SELECT sold.lead_id, sold.slot, sold.buyer_id, sold.price, sold.payout,"
             "   decided.decided_at, decided.email, decided.phone, sold.buyer_lead_id"
             " FROM sold JOIN decided ON decided.id = sold.lead_id"
             // The revenue rollup's key order: every batch locks its rows in this one order.
             " ORDER BY decided.decided_at - decided.decided_at % 900000, decided.seller_id,"
             "   decided.campaign_id, sold.buyer_id, decided.vertical, decided.source,"
             "   sold.lead_id, sold.slot",
             Params()
                 .add(id.str())
                 .add(status.str())
                 .add(buyer.str())
                 .add(price.str())
                 .add(payout.str())
                 .add(buyer_lead_id.str())
                 .add(reason.str())
                 .add(decided_at.str())
                 .add(attempts.str())
                 .add(ineligible.str())
                 .add(sale_lead.str())
                 .add(sale_slot.str())
                 .add(sale_buyer.str())
                 .add(sale_price.str())
                 .add(sale_payout.str())
                 .add(sale_reference.str())});
      }
      for (Statement& st : outcome_statements({std::move(performance), std::move(unsold)}))
        finish.push_back(std::move(st));
      finish.push_back({"COMMIT", Params()});
      // From here the outcome is unknown if the connection breaks: never retried.
      c.mark_not_retryable();
      c.exec_pipeline(finish, Effect::kWrite);
      return results;
    });
  }

  std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                          std::int64_t since_ms) override {
    return run("count_sales", std::optional<std::int64_t>{},
               [&](Connection& c) -> std::optional<std::int64_t> {
                 return c
                     .exec("SELECT COUNT(*) FROM sales WHERE buyer_id = $1 AND sold_at >= $2",
                           Params().add(buyer_id).add(since_ms), Effect::kRead)
                     .int64(0, 0);
               });
  }

  std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) override {
    return run("sales_cents", std::optional<Cents>{}, [&](Connection& c) -> std::optional<Cents> {
      return c
          .exec(
              "SELECT ((SELECT COALESCE(SUM(price_cents), 0) FROM sales"
              "  WHERE buyer_id = $1 AND sold_at >= $2)"
              " - (SELECT COALESCE(SUM(price_cents), 0) FROM returns"
              "    WHERE buyer_id = $1 AND sold_at >= $2))::BIGINT",
              Params().add(buyer_id).add(since_ms), Effect::kRead)
          .int64(0, 0);
    });
  }

  // --- returns and the ledger -------------------------------------------------------------------

  /// One transaction: the lead row locked first (FOR UPDATE), so two returns of one lead wait
  /// for each other; the ledger entry is written by the returns table's trigger.
  ReturnResult record_return(const ReturnRequest& r) override {
    return run("record_return", ReturnResult{}, [&](Connection& c) -> ReturnResult {
      ReturnResult out;
      Transaction tx(c);
      return_in_transaction(c, r, out);
      tx.commit();
      return out;
    });
  }

  /// One transaction (one commit) for the whole batch, each return checked as it would be alone
  /// after the ones before it; their leads are locked in the batch's order. If the store fails
  /// on any of them (a deadlock with another batch included), none is kept and every one
  /// answers kUnavailable.
  std::vector<ReturnResult> record_returns(std::span<const ReturnRequest> rs) override {
    const std::vector<ReturnResult> all_failed(rs.size());
    return run("record_returns", all_failed, [&](Connection& c) {
      std::vector<ReturnResult> out(rs.size());
      Transaction tx(c);
      for (std::size_t i = 0; i < rs.size(); ++i) return_in_transaction(c, rs[i], out[i]);
      tx.commit();
      return out;
    });
  }

  /// record_return's checks and writes, inside the caller's transaction; a failure throws (the
  /// caller's run() answers it), a refusal is an answer in `out`.
  static void return_in_transaction(Connection& c, const ReturnRequest& r, ReturnResult& out) {
    const Result found = c.exec(
        "SELECT sales.price_cents, sales.payout_cents, sales.sold_at,"
        " sales.lead_id IS NOT NULL"
        " FROM (SELECT id FROM leads WHERE id = $1 FOR UPDATE) AS lead"
        " LEFT JOIN sales ON sales.lead_id = lead.id AND sales.buyer_id = $2",
        Params().add(r.lead_id).add(r.buyer_id), Effect::kRead);
    if (found.rows() == 0) return void(out.status = ReturnStatus::kNoSuchLead);
    if (!found.boolean(0, 3)) return void(out.status = ReturnStatus::kNotSold);
    LeadReturn& ret = out.ret;
    ret.price = found.int64(0, 0);
    ret.payout = found.int64(0, 1);
    ret.sold_at_ms = found.int64(0, 2);
    const Result before =
        c.exec("SELECT " LF_RETURN_COLUMNS " FROM returns WHERE lead_id = $1 AND buyer_id = $2",
               Params().add(r.lead_id).add(r.buyer_id), Effect::kRead);
    if (before.rows() > 0) {
      out.ret = read_return(Row{before, 0});
      out.status = ReturnStatus::kAlreadyReturned;
      return;
    }
    if (!admit_return(r, out)) return;
    c.exec("INSERT INTO returns (" LF_RETURN_COLUMNS
           ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
           Params()
               .add(ret.lead_id)
               .add(ret.buyer_id)
               .add(ret.reason)
               .add(ret.note)
               .add(ret.by_key_id)
               .add(ret.price)
               .add(ret.payout)
               .add(ret.sold_at_ms)
               .add(ret.returned_at_ms),
           Effect::kWrite);
    // Returned once no sale of it stands: a share returned leaves the others sold.
    c.exec(
        "UPDATE leads SET status = 'returned' WHERE id = $1 AND status = 'delivered'"
        " AND NOT EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = $1"
        "  AND NOT EXISTS (SELECT 1 FROM returns WHERE returns.lead_id = $1"
        "   AND returns.buyer_id = sales.buyer_id))",
        Params().add(r.lead_id), Effect::kWrite);
    out.status = ReturnStatus::kReturned;
  }

  /// One transaction, the lead row locked first; a sale's ledger entry is written by the sales
  /// trigger.
  SettleResult settle_lead(const Settlement& asked, const PayoutRule& payout) override {
    return run("settle_lead", SettleResult{}, [&](Connection& c) -> SettleResult {
      Transaction tx(c);
      Settlement s = asked;
      // The lead: failed, or settled before (a shared sale is settled buyer by buyer).
      const Result found = c.exec(
          "SELECT lead.status = 'failed' OR EXISTS (SELECT 1 FROM settlements"
          "  WHERE settlements.lead_id = lead.id),"
          " (SELECT COUNT(*) FROM post_intents WHERE post_intents.lead_id = lead.id),"
          " (SELECT MIN(buyer_id) FROM post_intents WHERE post_intents.lead_id = lead.id),"
          " lead.status, lead.received_at, lead.seller_id, lead.campaign_id, lead.vertical,"
          " lead.source FROM (SELECT id, status, received_at, seller_id, campaign_id, vertical,"
          " source FROM leads WHERE id = $1 FOR UPDATE) AS lead",
          Params().add(s.lead_id), Effect::kRead);
      if (found.rows() == 0) return {SettleStatus::kNoSuchLead, {}};
      if (!found.boolean(0, 0)) return {SettleStatus::kNotUnknown, {}};
      const bool was_failed = found.text(0, 3) == "failed";
      const LeadKeys keys{found.int64(0, 4), found.text(0, 5), found.text(0, 6), found.text(0, 7),
                          found.text(0, 8)};
      if (s.buyer_id.empty()) {
        const std::int64_t intents = found.int64(0, 1);
        if (intents == 0) return {SettleStatus::kNotUnknown, {}};
        if (intents > 1) return {SettleStatus::kBuyerNeeded, {}};
        s.buyer_id = found.text(0, 2);
      }
      const Result before = c.exec("SELECT " LF_SETTLEMENT_COLUMNS
                                   " FROM settlements WHERE lead_id = $1 AND buyer_id = $2",
                                   Params().add(s.lead_id).add(s.buyer_id), Effect::kRead);
      if (before.rows() > 0)
        return {SettleStatus::kAlreadySettled, read_settlement(Row{before, 0})};
      // The intent, and what the lead's sales (settled ones, for a shared sale) hold so far.
      const Result held = c.exec(
          "SELECT EXISTS (SELECT 1 FROM post_intents WHERE lead_id = $1 AND buyer_id = $2),"
          " COUNT(*), COALESCE(SUM(price_cents), 0)::BIGINT,"
          " COALESCE(SUM(payout_cents), 0)::BIGINT FROM sales WHERE lead_id = $1",
          Params().add(s.lead_id).add(s.buyer_id), Effect::kRead);
      if (!held.boolean(0, 0)) return {SettleStatus::kNotUnknown, {}};
      const std::int64_t slots = held.int64(0, 1);
      const Cents revenue = held.int64(0, 2), paid = held.int64(0, 3);
      s.payout = s.sold ? payout(revenue + s.price) - paid : 0;
      c.exec("INSERT INTO settlements (" LF_SETTLEMENT_COLUMNS
             ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
             Params()
                 .add(s.lead_id)
                 .add(s.buyer_id)
                 .add(s.sold)
                 .add(s.price)
                 .add(s.payout)
                 .add(s.buyer_lead_id)
                 .add(s.note)
                 .add(s.by_key_id)
                 .add(s.at_ms),
             Effect::kWrite);
      if (s.sold) {
        c.exec(
            "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
            " email, phone, buyer_lead_id)"
            " SELECT id, $2, $3, $4, $5, $6, email, phone, $7 FROM leads WHERE id = $1",
            Params()
                .add(s.lead_id)
                .add(slots)
                .add(s.buyer_id)
                .add(s.price)
                .add(s.payout)
                .add(s.at_ms)
                .add(s.buyer_lead_id),
            Effect::kWrite);
        // The lead sums its sales up; the first buyer to take it is the one it names.
        c.exec(
            "UPDATE leads SET status = 'delivered', price_cents = $2, payout_cents = $3,"
            " buyer_id = CASE WHEN $4 = 0 THEN $5 ELSE buyer_id END,"
            " buyer_lead_id = CASE WHEN $4 = 0 THEN $6 ELSE buyer_lead_id END,"
            " reason = $7, decided_at = $8 WHERE id = $1",
            Params()
                .add(s.lead_id)
                .add(revenue + s.price)
                .add(paid + s.payout)
                .add(slots)
                .add(s.buyer_id)
                .add(s.buyer_lead_id)
                .add(settled_reason(true))
                .add(s.at_ms),
            Effect::kWrite);
        if (was_failed) {
          // A settlement moved the failed lead to sold: so does its row of the rollup.
          OutcomeDeltas deltas;
          add_settled(deltas.performance, keys, true);
          for (const Statement& st : outcome_statements(deltas))
            c.exec(st.sql, st.params, Effect::kWrite);
        }
      } else {
        // Unsold once no buyer is left to settle and none took it.
        const Result unsold = c.exec(
            "UPDATE leads SET status = 'unsold', reason = $2, decided_at = $3"
            " WHERE id = $1 AND status = 'failed'"
            " AND NOT EXISTS (SELECT 1 FROM post_intents WHERE lead_id = $1"
            "  AND buyer_id NOT IN (SELECT buyer_id FROM settlements WHERE lead_id = $1))"
            " RETURNING 1",
            Params().add(s.lead_id).add(settled_reason(false)).add(s.at_ms), Effect::kWrite);
        if (unsold.rows() > 0) {
          OutcomeDeltas deltas;
          add_settled(deltas.performance, keys, false);
          add_settled_unsold(deltas.unsold, keys);
          for (const Statement& st : outcome_statements(deltas))
            c.exec(st.sql, st.params, Effect::kWrite);
        }
      }
      tx.commit();
      return {SettleStatus::kSettled, std::move(s)};
    });
  }

  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view lead_id) override {
    return read_rows<Settlement>("settlements_of_lead",
                                 "SELECT " LF_SETTLEMENT_COLUMNS
                                 " FROM settlements WHERE lead_id = $1 ORDER BY at, buyer_id",
                                 Params().add(lead_id), read_settlement<Row>);
  }

  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view lead_id) override {
    return read_rows<LeadReturn>("returns_of_lead",
                                 "SELECT " LF_RETURN_COLUMNS
                                 " FROM returns WHERE lead_id = $1 ORDER BY returned_at",
                                 Params().add(lead_id), read_return<Row>);
  }

  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& q) override {
    return read_rows<LedgerEntry>(
        "list_ledger",
        "SELECT " LF_LEDGER_COLUMNS
        " FROM ledger_entries"
        " WHERE ($1 = '' OR lead_id = $1) AND id > $2 ORDER BY id LIMIT $3",
        Params().add(q.lead_id).add(q.after_id).add(std::clamp(q.limit, 1, 1000)),
        read_ledger_entry<Row>);
  }

  std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                          std::int64_t since_ms) override {
    return run("return_stats", std::optional<ReturnStats>{},
               [&](Connection& c) -> std::optional<ReturnStats> {
                 const Result r = c.exec(
                     "SELECT (SELECT COUNT(*) FROM sales WHERE buyer_id = $1 AND sold_at >= $2),"
                     " (SELECT COUNT(*) FROM returns WHERE buyer_id = $1 AND sold_at >= $2)",
                     Params().add(buyer_id).add(since_ms), Effect::kRead);
                 return ReturnStats{r.int64(0, 0), r.int64(0, 1)};
               });
  }

  std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view email,
                                          std::string_view phone, std::int64_t since_ms) override {
    return run("buyer_bought_person", std::optional<bool>{},
               [&](Connection& c) -> std::optional<bool> {
                 return c
                     .exec(
                         "SELECT ($2 <> '' AND EXISTS (SELECT 1 FROM sales"
                         "  WHERE buyer_id = $1 AND email = $2 AND sold_at >= $4))"
                         " OR ($3 <> '' AND EXISTS (SELECT 1 FROM sales"
                         "  WHERE buyer_id = $1 AND phone = $3 AND sold_at >= $4))",
                         Params().add(buyer_id).add(email).add(phone).add(since_ms), Effect::kRead)
                     .boolean(0, 0);
               });
  }

  // --- idempotency ------------------------------------------------------------------------------

  StoreStatus claim_idempotency_key(const IdempotencyRecord& r, std::int64_t expire_before_ms,
                                    IdempotencyRecord& existing) override {
    return run("claim_idempotency_key", StoreStatus::kUnavailable, [&](Connection& c) {
      // The holder may release its claim between the two statements: then claim again.
      for (int attempt = 0; attempt < 3; ++attempt) {
        // Claims the key, or takes it over from an expired claim, in one statement.
        const Result claimed = c.exec(
            "INSERT INTO idempotency_keys (scope, key, request_hash, lead_id, status, response,"
            " created_at) VALUES ($1, $2, $3, $4, 0, '', $5)"
            " ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash,"
            " lead_id = excluded.lead_id, status = 0, response = '',"
            " created_at = excluded.created_at WHERE idempotency_keys.created_at < $6"
            " RETURNING 1",
            Params()
                .add(r.scope)
                .add(r.key)
                .add(r.request_hash)
                .add(r.lead_id)
                .add(r.created_at_ms)
                .add(expire_before_ms),
            Effect::kWrite);
        if (claimed.rows() > 0) return StoreStatus::kOk;
        const Result held = c.exec(
            "SELECT scope, key, request_hash, lead_id, status, response, created_at"
            " FROM idempotency_keys WHERE scope = $1 AND key = $2",
            Params().add(r.scope).add(r.key), Effect::kRead);
        if (held.rows() == 0) continue;
        existing.scope = held.text(0, 0);
        existing.key = held.text(0, 1);
        existing.request_hash = held.text(0, 2);
        existing.lead_id = held.text(0, 3);
        existing.status = static_cast<int>(held.int64(0, 4));
        existing.response = held.text(0, 5);
        existing.created_at_ms = held.int64(0, 6);
        return StoreStatus::kConflict;
      }
      log(LogLevel::kWarn, "store_unavailable",
          {{"op", "claim_idempotency_key"}, {"detail", "the key kept changing hands"}});
      return StoreStatus::kUnavailable;
    });
  }

  StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key, int status,
                                       std::string_view response) override {
    return write("complete_idempotency_key",
                 "UPDATE idempotency_keys SET status = $3, response = $4"
                 " WHERE scope = $1 AND key = $2",
                 Params().add(scope).add(key).add(status).add(response));
  }

  StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) override {
    return write("release_idempotency_key",
                 "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status = 0",
                 Params().add(scope).add(key));
  }

  // --- shared rate limits -----------------------------------------------------------------------

  /// The row is created with the defaults of a new bucket if missing, then locked FOR UPDATE:
  /// every process updating the key waits its turn. If `update` throws, nothing is written.
  std::optional<std::string> shared_secret(std::string_view name,
                                           std::string_view candidate) override {
    return run("shared_secret", std::optional<std::string>(),
               [&](Connection& c) -> std::optional<std::string> {
                 c.exec(
                     "INSERT INTO shared_secrets (name, value) VALUES ($1, $2)"
                     " ON CONFLICT (name) DO NOTHING",
                     Params().add(name).add(candidate), Effect::kWrite);
                 const Result row = c.exec("SELECT value FROM shared_secrets WHERE name = $1",
                                           Params().add(name), Effect::kRead);
                 if (row.rows() != 1) return std::nullopt;
                 return row.text(0, 0);
               });
  }

  StoreStatus update_rate_bucket(std::string_view key,
                                 const std::function<void(RateBucketState&)>& update) override {
    return run("update_rate_bucket", StoreStatus::kUnavailable, [&](Connection& c) {
      Transaction tx(c);
      const RateBucketState fresh;
      const Result created = c.exec(
          "INSERT INTO rate_buckets (key, tokens, refilled_at, day, day_count)"
          " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING RETURNING 1",
          Params()
              .add(key)
              .add(fresh.tokens)
              .add(fresh.refilled_at_ms)
              .add(fresh.day)
              .add(fresh.day_count),
          Effect::kWrite);
      const Result row = c.exec(
          "SELECT tokens, refilled_at, day, day_count FROM rate_buckets WHERE key = $1"
          " FOR UPDATE",
          Params().add(key), Effect::kRead);
      if (row.rows() != 1) {
        PgError e;
        e.message = "the rate bucket row is missing after its insert";
        throw e;
      }
      RateBucketState state;
      state.exists = created.rows() == 0;
      state.tokens = row.real(0, 0);
      state.refilled_at_ms = row.int64(0, 1);
      state.day = row.int64(0, 2);
      state.day_count = row.int64(0, 3);
      // `update` runs once: a retry after this point would run it twice.
      c.mark_not_retryable();
      update(state);
      c.exec(
          "UPDATE rate_buckets SET tokens = $2, refilled_at = $3, day = $4, day_count = $5"
          " WHERE key = $1",
          Params()
              .add(key)
              .add(state.tokens)
              .add(state.refilled_at_ms)
              .add(state.day)
              .add(state.day_count),
          Effect::kWrite);
      tx.commit();
      return StoreStatus::kOk;
    });
  }

  // --- attempt windows ---------------------------------------------------------------------------

  /// The rows are made if missing and locked FOR UPDATE in key order (byte order, the column's
  /// "C" collation), so two processes updating overlapping keys never wait on each other in a
  /// circle. A row removed by forget_attempt_windows between the insert and the lock is not
  /// returned by the lock: it is made again, so no key is ever updated without its lock. A
  /// window left empty keeps its row (newest_at 0) until forget_attempt_windows: deleting it here
  /// would send a waiting process round that loop.
  StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) override {
    if (keys.empty()) return StoreStatus::kOk;
    return run("update_attempt_windows", StoreStatus::kUnavailable, [&](Connection& c) {
      std::vector<std::size_t> order(keys.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
      ArrayText sorted;
      for (std::size_t i : order) sorted.add(keys[i]);
      Transaction tx(c);
      std::vector<std::vector<std::int64_t>> windows(keys.size());
      for (int round = 0;; ++round) {
        c.exec(
            "INSERT INTO attempt_windows (key, times, newest_at)"
            " SELECT k, '', 0 FROM unnest($1::TEXT[]) WITH ORDINALITY AS u (k, n) ORDER BY n"
            " ON CONFLICT (key) DO NOTHING",
            Params().add(sorted.str()), Effect::kWrite);
        const Result rows = c.exec(
            "SELECT key, times FROM attempt_windows WHERE key = ANY ($1::TEXT[])"
            " ORDER BY key FOR UPDATE",
            Params().add(sorted.str()), Effect::kRead);
        if (static_cast<std::size_t>(rows.rows()) == keys.size()) {
          std::unordered_map<std::string, int> row_of;
          for (int r = 0; r < rows.rows(); ++r) row_of[rows.text(r, 0)] = r;
          for (std::size_t i = 0; i < keys.size(); ++i)
            windows[i] = store_rows::decode_attempt_times(rows.text(row_of.at(keys[i]), 1));
          break;
        }
        if (round == 3) {
          PgError e;
          e.message = "attempt window rows keep vanishing under their lock";
          throw e;
        }
      }
      // `update` runs once: a retry after this point would run it twice.
      c.mark_not_retryable();
      update(windows);
      ArrayText written, times, newest;
      for (std::size_t i = 0; i < keys.size() && i < windows.size(); ++i) {
        written.add(keys[i]);
        times.add(store_rows::encode_attempt_times(windows[i]));
        newest.add(store_rows::newest_attempt_time(windows[i]));
      }
      c.exec(
          "UPDATE attempt_windows AS w SET times = v.times, newest_at = v.newest"
          " FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[]) AS v (key, times, newest)"
          " WHERE w.key = v.key",
          Params().add(written.str()).add(times.str()).add(newest.str()), Effect::kWrite);
      tx.commit();
      return StoreStatus::kOk;
    });
  }

  StoreStatus forget_attempt_windows(std::int64_t before_ms) override {
    return write("forget_attempt_windows", "DELETE FROM attempt_windows WHERE newest_at < $1",
                 Params().add(before_ms));
  }

  // --- announcements ----------------------------------------------------------------------------

  bool announces() const override { return true; }

  /// One statement: each payload becomes a NOTIFY, sent when the statement's own transaction
  /// commits. A payload must stay under 8,000 bytes (PostgreSQL's limit).
  StoreStatus announce(std::string_view channel, std::span<const std::string> payloads) override {
    if (!valid_channel(channel)) return StoreStatus::kUnavailable;
    if (payloads.empty()) return StoreStatus::kOk;
    ArrayText all;
    for (const std::string& p : payloads) all.add(p);
    return run("announce", StoreStatus::kUnavailable, [&](Connection& c) {
      c.exec("SELECT pg_notify($1, p) FROM unnest($2::TEXT[]) AS p",
             Params().add(channel).add(all.str()), Effect::kWrite);
      return StoreStatus::kOk;
    });
  }

  std::unique_ptr<StoreWatch> watch(std::string_view channel,
                                    std::function<void(std::string_view)> on_payload,
                                    std::function<void()> on_listening) override {
    if (!valid_channel(channel)) return nullptr;
    return std::make_unique<PgWatch>(pool().settings(), std::string(channel), std::move(on_payload),
                                     std::move(on_listening));
  }

  // --- stats ------------------------------------------------------------------------------------

  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& rq) override {
    static constexpr const char* kColumns[] = {"sales",   "revenue",          "payout",
                                               "returns", "returned_revenue", "returned_payout"};
    const std::string sql =
        planned_sql("revenue", kColumns, LF_REVENUE_SUMS, rq, RollupKind::kRevenue);
    return read_rollup<RevenueCell>("revenue_rollup", sql, filter_params(rq),
                                    [&rq](const Row& r) { return read_revenue_cell(r, rq); });
  }

  std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                           std::int64_t since_ms) override {
    return run("count_queued", std::optional<std::int64_t>{},
               [&](Connection& c) -> std::optional<std::int64_t> {
                 return c
                     .exec(
                         "SELECT COUNT(*) FROM leads WHERE status = 'pending'"
                         " AND campaign_id = $1 AND received_at >= $2",
                         Params().add(campaign_id).add(since_ms), Effect::kRead)
                     .int64(0, 0);
               });
  }

  /// The campaign's count, its row of the performance rollup, then its rows of the tiers, in
  /// one transaction (the rollup before its tiers, as every writer of both goes).
  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override {
    static const std::string tiers =
        "INSERT INTO performance_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical,"
        " source, invalid) SELECT t.tier, $2 - $2 % t.grain_ms, " +
        tier_key_columns({"c.seller_id", "c.id", "''", "c.vertical", "''"}) +
        ", 1 FROM campaigns AS c, rollup_tiers AS t WHERE c.id = $1 ORDER BY 1, 2, 3, 4, 5, 6, 7"
        " ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)"
        " DO UPDATE SET invalid = performance_tiers.invalid + 1";
    const std::int64_t bucket = at_ms - at_ms % kRollupBucketMs;
    run("count_invalid", StoreStatus::kUnavailable, [&](Connection& c) {
      Transaction tx(c);
      c.exec(
          "WITH counted AS (INSERT INTO invalid_counts (campaign_id, hour_start, count)"
          " VALUES ($1, $2, 1) ON CONFLICT (campaign_id, hour_start)"
          " DO UPDATE SET count = invalid_counts.count + 1)"
          " INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical,"
          " source, invalid) SELECT $3, seller_id, id, '', vertical, '', 1 FROM campaigns"
          " WHERE id = $1"
          " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source)"
          " DO UPDATE SET invalid = performance_rollup.invalid + 1",
          Params().add(campaign_id).add(hour_start(at_ms)).add(bucket), Effect::kWrite);
      c.exec(tiers.c_str(), Params().add(campaign_id).add(bucket), Effect::kWrite);
      tx.commit();
      return StoreStatus::kOk;
    });
  }

  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& rq) override {
    static const std::string sums = performance_sums();
    const std::string sql =
        planned_sql("performance", kPerformanceColumns, sums, rq, RollupKind::kPerformance);
    return read_rollup<PerformanceCell>(
        "performance_rollup", sql, filter_params(rq),
        [&rq](const Row& r) { return read_performance_cell(r, rq); });
  }

  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& rq) override {
    static constexpr const char* kColumns[] = {"leads"};
    const std::string sql =
        planned_sql("unsold", kColumns, "COALESCE(SUM(leads), 0)", rq, RollupKind::kUnsold);
    return read_rollup<UnsoldCell>("unsold_rollup", sql, filter_params(rq),
                                   [&rq](const Row& r) { return read_unsold_cell(r, rq); });
  }

 private:
  static std::int64_t clamp_limit(int limit) { return std::clamp<std::int64_t>(limit, 1, 1000); }

  /// The statement summing `sums` (SQL over `columns`) for `rq` from the ranges of its plan
  /// (plan_rollup: the tiers' whole hours and days, quarter hours at the edges), one branch of
  /// a UNION ALL per table and tier: its columns are the bucket (with by_bucket), the group
  /// keys, then the sums. The ranges are the plan's integers, written into the text; $1... are
  /// the filters' values in order. With cuts, per bucket (each within one stretch) or, when
  /// stretches_in_sql, per stretch (its start from the parameter after the filters, which
  /// filter_params adds).
  template <std::size_t N>
  static std::string planned_sql(const std::string& table, const char* const (&columns)[N],
                                 const std::string& sums, const RollupQuery& q, RollupKind kind) {
    std::vector<RollupRange> plan = plan_rollup(q, kind);
    if (plan.empty()) plan.push_back({0, q.from_ms, q.to_ms});  // no rows, one statement
    std::string filters, keys, inner = "bucket", by_bucket;
    for (ReportKey k : q.group) keys += std::string(", ") + rollup_column(k);
    for (const char* c : columns) inner += std::string(", ") + c;
    int n = 0;
    for (const auto& [key, value] : q.filters)
      filters += std::string(" AND ") + rollup_column(key) + " = $" + std::to_string(++n);
    std::map<int, std::string> ranges;  // per tier (0: the quarter-hour rollup)
    for (const RollupRange& r : plan) {
      std::string& text = ranges[r.tier];
      text += (text.empty() ? "" : " OR ") + std::string("bucket >= ") + std::to_string(r.from_ms) +
              " AND bucket < " + std::to_string(r.to_ms);
    }
    std::string rows;
    for (const auto& [tier, text] : ranges) {
      if (!rows.empty()) rows += " UNION ALL ";
      rows += "SELECT " + inner + keys + " FROM " + table +
              (tier == 0 ? "_rollup WHERE ("
                         : "_tiers WHERE tier = " + std::to_string(tier) + " AND (") +
              text + ")" + filters;
    }
    // The keys after the bucket (if any): "GROUP BY <first>, <keys>", or the keys alone.
    const auto group_by = [&](const std::string& first) {
      const std::string all = first.empty() ? (keys.empty() ? "" : keys.substr(2)) : first + keys;
      return all.empty() ? std::string() : " GROUP BY " + all;
    };
    if (!q.by_bucket)
      return "SELECT " + (keys.empty() ? "" : keys.substr(2) + ", ") + sums + " FROM (" + rows +
             ") AS r" + group_by("");
    if (!stretches_in_sql(q))
      return "SELECT bucket" + keys + ", " + sums + " FROM (" + rows + ") AS r" +
             group_by("bucket");
    const std::string starts = "$" + std::to_string(++n) + "::BIGINT[]";
    const std::string stretch = "(" + starts + ")[width_bucket(bucket, " + starts + ")]";
    return "SELECT " + stretch + keys + ", " + sums + " FROM (" + rows + ") AS r" +
           group_by(stretch);
  }

  /// Whether planned_sql sums a cut question's rows per stretch (rather than per bucket, each
  /// within one stretch): when stretches are longer than two hours on average, so that far
  /// fewer sums are sent (a 30-day report by day and buyer in New York's days reads 110,000
  /// hour rows: 15,000 sums per hour and buyer, 620 per day; 221 ms, then 90). Finding a row's
  /// stretch costs more than it saves when the stretches are hours: a 90-day report by hour
  /// took 113 ms per bucket and 200 per stretch.
  static bool stretches_in_sql(const RollupQuery& q) {
    const std::vector<std::int64_t> starts = sum_starts(q);
    return !starts.empty() &&
           (q.to_ms - q.from_ms) / static_cast<std::int64_t>(starts.size()) > 2 * kTierHourMs;
  }

  /// The parameters of planned_sql: the filters' values, then the stretches' starts.
  static Params filter_params(const RollupQuery& q) {
    Params params;
    for (const auto& f : q.filters) params.add(f.second);
    if (stretches_in_sql(q)) {
      ArrayText array;
      for (std::int64_t s : sum_starts(q)) array.add(s);
      params.add(array.str());
    }
    return params;
  }

  /// A rollup's sums, read with PostgreSQL's JIT compilation off and 64 MB of work memory (SET
  /// LOCAL, in a transaction of its own sent as one pipeline: one round trip). A rollup sum is a
  /// scan adding up a few dozen integer columns, which JIT does not make faster; over 3 million
  /// generated leads, compiling the expressions of a 30-day performance report took 120-140 ms
  /// of every answer (EXPLAIN ANALYZE: "JIT: ... Emission 103-119 ms"), and the report was
  /// slower with it than without. The default 4 MB made a 30-day report by day and buyer in New
  /// York's days (110,000 hour rows) sort on disk: 218 ms, 133 ms in memory.
  template <class T, class Read>
  std::optional<std::vector<T>> read_rollup(const char* op, const std::string& sql,
                                            const Params& params, Read&& read) {
    return run(op, std::optional<std::vector<T>>{},
               [&](Connection& c) -> std::optional<std::vector<T>> {
                 const std::vector<Result> results =
                     c.exec_pipeline({{"BEGIN", Params()},
                                      {"SET LOCAL jit = off", Params()},
                                      {"SET LOCAL work_mem = '64MB'", Params()},
                                      {sql.c_str(), params},
                                      {"COMMIT", Params()}},
                                     Effect::kRead);
                 const Result& r = results[3];
                 std::vector<T> out;
                 out.reserve(static_cast<std::size_t>(r.rows()));
                 for (int i = 0; i < r.rows(); ++i) out.push_back(read(Row{r, i}));
                 return out;
               });
  }

  static std::int64_t hour_start(std::int64_t ms) {
    const std::int64_t h = ms / kHourMs - (ms % kHourMs < 0 ? 1 : 0);  // floor, also below 0
    return h * kHourMs;
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

std::unique_ptr<Store> open_pg_store(const PgStoreOptions& options, std::string& error) {
  try {
    ConnectSettings settings;
    // Defaults first, the caller's conninfo last: libpq lets later settings win, so a
    // connect_timeout or keepalive named in the URL overrides these.
    const std::pair<const char*, std::string> defaults[] = {
        {"connect_timeout", std::to_string(std::max(options.connect_timeout_s, 1))},
        {"keepalives", "1"},
        {"keepalives_idle", kKeepalivesIdleS},
        {"keepalives_interval", kKeepalivesIntervalS},
        {"keepalives_count", kKeepalivesCount},
        {"tcp_user_timeout", kTcpUserTimeoutMs},
        {"client_encoding", "UTF8"},
        {"fallback_application_name", "leadflow"},
        {"dbname", options.conninfo},
    };
    for (const auto& [keyword, value] : defaults) {
      settings.keywords.emplace_back(keyword);
      settings.values.push_back(value);
    }
    settings.secrets =
        std::make_shared<const std::vector<std::string>>(password_forms(options.conninfo));

    // One connection now, so that a wrong URL or an unreachable server stops start-up.
    std::string detail;
    auto first = Connection::open(settings, detail);
    if (!first) {
      error = "cannot connect to PostgreSQL: " + detail;
      return nullptr;
    }
    const auto pool_size = static_cast<std::size_t>(std::max(options.pool_size, 1));
    auto store = std::make_unique<PgStore>(std::move(settings), pool_size);
    store->pool().adopt(std::move(first));
    return store;
  } catch (const std::exception& e) {
    error = std::string("cannot open the PostgreSQL store: ") + e.what();
    return nullptr;
  }
}

}  // namespace leadflow
