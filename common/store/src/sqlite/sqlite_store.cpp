// The SQLite adapter of the Store port (the embedded default, SPEC §1).
//
// Connections: one writer, guarded by a mutex (SQLite allows one writer at a time anyway, and
// serialising in-process avoids busy-waiting on the file lock), and a small pool of readers that
// WAL lets run beside the writer. Every connection caches its prepared statements. Every SQLite
// failure becomes a StoreStatus here: constraint violations are kConflict, everything else
// (busy, I/O, corruption, a missing schema) is kUnavailable. No exception leaves this file.

#include "leadflow/store/sqlite_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/base/log.hpp"
#include "rows.hpp"

namespace leadflow {
namespace {

using nlohmann::json;
using namespace store_rows;  // the column lists and row readers shared with PostgreSQL

// ------------------------------------------------------------------------------------------------
// Schema. Entry i is schema version i + 1. Append only: a released migration is never edited,
// because databases in the field have already applied it.
// ------------------------------------------------------------------------------------------------

constexpr const char* kMigrations[] = {
    // 1: the initial schema.
    R"sql(
CREATE TABLE sellers (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  active      INTEGER NOT NULL,
  created_at  INTEGER NOT NULL
);

CREATE TABLE campaigns (
  id                    TEXT PRIMARY KEY,
  seller_id             TEXT NOT NULL REFERENCES sellers (id),
  name                  TEXT NOT NULL,
  vertical              TEXT NOT NULL,
  active                INTEGER NOT NULL,
  async_mode            INTEGER NOT NULL,
  sync_timeout_ms       INTEGER NOT NULL,
  rate_limit_per_minute INTEGER NOT NULL,
  payout_fixed          INTEGER NOT NULL,
  payout_value          INTEGER NOT NULL,
  key_hash              TEXT NOT NULL UNIQUE,
  key_hint              TEXT NOT NULL,
  created_at            INTEGER NOT NULL
);
CREATE INDEX campaigns_by_seller ON campaigns (seller_id, id);

-- seller_id NULL: a key of the operator's own account.
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  seller_id   TEXT REFERENCES sellers (id),
  name        TEXT NOT NULL,
  plan        TEXT NOT NULL,
  scopes      INTEGER NOT NULL,
  key_hash    TEXT NOT NULL UNIQUE,
  key_hint    TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER NOT NULL DEFAULT 0
);

-- doc holds the whole configuration (buyer_to_json); active and verticals are copied out of it
-- so that listing can filter without decoding every document.
CREATE TABLE buyers (
  id          TEXT PRIMARY KEY,
  active      INTEGER NOT NULL,
  verticals   TEXT NOT NULL,
  doc         TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

-- Bumped in the same transaction as every buyer change; workers reload when it moves.
CREATE TABLE buyers_version (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  version  INTEGER NOT NULL
);
INSERT INTO buyers_version (id, version) VALUES (1, 0);

-- Leads reference no account by foreign key: a lead arrives from the queue after it was
-- acknowledged to the seller, and storing it must never fail on a reference.
CREATE TABLE leads (
  id                    TEXT PRIMARY KEY,
  seller_id             TEXT NOT NULL,
  campaign_id           TEXT NOT NULL,
  api_key_id            TEXT NOT NULL,
  surface               TEXT NOT NULL CHECK (surface IN ('api', 'campaign')),
  first_name            TEXT NOT NULL,
  last_name             TEXT NOT NULL,
  email                 TEXT NOT NULL,
  phone                 TEXT NOT NULL,
  zip_code              TEXT NOT NULL,
  zip4                  TEXT NOT NULL,
  state                 TEXT NOT NULL,
  vertical              TEXT NOT NULL,
  source                TEXT NOT NULL,
  landing_page          TEXT NOT NULL,
  ip_address            TEXT NOT NULL,
  user_agent            TEXT NOT NULL,
  trustedform_cert_url  TEXT NOT NULL,
  jornaya_leadid        TEXT NOT NULL,
  tcpa_consent          INTEGER,
  tcpa_consent_text     TEXT NOT NULL,
  custom_fields         TEXT NOT NULL,
  received_at           INTEGER NOT NULL,
  sync_wait_ms          INTEGER NOT NULL,
  status                TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
                          ('pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed',
                           'returned')),
  buyer_id              TEXT NOT NULL DEFAULT '',
  price_cents           INTEGER NOT NULL DEFAULT 0,
  payout_cents          INTEGER NOT NULL DEFAULT 0,
  buyer_lead_id         TEXT NOT NULL DEFAULT '',
  reason                TEXT NOT NULL DEFAULT '',
  decided_at            INTEGER NOT NULL DEFAULT 0,
  attempts              TEXT NOT NULL DEFAULT '[]',
  ineligible            TEXT NOT NULL DEFAULT '[]'
);
-- Listing is newest first by id (ids sort by time), under one equality filter at a time.
CREATE INDEX leads_by_seller   ON leads (seller_id, id);
CREATE INDEX leads_by_status   ON leads (status, id);
CREATE INDEX leads_by_vertical ON leads (vertical, id);
CREATE INDEX leads_by_source   ON leads (source, id);
CREATE INDEX leads_by_buyer    ON leads (buyer_id, id);
CREATE INDEX leads_by_received ON leads (received_at);
-- Intake dedupe.
CREATE INDEX leads_dup_email   ON leads (vertical, email, received_at);
CREATE INDEX leads_dup_phone   ON leads (vertical, phone, received_at);
-- Campaign stats: covering, so the stats page never reads lead rows.
CREATE INDEX leads_by_campaign ON leads (campaign_id, received_at, status, payout_cents);

-- One row per sale. Exclusive sales always use slot 0, so the primary key alone guarantees a
-- lead is sold once; shared sales (a later change) will use slots 0..N-1, still at most once
-- per buyer. email and phone are copied from the lead so that the per-buyer "already bought
-- this person" check, run for every lead and buyer, is one index probe without a join.
CREATE TABLE sales (
  lead_id       TEXT NOT NULL REFERENCES leads (id),
  slot          INTEGER NOT NULL DEFAULT 0,
  buyer_id      TEXT NOT NULL,
  price_cents   INTEGER NOT NULL,
  payout_cents  INTEGER NOT NULL,
  sold_at       INTEGER NOT NULL,
  email         TEXT NOT NULL,
  phone         TEXT NOT NULL,
  PRIMARY KEY (lead_id, slot),
  UNIQUE (lead_id, buyer_id)
);
CREATE INDEX sales_by_buyer       ON sales (buyer_id, sold_at);
CREATE INDEX sales_by_buyer_email ON sales (buyer_id, email, sold_at);
CREATE INDEX sales_by_buyer_phone ON sales (buyer_id, phone, sold_at);

CREATE TABLE post_intents (
  lead_id      TEXT PRIMARY KEY REFERENCES leads (id),
  buyer_id     TEXT NOT NULL,
  price_cents  INTEGER NOT NULL,
  ping_id      TEXT NOT NULL,
  at           INTEGER NOT NULL
);

-- Surface B posts that failed validation, counted per campaign per hour (the lead itself is never
-- stored). Hourly rather than daily buckets keep "24h" and local-midnight "today" windows exact
-- to the hour.
CREATE TABLE invalid_counts (
  campaign_id  TEXT NOT NULL,
  hour_start   INTEGER NOT NULL,
  count        INTEGER NOT NULL,
  PRIMARY KEY (campaign_id, hour_start)
);
)sql",
    // 2: Idempotency-Key claims and answers (POST /v1/leads), kept 24 hours.
    R"sql(
CREATE TABLE idempotency_keys (
  scope         TEXT NOT NULL,
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  lead_id       TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
)sql",
    // 3: cap reservations count a buyer's open post intents; shared rate-limit buckets
    // (scale-out: several ingest processes share one limit per key).
    R"sql(
CREATE INDEX post_intents_by_buyer ON post_intents (buyer_id, at);

CREATE TABLE rate_buckets (
  key          TEXT PRIMARY KEY,
  tokens       REAL NOT NULL,
  refilled_at  INTEGER NOT NULL,
  day          INTEGER NOT NULL,
  day_count    INTEGER NOT NULL
);
)sql",
};

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::size_t kReaderPoolSize = 4;
constexpr int kBusyTimeoutMs = 5000;
// Negative cache sizes are KiB: 64 MiB for the writer, 16 MiB per reader.
constexpr const char* kWriterCacheSize = "PRAGMA cache_size = -65536";
constexpr const char* kReaderCacheSize = "PRAGMA cache_size = -16384";

// ------------------------------------------------------------------------------------------------
// Connections and statements
// ------------------------------------------------------------------------------------------------

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

/// One SQLite connection with its cache of prepared statements. Not thread-safe: one thread uses
/// it at a time (the writer under the store's mutex, a reader while leased from the pool).
class Connection {
 public:
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Opens `path` as the writer (creating the file, switching it to WAL) or as a reader.
  static std::unique_ptr<Connection> open(const std::string& path, bool writer,
                                          std::string& error) {
    sqlite3* db = nullptr;
    const int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    std::unique_ptr<Connection> conn(new Connection(db));  // closes db on every exit
    if (rc != SQLITE_OK) {
      error = "cannot open SQLite database '" + path + "': " + sqlite3_errstr(rc);
      return nullptr;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    if (writer) {
      // journal_mode answers with the mode in force; anything but "wal" means WAL is unavailable
      // here (e.g. a file system without shared memory), and the reader pool would block.
      std::string mode;
      rc = conn->pragma("PRAGMA journal_mode = WAL", &mode);
      if (rc == SQLITE_OK && mode != "wal") {
        error = "SQLite database '" + path + "' cannot use WAL mode (got '" + mode + "')";
        return nullptr;
      }
      // FULL: the worker commits queue offsets after the outcome is written, so a committed
      // outcome must survive power loss, not only a process crash.
      if (rc == SQLITE_OK) rc = conn->pragma("PRAGMA synchronous = FULL", nullptr);
      if (rc == SQLITE_OK) rc = conn->pragma("PRAGMA foreign_keys = ON", nullptr);
      // The writer touches every lead index on each insert and outcome: keep them in memory.
      if (rc == SQLITE_OK) rc = conn->pragma(kWriterCacheSize, nullptr);
    } else {
      rc = conn->pragma("PRAGMA query_only = ON", nullptr);
      if (rc == SQLITE_OK) rc = conn->pragma(kReaderCacheSize, nullptr);
    }
    // No mmap_size: an I/O error on a mapped page is a SIGBUS, not an error code to translate.
    if (rc != SQLITE_OK) {
      error = "cannot use SQLite database '" + path + "': " + sqlite3_errstr(rc);
      return nullptr;
    }
    return conn;
  }

  ~Connection() {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  /// The cached statement for `sql`, prepared on first use; nullptr on failure (see last_error).
  sqlite3_stmt* statement(std::string_view sql) {
    if (auto it = statements_.find(sql); it != statements_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK || stmt == nullptr) {
      last_error_ = rc != SQLITE_OK ? rc : SQLITE_MISUSE;
      sqlite3_finalize(stmt);
      return nullptr;
    }
    statements_.emplace(std::string(sql), stmt);
    return stmt;
  }

  /// Runs one or more statements without caching (migrations).
  int exec(const char* sql) { return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr); }

  int last_error() const { return last_error_; }
  std::int64_t changes() const { return sqlite3_changes64(db_); }
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
  const char* message() const { return sqlite3_errmsg(db_); }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}

  int pragma(const char* sql, std::string* answer) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && answer != nullptr) {
      const auto* text = sqlite3_column_text(stmt, 0);
      *answer = text ? reinterpret_cast<const char*>(text) : "";
    }
    sqlite3_finalize(stmt);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
  }

  sqlite3* db_;
  int last_error_ = SQLITE_OK;
  std::unordered_map<std::string, sqlite3_stmt*, StringHash, std::equal_to<>> statements_;
};

/// A cached statement in use. Parameters bind in order (?1, ?2, ...); the statement is reset on
/// scope exit, so the connection holds no read snapshot and no pending write afterwards.
/// Strings are bound without copying: they must outlive the Query.
class Query {
 public:
  Query(Connection& conn, std::string_view sql) : stmt_(conn.statement(sql)) {
    if (stmt_ == nullptr) rc_ = conn.last_error();
  }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query() {
    if (stmt_ != nullptr) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }

  Query& bind(std::string_view v) {
    // A null data pointer would bind SQL NULL; an empty string must stay an empty string.
    if (ready()) note(sqlite3_bind_text(stmt_, ++pos_, v.data() ? v.data() : "",
                                        static_cast<int>(v.size()), SQLITE_STATIC));
    return *this;
  }
  Query& bind(const std::string& v) { return bind(std::string_view(v)); }
  Query& bind(const char* v) { return bind(std::string_view(v)); }
  Query& bind(std::int64_t v) {
    if (ready()) note(sqlite3_bind_int64(stmt_, ++pos_, v));
    return *this;
  }
  Query& bind(int v) { return bind(static_cast<std::int64_t>(v)); }
  Query& bind(double v) {
    if (ready()) note(sqlite3_bind_double(stmt_, ++pos_, v));
    return *this;
  }
  Query& bind(bool v) { return bind(static_cast<std::int64_t>(v ? 1 : 0)); }
  Query& bind_null() {
    if (ready()) note(sqlite3_bind_null(stmt_, ++pos_));
    return *this;
  }
  /// "" as SQL NULL (optional references).
  Query& bind_or_null(std::string_view v) { return v.empty() ? bind_null() : bind(v); }

  /// SQLITE_ROW, SQLITE_DONE, or the first error of binding or stepping.
  int step() {
    if (rc_ != SQLITE_OK) return rc_;
    const int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) rc_ = rc;
    return rc;
  }
  /// Steps a statement that returns no row: SQLITE_OK or the error.
  int run() {
    const int rc = step();
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
  }

  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    const int n = sqlite3_column_bytes(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n))
             : std::string();
  }
  std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  int int32(int col) const { return sqlite3_column_int(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool boolean(int col) const { return sqlite3_column_int64(stmt_, col) != 0; }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  bool ready() const { return stmt_ != nullptr && rc_ == SQLITE_OK; }
  void note(int rc) {
    if (rc != SQLITE_OK) rc_ = rc;
  }

  sqlite3_stmt* stmt_;
  int rc_ = SQLITE_OK;
  int pos_ = 0;
};

/// A write transaction on the writer connection. BEGIN IMMEDIATE takes the write lock up front
/// (waiting up to the busy timeout for another process), so a transaction never fails half-way
/// on lock upgrade. Rolls back on scope exit unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& conn) : conn_(conn) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    // exec, not a cached statement: nothing here may allocate or throw.
    if (begun_ && !committed_ && conn_.in_transaction()) conn_.exec("ROLLBACK");
  }
  int begin() {
    const int rc = Query(conn_, "BEGIN IMMEDIATE").run();
    begun_ = rc == SQLITE_OK;
    return rc;
  }
  int commit() {
    const int rc = Query(conn_, "COMMIT").run();
    committed_ = rc == SQLITE_OK;
    return rc;
  }

 private:
  Connection& conn_;
  bool begun_ = false;
  bool committed_ = false;
};

/// Reader connections, opened lazily up to a bound and lent to one thread at a time.
/// Thread-safe.
class ReaderPool {
 public:
  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Connection> conn)
        : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (conn_) pool_->give_back(std::move(conn_));
    }
    explicit operator bool() const { return conn_ != nullptr; }
    Connection& operator*() const { return *conn_; }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  ReaderPool(std::string path, std::size_t size) : path_(std::move(path)), size_(size) {}

  /// A connection, waiting while all are lent; an empty lease if a new one cannot be opened.
  Lease acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty() || opened_ < size_; });
    if (!free_.empty()) {
      auto conn = std::move(free_.back());
      free_.pop_back();
      return Lease(this, std::move(conn));
    }
    ++opened_;
    lock.unlock();
    std::string error;
    auto conn = Connection::open(path_, /*writer=*/false, error);
    if (!conn) {
      log(LogLevel::kError, "store_unavailable", {{"op", "open_reader"}, {"detail", error}});
      lock.lock();
      --opened_;
      lock.unlock();
      cv_.notify_one();
    }
    return Lease(this, std::move(conn));
  }

 private:
  void give_back(std::unique_ptr<Connection> conn) {
    {
      std::lock_guard lock(mu_);
      free_.push_back(std::move(conn));
    }
    cv_.notify_one();
  }

  const std::string path_;
  const std::size_t size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> free_;
  std::size_t opened_ = 0;
};

// ------------------------------------------------------------------------------------------------
// Translation
// ------------------------------------------------------------------------------------------------

bool is_constraint(int rc) { return (rc & 0xff) == SQLITE_CONSTRAINT; }

/// Maps a failed SQLite call to the port's vocabulary, and logs it (without SQL text or values).
StoreStatus report(const Connection& conn, int rc, const char* op) {
  if (is_constraint(rc)) {
    if (log_enabled(LogLevel::kDebug))
      log(LogLevel::kDebug, "store_conflict", {{"op", op}, {"code", rc}});
    return StoreStatus::kConflict;
  }
  log(LogLevel::kError, "store_unavailable",
      {{"op", op}, {"code", rc}, {"error", sqlite3_errstr(rc)}, {"detail", conn.message()}});
  return StoreStatus::kUnavailable;
}

/// Runs `body`, turning any escaping exception (bad_alloc, a JSON codec throwing) into
/// `fallback`: nothing thrown crosses the port.
template <class R, class F>
R guarded(const char* op, R fallback, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    try {
      log(LogLevel::kError, "store_unavailable", {{"op", op}, {"detail", e.what()}});
    } catch (...) {
    }
  } catch (...) {
  }
  return fallback;
}

// ------------------------------------------------------------------------------------------------
// Row codecs
// ------------------------------------------------------------------------------------------------

std::string verticals_json(const Buyer& b) { return dump(json(b.verticals)); }

/// Binds the LF_LEAD_COLUMNS of `l`, in order. `custom_fields` must outlive the query.
void bind_lead(Query& q, const Lead& l, const std::string& custom_fields) {
  q.bind(l.id)
      .bind(l.seller_id)
      .bind(l.campaign_id)
      .bind(l.api_key_id)
      .bind(surface_name(l.surface))
      .bind(l.first_name)
      .bind(l.last_name)
      .bind(l.email)
      .bind(l.phone)
      .bind(l.zip_code)
      .bind(l.zip4)
      .bind(l.state)
      .bind(l.vertical)
      .bind(l.source)
      .bind(l.landing_page)
      .bind(l.ip_address)
      .bind(l.user_agent)
      .bind(l.trustedform_cert_url)
      .bind(l.jornaya_leadid);
  if (l.tcpa_consent)
    q.bind(*l.tcpa_consent);
  else
    q.bind_null();
  q.bind(l.tcpa_consent_text).bind(custom_fields).bind(l.received_at_ms).bind(l.sync_wait_ms);
}

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

/// The SQLite Store. Thread-safe: writes serialise on one connection, reads use the pool.
class SqliteStore final : public Store {
 public:
  SqliteStore(std::string path, std::unique_ptr<Connection> writer)
      : writer_(std::move(writer)), readers_(std::move(path), kReaderPoolSize) {}

  ~SqliteStore() override {
    // Refreshes the planner's statistics where they drifted; cheap when nothing changed.
    std::lock_guard lock(write_mu_);
    writer_->exec("PRAGMA optimize");
  }

  // --- schema -----------------------------------------------------------------------------------

  StoreStatus migrate() override {
    return guarded("migrate", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "migrate");
      if (int rc = c.exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                          "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"))
        return report(c, rc, "migrate");
      std::int64_t current = 0;
      {
        Query q(c, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
        const int rc = q.step();
        if (rc != SQLITE_ROW) return report(c, rc, "migrate");
        current = q.int64(0);
      }
      const auto latest = static_cast<std::int64_t>(std::size(kMigrations));
      if (current > latest) {
        // A newer binary migrated this database; running old code on it could corrupt data.
        log(LogLevel::kError, "store_schema_too_new",
            {{"schema_version", current}, {"known_version", latest}});
        return StoreStatus::kUnavailable;
      }
      for (std::int64_t v = current + 1; v <= latest; ++v) {
        if (int rc = c.exec(kMigrations[v - 1])) return report(c, rc, "migrate");
        Query q(c,
                "INSERT INTO schema_migrations (version, applied_at) "
                "VALUES (?1, CAST(strftime('%s', 'now') AS INTEGER) * 1000)");
        if (int rc = q.bind(v).run()) return report(c, rc, "migrate");
      }
      if (int rc = tx.commit()) return report(c, rc, "migrate");
      if (latest > current)
        log(LogLevel::kInfo, "store_migrated", {{"from_version", current}, {"to_version", latest}});
      return StoreStatus::kOk;
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
                     "INSERT INTO sellers (id, name, active, created_at) VALUES (?1, ?2, ?3, ?4)",
                     [&](Query& q) {
                       q.bind(s.id).bind(s.name).bind(s.active).bind(s.created_at_ms);
                     });
  }

  std::optional<Seller> get_seller(std::string_view id) override {
    return read_optional<Seller>(
        "get_seller", "SELECT id, name, active, created_at FROM sellers WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, read_seller<Query>);
  }

  std::vector<Seller> list_sellers() override {
    return read_all<Seller>("list_sellers",
                            "SELECT id, name, active, created_at FROM sellers ORDER BY id",
                            [](Query&) {}, read_seller<Query>);
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
        "get_campaign", "SELECT " LF_CAMPAIGN_COLUMNS " FROM campaigns WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, read_campaign<Query>);
  }

  std::optional<Campaign> find_campaign_by_key_hash(std::string_view key_hash) override {
    return read_optional<Campaign>(
        "find_campaign_by_key_hash",
        "SELECT " LF_CAMPAIGN_COLUMNS " FROM campaigns WHERE key_hash = ?1",
        [&](Query& q) { q.bind(key_hash); }, read_campaign<Query>);
  }

  std::vector<Campaign> list_campaigns(std::string_view seller_id) override {
    return read_all<Campaign>(
        "list_campaigns",
        "SELECT " LF_CAMPAIGN_COLUMNS
        " FROM campaigns WHERE ?1 = '' OR seller_id = ?1 ORDER BY id",
        [&](Query& q) { q.bind(seller_id); }, read_campaign<Query>);
  }

  StoreStatus insert_api_key(const ApiKey& k) override {
    return write_one("insert_api_key",
                     "INSERT INTO api_keys (" LF_API_KEY_COLUMNS
                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                     [&](Query& q) {
                       q.bind(k.id)
                           .bind_or_null(k.seller_id)
                           .bind(k.name)
                           .bind(to_string(k.plan))
                           .bind(static_cast<std::int64_t>(k.scopes))
                           .bind(k.key_hash)
                           .bind(k.key_hint)
                           .bind(k.created_at_ms)
                           .bind(k.revoked_at_ms);
                     });
  }

  std::optional<ApiKey> find_api_key_by_hash(std::string_view key_hash) override {
    return read_optional<ApiKey>(
        "find_api_key_by_hash", "SELECT " LF_API_KEY_COLUMNS " FROM api_keys WHERE key_hash = ?1",
        [&](Query& q) { q.bind(key_hash); }, read_api_key<Query>);
  }

  std::vector<ApiKey> list_api_keys() override {
    return read_all<ApiKey>("list_api_keys",
                            "SELECT " LF_API_KEY_COLUMNS " FROM api_keys ORDER BY id",
                            [](Query&) {}, read_api_key<Query>);
  }

  /// Revoking a revoked key is kOk and keeps the first revocation time.
  StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms) override {
    return guarded("revoke_api_key", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      {
        Query q(c, "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at = 0");
        // 0 means "live": a revocation is never recorded as 0.
        if (int rc = q.bind(id).bind(std::max<std::int64_t>(at_ms, 1)).run())
          return report(c, rc, "revoke_api_key");
      }
      if (c.changes() > 0) return StoreStatus::kOk;
      return exists(c, "SELECT 1 FROM api_keys WHERE id = ?1", id, "revoke_api_key",
                    StoreStatus::kOk);
    });
  }

  // --- buyers -----------------------------------------------------------------------------------

  StoreStatus insert_buyer(const Buyer& b) override {
    return guarded("insert_buyer", StoreStatus::kUnavailable, [&] {
      const std::string doc = dump(buyer_to_json(b, /*mask_secrets=*/false));
      const std::string verticals = verticals_json(b);
      return write_buyer("insert_buyer", [&](Connection& c) {
        Query q(c, "INSERT INTO buyers (" LF_BUYER_COLUMNS ", verticals) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        if (int rc = q.bind(b.id).bind(b.active).bind(doc).bind(b.created_at_ms)
                         .bind(b.updated_at_ms).bind(verticals).run())
          return report(c, rc, "insert_buyer");
        return StoreStatus::kOk;
      });
    });
  }

  /// Replaces the configuration; the creation time stays the one first stored.
  StoreStatus update_buyer(const Buyer& b) override {
    return guarded("update_buyer", StoreStatus::kUnavailable, [&] {
      const std::string doc = dump(buyer_to_json(b, /*mask_secrets=*/false));
      const std::string verticals = verticals_json(b);
      return write_buyer("update_buyer", [&](Connection& c) {
        Query q(c, "UPDATE buyers SET active = ?2, doc = ?3, updated_at = ?4, verticals = ?5 "
                   "WHERE id = ?1");
        if (int rc = q.bind(b.id).bind(b.active).bind(doc).bind(b.updated_at_ms)
                         .bind(verticals).run())
          return report(c, rc, "update_buyer");
        return c.changes() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
      });
    });
  }

  std::optional<Buyer> get_buyer(std::string_view id) override {
    return guarded("get_buyer", std::optional<Buyer>{}, [&]() -> std::optional<Buyer> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Query q(*conn, "SELECT " LF_BUYER_COLUMNS " FROM buyers WHERE id = ?1");
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
      Query q(*conn,
              "SELECT " LF_BUYER_COLUMNS " FROM buyers"
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
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads) override {
    return guarded("insert_leads", std::vector<LeadInsertResult>{}, [&] {
      std::vector<LeadInsertResult> results(leads.size());
      if (leads.empty()) return results;
      std::vector<std::string> custom(leads.size());
      for (std::size_t i = 0; i < leads.size(); ++i)
        custom[i] = dump(custom_fields_to_json(leads[i].custom_fields));

      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Transaction tx(c);
      if (int rc = tx.begin()) return failed(c, rc, "insert_leads", results);
      for (std::size_t i = 0; i < leads.size(); ++i) {
        {
          Query q(c, "INSERT INTO leads (" LF_LEAD_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
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
    return read_optional<LeadRecord>(
        "get_lead",
        "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
        ", attempts, ineligible FROM leads WHERE id = ?1",
        [&](Query& q) { q.bind(id); }, [](const Query& q) { return read_lead(q, true); });
  }

  std::vector<LeadRecord> list_leads(const LeadQuery& lq) override {
    return guarded("list_leads", std::vector<LeadRecord>{}, [&] {
      // One statement per combination of filters (at most 2^8, each cached once): a fixed
      // "(? = '' OR col = ?)" form would hide the usable index from the planner.
      std::string sql = "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                        " FROM leads WHERE 1 = 1";
      if (!lq.seller_id.empty()) sql += " AND seller_id = ?";
      if (lq.status) sql += " AND status = ?";
      if (!lq.vertical.empty()) sql += " AND vertical = ?";
      if (!lq.source.empty()) sql += " AND source = ?";
      if (!lq.buyer_id.empty()) sql += " AND buyer_id = ?";
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
  /// kept and every one answers kUnavailable.
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
        if (s == StoreStatus::kUnavailable) return all_failed;
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
    if (!caps.empty()) {
      if (own_transaction)
        if (int rc = tx.begin()) return report(c, rc, "record_post_intent");
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
        Query q(c,
                "SELECT (SELECT COUNT(*) FROM sales WHERE buyer_id = ?1 AND sold_at >= ?2)"
                " + (SELECT COUNT(*) FROM post_intents"
                "    JOIN leads ON leads.id = post_intents.lead_id"
                "    WHERE post_intents.buyer_id = ?1 AND post_intents.at >= ?2"
                "    AND post_intents.lead_id <> ?3 AND leads.status = 'pending')");
        const int rc = q.bind(p.buyer_id).bind(cap.since_ms).bind(p.lead_id).step();
        if (rc != SQLITE_ROW) return report(c, rc, "record_post_intent");
        if (q.int64(0) >= cap.limit) return StoreStatus::kLimitReached;
      }
    }
    {
      // One statement: without caps, the pending check and the write are atomic without a
      // transaction.
      Query q(c,
              "INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at)"
              " SELECT id, ?2, ?3, ?4, ?5 FROM leads WHERE id = ?1 AND status = 'pending'"
              " ON CONFLICT (lead_id) DO UPDATE SET buyer_id = excluded.buyer_id,"
              " price_cents = excluded.price_cents, ping_id = excluded.ping_id,"
              " at = excluded.at");
      if (int rc = q.bind(p.lead_id).bind(p.buyer_id).bind(p.price).bind(p.ping_id)
                       .bind(p.at_ms).run())
        return report(c, rc, "record_post_intent");
    }
    if (c.changes() == 0)
      return exists(c, "SELECT 1 FROM leads WHERE id = ?1", p.lead_id, "record_post_intent",
                    StoreStatus::kConflict);
    if (!caps.empty() && own_transaction)
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
        Query q(c,
                "SELECT tokens, refilled_at, day, day_count FROM rate_buckets WHERE key = ?1");
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
        if (int rc = q.bind(key).bind(state.tokens).bind(state.refilled_at_ms).bind(state.day)
                         .bind(state.day_count).run())
          return report(c, rc, "update_rate_bucket");
      }
      if (int rc = tx.commit()) return report(c, rc, "update_rate_bucket");
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
        if (int rc = q.bind(r.scope).bind(r.key).bind(r.request_hash).bind(r.lead_id)
                         .bind(r.created_at_ms).bind(expire_before_ms).run())
          return report(c, rc, "claim_idempotency_key");
      }
      if (c.changes() > 0) return StoreStatus::kOk;
      Query q(c,
              "SELECT scope, key, request_hash, lead_id, status, response, created_at"
              " FROM idempotency_keys WHERE scope = ?1 AND key = ?2");
      q.bind(r.scope).bind(r.key);
      const int rc = q.step();
      if (rc != SQLITE_ROW) return report(c, rc == SQLITE_DONE ? SQLITE_ERROR : rc, "claim_idempotency_key");
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

  std::optional<PostIntent> get_post_intent(std::string_view lead_id) override {
    return read_optional<PostIntent>(
        "get_post_intent",
        "SELECT lead_id, buyer_id, price_cents, ping_id, at FROM post_intents WHERE lead_id = ?1",
        [&](Query& q) { q.bind(lead_id); },
        [](const Query& q) {
          PostIntent p;
          p.lead_id = q.text(0);
          p.buyer_id = q.text(1);
          p.price = q.int64(2);
          p.ping_id = q.text(3);
          p.at_ms = q.int64(4);
          return p;
        });
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
      for (std::size_t i = 0; i < outcomes.size(); ++i) {
        int rc = record_outcome(c, outcomes[i], json_text[i].first, json_text[i].second,
                                results[i]);
        if (rc != SQLITE_OK) return (report(c, rc, "record_outcomes"), all_failed);
      }
      if (int rc = tx.commit()) return (report(c, rc, "record_outcomes"), all_failed);
      return results;
    });
  }

  std::optional<std::int64_t> count_sales(std::string_view buyer_id, std::int64_t since_ms) override {
    return guarded("count_sales", std::optional<std::int64_t>{}, [&]() -> std::optional<std::int64_t> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Query q(*conn, "SELECT COUNT(*) FROM sales WHERE buyer_id = ?1 AND sold_at >= ?2");
      const int rc = q.bind(buyer_id).bind(since_ms).step();
      if (rc == SQLITE_ROW) return q.int64(0);
      report(*conn, rc, "count_sales");
      return std::nullopt;
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
          probe("SELECT 1 FROM sales WHERE buyer_id = ?1 AND email = ?2 AND sold_at >= ?3"
                " LIMIT 1",
                email) ||
          probe("SELECT 1 FROM sales WHERE buyer_id = ?1 AND phone = ?2 AND sold_at >= ?3"
                " LIMIT 1",
                phone);
      if (failed) return std::nullopt;
      return bought;
    });
  }

  /// `invalid` counts whole hours: posts in the hour that contains `since_ms` all count.
  CampaignStats campaign_stats(std::string_view campaign_id, std::int64_t since_ms) override {
    return guarded("campaign_stats", CampaignStats{}, [&] {
      CampaignStats s;
      auto conn = readers_.acquire();
      if (!conn) return s;
      {
        Query q(*conn,
                "SELECT COUNT(*),"
                " COALESCE(SUM(status = 'delivered'), 0),"
                " COALESCE(SUM(status = 'unsold'), 0),"
                " COALESCE(SUM(status = 'duplicate'), 0),"
                " COALESCE(SUM(status = 'pending'), 0),"
                " COALESCE(SUM(status IN ('failed', 'rejected')), 0),"
                " COALESCE(SUM(CASE WHEN status = 'delivered' THEN payout_cents END), 0)"
                " FROM leads WHERE campaign_id = ?1 AND received_at >= ?2");
        const int rc = q.bind(campaign_id).bind(since_ms).step();
        if (rc != SQLITE_ROW) return (report(*conn, rc, "campaign_stats"), CampaignStats{});
        s.received = q.int64(0);
        s.sold = q.int64(1);
        s.unsold = q.int64(2);
        s.duplicates = q.int64(3);
        s.queued = q.int64(4);
        s.errors = q.int64(5);
        s.payout = q.int64(6);
      }
      Query q(*conn,
              "SELECT COALESCE(SUM(count), 0) FROM invalid_counts"
              " WHERE campaign_id = ?1 AND hour_start >= ?2");
      const int rc = q.bind(campaign_id).bind(hour_start(since_ms)).step();
      if (rc != SQLITE_ROW) return (report(*conn, rc, "campaign_stats"), CampaignStats{});
      s.invalid = q.int64(0);
      return s;
    });
  }

  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override {
    write_one("count_invalid",
              "INSERT INTO invalid_counts (campaign_id, hour_start, count) VALUES (?1, ?2, 1)"
              " ON CONFLICT (campaign_id, hour_start) DO UPDATE SET count = count + 1",
              [&](Query& q) { q.bind(campaign_id).bind(hour_start(at_ms)); });
  }

 private:
  static std::int64_t clamp_limit(int limit) {
    return std::clamp<std::int64_t>(limit, 1, 1000);
  }

  static std::int64_t hour_start(std::int64_t ms) {
    const std::int64_t h = ms / kHourMs - (ms % kHourMs < 0 ? 1 : 0);  // floor, also below 0
    return h * kHourMs;
  }

  static std::vector<LeadInsertResult> failed(const Connection& c, int rc, const char* op,
                                              std::vector<LeadInsertResult>& results) {
    report(c, rc, op);
    results.clear();
    return results;
  }

  /// kOk-like `found` when the row of `sql` (one ?1 parameter) exists, kNotFound when not.
  static StoreStatus exists(Connection& c, const char* sql, std::string_view key, const char* op,
                            StoreStatus found) {
    Query q(c, sql);
    const int rc = q.bind(key).step();
    if (rc == SQLITE_ROW) return found;
    if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
    return report(c, rc, op);
  }

  /// Writes one outcome inside the caller's transaction. Returns SQLITE_OK with `result` set,
  /// or the error that must abort the whole transaction.
  static int record_outcome(Connection& c, const OutcomeRecord& o, const std::string& attempts,
                            const std::string& ineligible, StoreStatus& result) {
    const Distribution& d = o.distribution;
    if (d.status == DeliveryStatus::kPending) {
      result = StoreStatus::kConflict;  // decides nothing; there is no "invalid" status
      return SQLITE_OK;
    }
    const bool sale = d.status == DeliveryStatus::kDelivered;
    // The sale row is written after the lead row; a savepoint undoes the lead row if the sale
    // constraint refuses it, so a lead is never marked delivered without its one sale.
    if (sale)
      if (int rc = Query(c, "SAVEPOINT outcome").run()) return rc;
    {
      Query q(c,
              "UPDATE leads SET status = ?2, buyer_id = ?3, price_cents = ?4, payout_cents = ?5,"
              " buyer_lead_id = ?6, reason = ?7, decided_at = ?8, attempts = ?9, ineligible = ?10"
              " WHERE id = ?1 AND status = 'pending'");
      q.bind(o.lead_id)
          .bind(to_string(d.status))
          .bind(d.buyer_id)
          .bind(d.price)
          .bind(d.payout)
          .bind(d.buyer_lead_id)
          .bind(d.reason)
          .bind(d.decided_at_ms)
          .bind(attempts)
          .bind(ineligible);
      if (int rc = q.run()) return rc;
    }
    if (c.changes() == 0) {
      if (sale)
        if (int rc = Query(c, "RELEASE outcome").run()) return rc;
      Query q(c, "SELECT 1 FROM leads WHERE id = ?1");
      const int rc = q.bind(o.lead_id).step();
      if (rc == SQLITE_ROW) {
        result = StoreStatus::kConflict;
      } else if (rc == SQLITE_DONE) {
        result = StoreStatus::kNotFound;
      } else {
        return rc;
      }
      return SQLITE_OK;
    }
    if (sale) {
      int rc;
      {
        Query q(c,
                "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
                " email, phone) SELECT id, 0, ?2, ?3, ?4, ?5, email, phone FROM leads"
                " WHERE id = ?1");
        rc = q.bind(o.lead_id).bind(d.buyer_id).bind(d.price).bind(d.payout)
                 .bind(d.decided_at_ms).run();
      }
      if (is_constraint(rc)) {
        if (int rb = Query(c, "ROLLBACK TO outcome").run()) return rb;
        result = StoreStatus::kConflict;
      } else if (rc != SQLITE_OK) {
        return rc;
      } else {
        result = StoreStatus::kOk;
      }
      return Query(c, "RELEASE outcome").run();
    }
    result = StoreStatus::kOk;
    return SQLITE_OK;
  }

  /// One writing statement in autocommit mode.
  template <class Bind>
  StoreStatus write_one(const char* op, std::string_view sql, Bind&& bind) {
    return guarded(op, StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Query q(c, sql);
      bind(q);
      if (int rc = q.run()) return report(c, rc, op);
      return StoreStatus::kOk;
    });
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

  template <class T, class Bind, class Read>
  std::optional<T> read_optional(const char* op, std::string_view sql, Bind&& bind, Read&& read) {
    return guarded(op, std::optional<T>{}, [&]() -> std::optional<T> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Query q(*conn, sql);
      bind(q);
      const int rc = q.step();
      if (rc == SQLITE_ROW) return read(q);
      if (rc != SQLITE_DONE) report(*conn, rc, op);
      return std::nullopt;
    });
  }

  template <class T, class Bind, class Read>
  std::vector<T> read_all(const char* op, std::string_view sql, Bind&& bind, Read&& read) {
    return guarded(op, std::vector<T>{}, [&] {
      std::vector<T> out;
      auto conn = readers_.acquire();
      if (!conn) return out;
      Query q(*conn, sql);
      bind(q);
      int rc;
      while ((rc = q.step()) == SQLITE_ROW) out.push_back(read(q));
      if (rc != SQLITE_DONE) {
        report(*conn, rc, op);
        out.clear();
      }
      return out;
    });
  }

  std::mutex write_mu_;
  std::unique_ptr<Connection> writer_;
  ReaderPool readers_;
  std::atomic<std::int64_t> last_buyers_version_{0};
};

#undef LF_LEAD_COLUMNS
#undef LF_DISTRIBUTION_COLUMNS
#undef LF_CAMPAIGN_COLUMNS
#undef LF_API_KEY_COLUMNS
#undef LF_BUYER_COLUMNS

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
