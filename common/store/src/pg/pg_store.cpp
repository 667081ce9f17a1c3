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
// (unnest), so a batch costs a few round trips, not one per row. Every libpq failure becomes a
// StoreStatus here: integrity violations (SQLSTATE class 23) are kConflict, everything else is
// kUnavailable. Internally failures are thrown as PgError and caught at the port: no exception
// leaves this file.

#include "leadflow/store/pg_store.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
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
using namespace store_rows;  // the column lists and row readers shared with SQLite

// ------------------------------------------------------------------------------------------------
// Schema. Entry i is schema version i + 1, the same versions as the SQLite adapter's. Append
// only: a released migration is never edited, because databases in the field have applied it.
//
// Every TEXT column holding an id is COLLATE "C": listings order by id and page with id < / >
// cursors, and ids sort by time only in byte order (the database's own collation may be a
// natural-language one). Times are BIGINT milliseconds, money BIGINT cents, flags BOOLEAN, JSON
// documents TEXT (decoded by the adapter, as in SQLite).
// ------------------------------------------------------------------------------------------------

constexpr const char* kMigrations[] = {
    // 1: the initial schema.
    R"sql(
CREATE TABLE sellers (
  id          TEXT COLLATE "C" PRIMARY KEY,
  name        TEXT NOT NULL,
  active      BOOLEAN NOT NULL,
  created_at  BIGINT NOT NULL
);

CREATE TABLE campaigns (
  id                    TEXT COLLATE "C" PRIMARY KEY,
  seller_id             TEXT COLLATE "C" NOT NULL REFERENCES sellers (id),
  name                  TEXT NOT NULL,
  vertical              TEXT NOT NULL,
  active                BOOLEAN NOT NULL,
  async_mode            BOOLEAN NOT NULL,
  sync_timeout_ms       INTEGER NOT NULL,
  rate_limit_per_minute INTEGER NOT NULL,
  payout_fixed          BOOLEAN NOT NULL,
  payout_value          BIGINT NOT NULL,
  key_hash              TEXT NOT NULL UNIQUE,
  key_hint              TEXT NOT NULL,
  created_at            BIGINT NOT NULL
);
CREATE INDEX campaigns_by_seller ON campaigns (seller_id, id);

-- seller_id NULL: a key of the operator's own account.
CREATE TABLE api_keys (
  id          TEXT COLLATE "C" PRIMARY KEY,
  seller_id   TEXT COLLATE "C" REFERENCES sellers (id),
  name        TEXT NOT NULL,
  plan        TEXT NOT NULL,
  scopes      BIGINT NOT NULL,
  key_hash    TEXT NOT NULL UNIQUE,
  key_hint    TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  revoked_at  BIGINT NOT NULL DEFAULT 0
);

-- doc holds the whole configuration (buyer_to_json); active and verticals (a JSON array) are
-- copied out of it so that listing can filter without decoding every document.
CREATE TABLE buyers (
  id          TEXT COLLATE "C" PRIMARY KEY,
  active      BOOLEAN NOT NULL,
  verticals   TEXT NOT NULL,
  doc         TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);

-- Bumped in the same transaction as every buyer change; workers reload when it moves.
CREATE TABLE buyers_version (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  version  BIGINT NOT NULL
);
INSERT INTO buyers_version (id, version) VALUES (1, 0);

-- Leads reference no account by foreign key: a lead arrives from the queue after it was
-- acknowledged to the seller, and storing it must never fail on a reference.
CREATE TABLE leads (
  id                    TEXT COLLATE "C" PRIMARY KEY,
  seller_id             TEXT COLLATE "C" NOT NULL,
  campaign_id           TEXT COLLATE "C" NOT NULL,
  api_key_id            TEXT COLLATE "C" NOT NULL,
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
  tcpa_consent          BOOLEAN,
  tcpa_consent_text     TEXT NOT NULL,
  custom_fields         TEXT NOT NULL,
  received_at           BIGINT NOT NULL,
  sync_wait_ms          INTEGER NOT NULL,
  status                TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
                          ('pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed',
                           'returned')),
  buyer_id              TEXT COLLATE "C" NOT NULL DEFAULT '',
  price_cents           BIGINT NOT NULL DEFAULT 0,
  payout_cents          BIGINT NOT NULL DEFAULT 0,
  buyer_lead_id         TEXT NOT NULL DEFAULT '',
  reason                TEXT NOT NULL DEFAULT '',
  decided_at            BIGINT NOT NULL DEFAULT 0,
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
-- this person" check is one index probe without a join.
CREATE TABLE sales (
  lead_id       TEXT COLLATE "C" NOT NULL REFERENCES leads (id),
  slot          INTEGER NOT NULL DEFAULT 0,
  buyer_id      TEXT COLLATE "C" NOT NULL,
  price_cents   BIGINT NOT NULL,
  payout_cents  BIGINT NOT NULL,
  sold_at       BIGINT NOT NULL,
  email         TEXT NOT NULL,
  phone         TEXT NOT NULL,
  PRIMARY KEY (lead_id, slot),
  UNIQUE (lead_id, buyer_id)
);
CREATE INDEX sales_by_buyer       ON sales (buyer_id, sold_at);
CREATE INDEX sales_by_buyer_email ON sales (buyer_id, email, sold_at);
CREATE INDEX sales_by_buyer_phone ON sales (buyer_id, phone, sold_at);

CREATE TABLE post_intents (
  lead_id      TEXT COLLATE "C" PRIMARY KEY REFERENCES leads (id),
  buyer_id     TEXT COLLATE "C" NOT NULL,
  price_cents  BIGINT NOT NULL,
  ping_id      TEXT NOT NULL,
  at           BIGINT NOT NULL
);

-- Surface B posts that failed validation, counted per campaign per hour (the lead itself is never
-- stored).
CREATE TABLE invalid_counts (
  campaign_id  TEXT COLLATE "C" NOT NULL,
  hour_start   BIGINT NOT NULL,
  count        BIGINT NOT NULL,
  PRIMARY KEY (campaign_id, hour_start)
);
)sql",
    // 2: Idempotency-Key claims and answers (POST /v1/leads), kept 24 hours.
    R"sql(
CREATE TABLE idempotency_keys (
  scope         TEXT COLLATE "C" NOT NULL,
  key           TEXT COLLATE "C" NOT NULL,
  request_hash  TEXT NOT NULL,
  lead_id       TEXT COLLATE "C" NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
)sql",
    // 3: cap reservations count a buyer's open post intents; shared rate-limit buckets.
    R"sql(
CREATE INDEX post_intents_by_buyer ON post_intents (buyer_id, at);

CREATE TABLE rate_buckets (
  key          TEXT COLLATE "C" PRIMARY KEY,
  tokens       DOUBLE PRECISION NOT NULL,
  refilled_at  BIGINT NOT NULL,
  day          BIGINT NOT NULL,
  day_count    BIGINT NOT NULL
);
)sql",
};

constexpr std::int64_t kHourMs = 3'600'000;
// Serialises migrate() across processes ("leadflow" in ASCII); transaction-scoped, so a process
// that dies mid-migration releases it with its connection.
constexpr std::int64_t kMigrationLockKey = 0x6c656164666c6f77;
// A caller waits this long for a free connection before the call answers kUnavailable.
constexpr auto kAcquireTimeout = std::chrono::seconds(30);
// libpq settings bounding every wait on a dead server or network: keepalives find a silent peer
// within about a minute of idleness, tcp_user_timeout fails a send the peer never acknowledges.
constexpr const char* kKeepalivesIdleS = "30";
constexpr const char* kKeepalivesIntervalS = "10";
constexpr const char* kKeepalivesCount = "3";
constexpr const char* kTcpUserTimeoutMs = "15000";


// ------------------------------------------------------------------------------------------------
// Secrets
// ------------------------------------------------------------------------------------------------

/// The spellings of the password in `conninfo`: as written in a URL (percent-encoded) and as
/// libpq decodes it. Messages are scrubbed of both before they are logged or returned.
std::vector<std::string> password_forms(const std::string& conninfo) {
  std::vector<std::string> forms;
  const auto scheme_end = conninfo.find("://");
  if (scheme_end != std::string::npos) {
    const std::string_view rest = std::string_view(conninfo).substr(scheme_end + 3);
    const std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
    const auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
      const std::string_view userinfo = authority.substr(0, at);
      const auto colon = userinfo.find(':');
      if (colon != std::string_view::npos && colon + 1 < userinfo.size())
        forms.emplace_back(userinfo.substr(colon + 1));
    }
  }
  char* parse_error = nullptr;
  if (PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &parse_error)) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o)
      if (std::string_view(o->keyword) == "password" && o->val != nullptr && *o->val != '\0')
        forms.emplace_back(o->val);
    PQconninfoFree(options);
  }
  if (parse_error != nullptr) PQfreemem(parse_error);
  return forms;
}

std::string redact(std::string message, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (auto pos = message.find(secret); pos != std::string::npos;
         pos = message.find(secret, pos + 3))
      message.replace(pos, secret.size(), "***");
  }
  // libpq ends its messages with a newline and indents continuation lines; a log field is one line.
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\t', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

// ------------------------------------------------------------------------------------------------
// Parameters and results
// ------------------------------------------------------------------------------------------------

/// PostgreSQL text cannot hold NUL; libpq would cut a C string there (and an array literal would
/// break). Dropping the byte keeps the rest of the value.
std::string without_nul(std::string_view v) {
  std::string s(v);
  std::erase(s, '\0');
  return s;
}

std::string format_double(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

/// The text-format parameters of one statement, in order ($1, $2, ...). Values are copied.
class Params {
 public:
  Params& add(std::string_view v) {
    values_.push_back(without_nul(v));
    nulls_.push_back(false);
    return *this;
  }
  Params& add(const std::string& v) { return add(std::string_view(v)); }
  Params& add(const char* v) { return add(std::string_view(v)); }
  Params& add(std::int64_t v) { return add(std::to_string(v)); }
  Params& add(int v) { return add(static_cast<std::int64_t>(v)); }
  Params& add(bool v) { return add(v ? "t" : "f"); }
  Params& add(double v) { return add(format_double(v)); }
  Params& add_null() {
    values_.emplace_back();
    nulls_.push_back(true);
    return *this;
  }
  /// "" as SQL NULL (optional references).
  Params& add_or_null(std::string_view v) { return v.empty() ? add_null() : add(v); }

  int size() const { return static_cast<int>(values_.size()); }
  /// The value pointers libpq takes; valid while this object is unchanged.
  std::vector<const char*> pointers() const {
    std::vector<const char*> p(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i)
      p[i] = nulls_[i] ? nullptr : values_[i].c_str();
    return p;
  }

 private:
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
};

/// Builds the text form of a one-dimensional array parameter ({"a","b",NULL} / {1,2}), for
/// statements that take a whole batch as arrays and unnest them.
class ArrayText {
 public:
  ArrayText& add(std::string_view v) {
    sep();
    text_ += '"';
    for (char ch : v) {
      if (ch == '\0') continue;
      if (ch == '"' || ch == '\\') text_ += '\\';
      text_ += ch;
    }
    text_ += '"';
    return *this;
  }
  ArrayText& add(std::int64_t v) {
    sep();
    text_ += std::to_string(v);
    return *this;
  }
  ArrayText& add(int v) { return add(static_cast<std::int64_t>(v)); }
  ArrayText& add(bool v) {
    sep();
    text_ += v ? 't' : 'f';
    return *this;
  }
  ArrayText& add_null() {
    sep();
    text_ += "NULL";
    return *this;
  }
  std::string str() const { return text_ + '}'; }

 private:
  void sep() {
    if (text_.size() > 1) text_ += ',';
  }
  std::string text_ = "{";
};

/// A failed libpq call, thrown inside this file and translated at the port (see PgStore::run).
struct PgError : std::exception {
  std::string sqlstate;
  std::string message;
  bool connection_lost = false;

  const char* what() const noexcept override { return message.c_str(); }
  /// SQLSTATE class 23: unique, foreign key, check and not-null violations.
  bool integrity_violation() const { return sqlstate.starts_with("23"); }
};

/// One result, owned.
class Result {
 public:
  explicit Result(PGresult* r) : r_(r) {}
  Result(Result&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Result& operator=(Result&&) = delete;
  ~Result() {
    if (r_ != nullptr) PQclear(r_);
  }

  int rows() const { return PQntuples(r_); }
  std::string text(int row, int col) const {
    return std::string(PQgetvalue(r_, row, col),
                       static_cast<std::size_t>(PQgetlength(r_, row, col)));
  }
  bool is_null(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
  std::int64_t int64(int row, int col) const {
    const char* v = PQgetvalue(r_, row, col);
    std::int64_t out = 0;
    std::from_chars(v, v + PQgetlength(r_, row, col), out);
    return out;
  }
  double real(int row, int col) const {
    const char* v = PQgetvalue(r_, row, col);
    double out = 0;
    std::from_chars(v, v + PQgetlength(r_, row, col), out);
    return out;
  }
  bool boolean(int row, int col) const { return PQgetvalue(r_, row, col)[0] == 't'; }

 private:
  PGresult* r_;
};

/// One row of a Result, so the row codecs below read like the SQLite adapter's.
struct Row {
  const Result& r;
  int row;
  std::string text(int col) const { return r.text(row, col); }
  std::int64_t int64(int col) const { return r.int64(row, col); }
  int int32(int col) const { return static_cast<int>(r.int64(row, col)); }
  bool boolean(int col) const { return r.boolean(row, col); }
  bool is_null(int col) const { return r.is_null(row, col); }
};

// ------------------------------------------------------------------------------------------------
// Connections
// ------------------------------------------------------------------------------------------------

/// Whether a statement changes data. A call whose connection breaks may be retried on another
/// only if nothing it sent could have been committed: reads and anything inside a transaction
/// not yet committed (the server rolls back a transaction whose connection is gone).
enum class Effect { kRead, kWrite };

/// How to connect: libpq keywords and values, the caller's conninfo last (expanded), so that
/// settings named in the URL override the defaults before it.
struct ConnectSettings {
  std::vector<std::string> keywords;
  std::vector<std::string> values;
  // Password spellings to scrub from messages; shared with every connection made.
  std::shared_ptr<const std::vector<std::string>> secrets;
};

/// One libpq connection. Not thread-safe: one thread uses it at a time, leased from the pool.
class Connection {
 public:
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { PQfinish(conn_); }

  /// A connected connection, or nullptr with `error` set (password scrubbed).
  static std::unique_ptr<Connection> open(const ConnectSettings& settings, std::string& error) {
    std::vector<const char*> keywords, values;
    for (const auto& k : settings.keywords) keywords.push_back(k.c_str());
    for (const auto& v : settings.values) values.push_back(v.c_str());
    keywords.push_back(nullptr);
    values.push_back(nullptr);
    PGconn* conn = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
    if (conn == nullptr) {
      error = "out of memory";
      return nullptr;
    }
    std::unique_ptr<Connection> c(new Connection(conn, settings.secrets));
    if (PQstatus(conn) != CONNECTION_OK) {
      error = redact(PQerrorMessage(conn), *settings.secrets);
      return nullptr;
    }
    // NOTICEs ("relation already exists, skipping") would go to stderr, outside the log format.
    PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
    return c;
  }

  /// Runs one parameterised statement; throws PgError on failure.
  Result exec(const char* sql, const Params& params, Effect effect) {
    note_send(effect);
    const auto values = params.pointers();
    return check(PQexecParams(conn_, sql, params.size(), nullptr, values.data(), nullptr,
                              nullptr, /*resultFormat=*/0));
  }
  Result exec(const char* sql, Effect effect) { return exec(sql, Params{}, effect); }
  /// Runs statements without parameters, several allowed (migrations, BEGIN, COMMIT).
  Result exec_script(const char* sql, Effect effect) {
    note_send(effect);
    return check(PQexec(conn_, sql));
  }

  /// Usable for another call: connected and not found broken by an earlier one.
  bool usable() const { return !broken_ && PQstatus(conn_) == CONNECTION_OK; }
  /// usable(), after reading whatever the server sent while the connection was idle, without
  /// blocking (libpq sockets are non-blocking): a backend ended by a server restart or
  /// pg_terminate_backend leaves its FATAL message and end-of-stream there, so its connection
  /// is replaced before a call fails on it.
  bool alive() {
    if (!usable()) return false;
    if (PQconsumeInput(conn_) == 0) broken_ = true;
    return usable();
  }
  bool in_transaction() const { return PQtransactionStatus(conn_) != PQTRANS_IDLE; }

  /// The pool's generation when this connection was opened (see ConnectionPool).
  std::uint64_t generation() const { return generation_; }
  void set_generation(std::uint64_t g) { generation_ = g; }

  /// Starts a call: nothing sent yet that could have committed.
  void start_call() { committed_something_ = false; }
  /// Something sent by this call may have been committed; it must not be retried.
  bool maybe_committed() const { return committed_something_; }
  /// For steps with effects outside the database (a caller's callback that must run once).
  void mark_not_retryable() { committed_something_ = true; }

  /// Rolls back an open transaction, quietly; false if the connection must be dropped.
  bool reset_transaction() noexcept {
    if (!usable()) return false;
    if (!in_transaction()) return true;
    if (PGresult* r = PQexec(conn_, "ROLLBACK")) PQclear(r);
    return usable() && !in_transaction();
  }

 private:
  Connection(PGconn* conn, std::shared_ptr<const std::vector<std::string>> secrets)
      : conn_(conn), secrets_(std::move(secrets)) {}

  void note_send(Effect effect) {
    if (effect == Effect::kWrite && !in_transaction()) committed_something_ = true;
  }

  Result check(PGresult* r) {
    Result result(r);
    const ExecStatusType status = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
    PgError e;
    if (r != nullptr) {
      if (const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE)) e.sqlstate = s;
      if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) e.message = m;
    }
    if (e.message.empty()) e.message = PQerrorMessage(conn_);
    e.message = redact(std::move(e.message), *secrets_);
    // 08: connection exceptions; 57P01-57P03: the server is shutting down or restarting.
    e.connection_lost = PQstatus(conn_) != CONNECTION_OK || e.sqlstate.starts_with("08") ||
                        e.sqlstate == "57P01" || e.sqlstate == "57P02" ||
                        e.sqlstate == "57P03";
    if (e.connection_lost) broken_ = true;
    throw e;
  }

  PGconn* conn_;
  std::shared_ptr<const std::vector<std::string>> secrets_;
  std::uint64_t generation_ = 0;
  bool broken_ = false;
  bool committed_something_ = false;
};

/// A transaction on one connection: BEGIN now, ROLLBACK on scope exit unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& conn) : conn_(conn) {
    conn_.exec_script("BEGIN", Effect::kRead);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!committed_) conn_.reset_transaction();
  }
  void commit() {
    // From here the outcome is unknown if the connection breaks: never retried.
    conn_.mark_not_retryable();
    committed_ = true;
    conn_.exec_script("COMMIT", Effect::kWrite);
  }

 private:
  Connection& conn_;
  bool committed_ = false;
};

/// A bounded pool of connections, opened lazily and lent to one thread at a time. A broken
/// connection is dropped when it comes back, and a new one is opened on a later demand. One lost
/// connection usually means the server restarted and every other one is gone too (their sockets
/// may not show it yet), so it also retires every connection opened before it: the pool moves to
/// a new generation. Thread-safe.
class ConnectionPool {
 public:
  class Lease {
   public:
    Lease() = default;
    Lease(ConnectionPool* pool, std::unique_ptr<Connection> conn)
        : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& o) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (conn_) pool_->give_back(std::move(conn_));
    }
    explicit operator bool() const { return conn_ != nullptr; }
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }

   private:
    ConnectionPool* pool_ = nullptr;
    std::unique_ptr<Connection> conn_;
  };

  ConnectionPool(ConnectSettings settings, std::size_t size)
      : settings_(std::move(settings)), size_(std::max<std::size_t>(size, 1)) {}

  /// Adds a connection opened elsewhere (the one open_pg_store checked the server with).
  void adopt(std::unique_ptr<Connection> conn) {
    std::lock_guard lock(mu_);
    ++opened_;
    free_.push_back(std::move(conn));
  }

  /// A usable connection, waiting while all are lent; an empty lease when none can be had (the
  /// server is unreachable, or every connection stayed busy for kAcquireTimeout).
  Lease acquire() {
    std::unique_ptr<Connection> stale;
    std::uint64_t generation = 0;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait_for(lock, kAcquireTimeout,
                        [&] { return !free_.empty() || opened_ < size_; })) {
        log(LogLevel::kError, "store_unavailable",
            {{"op", "acquire"}, {"detail", "every connection stayed busy"}});
        return {};
      }
      if (!free_.empty()) {
        auto conn = std::move(free_.back());
        free_.pop_back();
        if (conn->generation() == generation_ && conn->alive()) return Lease(this, std::move(conn));
        stale = std::move(conn);  // its slot is reused for a new connection below
      } else {
        ++opened_;
      }
      generation = generation_;
    }
    stale.reset();  // PQfinish outside the lock
    std::string error;
    auto conn = Connection::open(settings_, error);
    if (!conn) {
      {
        std::lock_guard lock(mu_);
        --opened_;
      }
      cv_.notify_one();
      // Logged once per outage, not once per call while the server is down.
      if (!down_.exchange(true))
        log(LogLevel::kError, "store_unavailable", {{"op", "connect"}, {"detail", error}});
      return {};
    }
    if (down_.exchange(false)) log(LogLevel::kInfo, "store_reconnected", {});
    conn->set_generation(generation);
    return Lease(this, std::move(conn));
  }

 private:
  void give_back(std::unique_ptr<Connection> conn) {
    const bool healthy = conn->reset_transaction();
    std::vector<std::unique_ptr<Connection>> retired;  // closed outside the lock
    {
      std::lock_guard lock(mu_);
      if (!healthy && conn->generation() == generation_) {
        ++generation_;
        retired = std::move(free_);
        free_.clear();
        opened_ -= retired.size();
      }
      if (healthy && conn->generation() == generation_) {
        free_.push_back(std::move(conn));
      } else {
        retired.push_back(std::move(conn));
        --opened_;
      }
    }
    cv_.notify_all();
  }

  const ConnectSettings settings_;
  const std::size_t size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> free_;
  std::size_t opened_ = 0;
  std::uint64_t generation_ = 0;
  std::atomic<bool> down_{false};
};

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

/// The PostgreSQL Store. Thread-safe: every call leases a connection from the pool; several
/// processes may share one database (atomicity comes from transactions, row locks and advisory
/// locks, never from in-process mutexes).
class PgStore final : public Store {
 public:
  explicit PgStore(ConnectSettings settings, std::size_t pool_size)
      : pool_(std::move(settings), pool_size) {}

  ConnectionPool& pool() { return pool_; }

  // --- schema -----------------------------------------------------------------------------------

  StoreStatus migrate() override {
    return run("migrate", StoreStatus::kUnavailable, [&](Connection& c) {
      Transaction tx(c);
      // Processes starting together take turns; the later ones find nothing left to do.
      c.exec("SELECT pg_advisory_xact_lock($1::BIGINT)", Params().add(kMigrationLockKey),
             Effect::kRead);
      c.exec_script("CREATE TABLE IF NOT EXISTS schema_migrations ("
                    "version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)",
                    Effect::kRead);
      const std::int64_t current =
          c.exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", Effect::kRead)
              .int64(0, 0);
      const auto latest = static_cast<std::int64_t>(std::size(kMigrations));
      if (current > latest) {
        // A newer binary migrated this database; running old code on it could corrupt data.
        log(LogLevel::kError, "store_schema_too_new",
            {{"schema_version", current}, {"known_version", latest}});
        return StoreStatus::kUnavailable;
      }
      for (std::int64_t v = current + 1; v <= latest; ++v) {
        c.exec_script(kMigrations[v - 1], Effect::kRead);  // inside the transaction
        c.exec("INSERT INTO schema_migrations (version, applied_at)"
               " VALUES ($1, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)",
               Params().add(v), Effect::kWrite);
      }
      tx.commit();
      if (latest > current)
        log(LogLevel::kInfo, "store_migrated", {{"from_version", current}, {"to_version", latest}});
      return StoreStatus::kOk;
    });
  }

  bool healthy() override {
    return run("healthy", false, [&](Connection& c) {
      return c.exec("SELECT 1", Effect::kRead).rows() == 1;
    });
  }

  // --- accounts ---------------------------------------------------------------------------------

  StoreStatus insert_seller(const Seller& s) override {
    return write("insert_seller",
                 "INSERT INTO sellers (id, name, active, created_at) VALUES ($1, $2, $3, $4)",
                 Params().add(s.id).add(s.name).add(s.active).add(s.created_at_ms));
  }

  std::optional<Seller> get_seller(std::string_view id) override {
    return read_one<Seller>("get_seller",
                            "SELECT id, name, active, created_at FROM sellers WHERE id = $1",
                            Params().add(id), read_seller<Row>);
  }

  std::vector<Seller> list_sellers() override {
    return read_all<Seller>("list_sellers",
                            "SELECT id, name, active, created_at FROM sellers ORDER BY id",
                            Params(), read_seller<Row>);
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
                              "SELECT " LF_CAMPAIGN_COLUMNS " FROM campaigns WHERE id = $1",
                              Params().add(id), read_campaign<Row>);
  }

  std::optional<Campaign> find_campaign_by_key_hash(std::string_view key_hash) override {
    return read_one<Campaign>("find_campaign_by_key_hash",
                              "SELECT " LF_CAMPAIGN_COLUMNS " FROM campaigns WHERE key_hash = $1",
                              Params().add(key_hash), read_campaign<Row>);
  }

  std::vector<Campaign> list_campaigns(std::string_view seller_id) override {
    return read_all<Campaign>("list_campaigns",
                              "SELECT " LF_CAMPAIGN_COLUMNS " FROM campaigns"
                              " WHERE $1 = '' OR seller_id = $1 ORDER BY id",
                              Params().add(seller_id), read_campaign<Row>);
  }

  StoreStatus insert_api_key(const ApiKey& k) override {
    return write("insert_api_key",
                 "INSERT INTO api_keys (" LF_API_KEY_COLUMNS
                 ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                 Params()
                     .add(k.id)
                     .add_or_null(k.seller_id)
                     .add(k.name)
                     .add(to_string(k.plan))
                     .add(static_cast<std::int64_t>(k.scopes))
                     .add(k.key_hash)
                     .add(k.key_hint)
                     .add(k.created_at_ms)
                     .add(k.revoked_at_ms));
  }

  std::optional<ApiKey> find_api_key_by_hash(std::string_view key_hash) override {
    return read_one<ApiKey>("find_api_key_by_hash",
                            "SELECT " LF_API_KEY_COLUMNS " FROM api_keys WHERE key_hash = $1",
                            Params().add(key_hash), read_api_key<Row>);
  }

  std::vector<ApiKey> list_api_keys() override {
    return read_all<ApiKey>("list_api_keys",
                            "SELECT " LF_API_KEY_COLUMNS " FROM api_keys ORDER BY id", Params(),
                            read_api_key<Row>);
  }

  /// Revoking a revoked key is kOk and keeps the first revocation time.
  StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms) override {
    return run("revoke_api_key", StoreStatus::kUnavailable, [&](Connection& c) {
      // 0 means "live": a revocation is never recorded as 0.
      const Result r = c.exec(
          "WITH revoked AS (UPDATE api_keys SET revoked_at = $2"
          "                 WHERE id = $1 AND revoked_at = 0 RETURNING 1)"
          " SELECT EXISTS (SELECT 1 FROM revoked) OR EXISTS (SELECT 1 FROM api_keys WHERE id = $1)",
          Params().add(id).add(std::max<std::int64_t>(at_ms, 1)), Effect::kWrite);
      return r.boolean(0, 0) ? StoreStatus::kOk : StoreStatus::kNotFound;
    });
  }

  // --- buyers -----------------------------------------------------------------------------------

  /// The buyer and the version bump in one statement (so in one transaction).
  StoreStatus insert_buyer(const Buyer& b) override {
    return run("insert_buyer", StoreStatus::kUnavailable, [&](Connection& c) {
      c.exec("WITH inserted AS (INSERT INTO buyers (" LF_BUYER_COLUMNS ", verticals)"
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
  StoreStatus update_buyer(const Buyer& b) override {
    return run("update_buyer", StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(
          "WITH updated AS (UPDATE buyers SET active = $2, doc = $3, updated_at = $4,"
          "                 verticals = $5 WHERE id = $1 RETURNING 1),"
          " bumped AS (UPDATE buyers_version SET version = version + 1"
          "            WHERE id = 1 AND EXISTS (SELECT 1 FROM updated))"
          " SELECT COUNT(*) FROM updated",
          Params()
              .add(b.id)
              .add(b.active)
              .add(dump(buyer_to_json(b, /*mask_secrets=*/false)))
              .add(b.updated_at_ms)
              .add(dump(json(b.verticals))),
          Effect::kWrite);
      return r.int64(0, 0) > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
    });
  }

  std::optional<Buyer> get_buyer(std::string_view id) override {
    return run("get_buyer", std::optional<Buyer>{}, [&](Connection& c) -> std::optional<Buyer> {
      const Result r = c.exec("SELECT " LF_BUYER_COLUMNS " FROM buyers WHERE id = $1",
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
      const Result r = c.exec("SELECT " LF_BUYER_COLUMNS " FROM buyers"
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
              std::string_view(l.last_name), std::string_view(l.email),
              std::string_view(l.phone), std::string_view(l.zip_code), std::string_view(l.zip4),
              std::string_view(l.state), std::string_view(l.vertical),
              std::string_view(l.source), std::string_view(l.landing_page),
              std::string_view(l.ip_address), std::string_view(l.user_agent),
              std::string_view(l.trustedform_cert_url), std::string_view(l.jornaya_leadid)})
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

      const Result inserted = c.exec(
          "INSERT INTO leads (" LF_LEAD_COLUMNS ") SELECT " LF_LEAD_COLUMNS
          " FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::TEXT[],"
          " $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[], $11::TEXT[], $12::TEXT[],"
          " $13::TEXT[], $14::TEXT[], $15::TEXT[], $16::TEXT[], $17::TEXT[], $18::TEXT[],"
          " $19::TEXT[], $20::BOOLEAN[], $21::TEXT[], $22::TEXT[], $23::BIGINT[],"
          " $24::INTEGER[]) WITH ORDINALITY AS batch (" LF_LEAD_COLUMNS ", ord)"
          " ORDER BY id, ord ON CONFLICT (id) DO NOTHING RETURNING id",
          params, Effect::kWrite);

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
    return read_one<LeadRecord>(
        "get_lead",
        "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
        ", attempts, ineligible FROM leads WHERE id = $1",
        Params().add(id), [](const Row& q) { return read_lead(q, true); });
  }

  std::vector<LeadRecord> list_leads(const LeadQuery& lq) override {
    return run("list_leads", std::vector<LeadRecord>{}, [&](Connection& c) {
      // Only the filters in use appear, each as a placeholder: the values stay parameters.
      std::string sql = "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                        " FROM leads WHERE TRUE";
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
      if (!lq.buyer_id.empty()) filter("buyer_id =", lq.buyer_id);
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
          Params().add(vertical).add(email).add(phone).add(since_ms).add(lead_id),
          Effect::kRead);
      return r.text(0, 0);
    });
  }

  /// Without caps: one statement; the lead row is share-locked so a concurrent outcome either
  /// waits for the intent or makes it kConflict. With caps: one transaction serialised per buyer
  /// by an advisory lock, so two processes reserving a buyer's last slot cannot both see it
  /// free; the counts are read after the lock, in a snapshot that includes every reservation
  /// committed before it.
  StoreStatus record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) override {
    static constexpr const char* kUpsert =
        "WITH written AS ("
        " INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at)"
        " SELECT id, $2, $3, $4, $5 FROM leads WHERE id = $1 AND status = 'pending' FOR SHARE"
        " ON CONFLICT (lead_id) DO UPDATE SET buyer_id = excluded.buyer_id,"
        " price_cents = excluded.price_cents, ping_id = excluded.ping_id, at = excluded.at"
        " RETURNING 1)"
        " SELECT (SELECT COUNT(*) FROM written),"
        " EXISTS (SELECT 1 FROM leads WHERE id = $1)";
    const auto upsert_params = [&] {
      return Params().add(p.lead_id).add(p.buyer_id).add(p.price).add(p.ping_id).add(p.at_ms);
    };
    const auto answer = [](const Result& r) {
      if (r.int64(0, 0) > 0) return StoreStatus::kOk;
      return r.boolean(0, 1) ? StoreStatus::kConflict : StoreStatus::kNotFound;
    };
    if (caps.empty()) {
      return run("record_post_intent", StoreStatus::kUnavailable, [&](Connection& c) {
        return answer(c.exec(kUpsert, upsert_params(), Effect::kWrite));
      });
    }
    ArrayText since, limit;
    for (const CapWindow& cap : caps) {
      since.add(cap.since_ms);
      limit.add(cap.limit);
    }
    return run("record_post_intent", StoreStatus::kUnavailable, [&](Connection& c) {
      Transaction tx(c);
      c.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", Params().add(p.buyer_id),
             Effect::kRead);
      // A decided (or unknown) lead answers as it would without caps, not kLimitReached.
      // Intents of decided leads are not counted: a sale counts through its sales row, and an
      // unsold lead's intent reserved nothing that was used.
      const Result check = c.exec(
          "SELECT status = 'pending',"
          " EXISTS (SELECT 1 FROM unnest($3::BIGINT[], $4::BIGINT[]) AS w (since_ms, cap)"
          "  WHERE (SELECT COUNT(*) FROM sales WHERE buyer_id = $1 AND sold_at >= w.since_ms)"
          "   + (SELECT COUNT(*) FROM post_intents JOIN leads AS l ON l.id = post_intents.lead_id"
          "      WHERE post_intents.buyer_id = $1 AND post_intents.at >= w.since_ms"
          "      AND post_intents.lead_id <> $2 AND l.status = 'pending') >= w.cap)"
          " FROM leads WHERE id = $2 FOR SHARE OF leads",
          Params().add(p.buyer_id).add(p.lead_id).add(since.str()).add(limit.str()),
          Effect::kRead);
      if (check.rows() == 0) return StoreStatus::kNotFound;
      if (!check.boolean(0, 0)) return StoreStatus::kConflict;
      if (check.boolean(0, 1)) return StoreStatus::kLimitReached;
      const StoreStatus st = answer(c.exec(kUpsert, upsert_params(), Effect::kWrite));
      if (st != StoreStatus::kOk) return st;
      tx.commit();
      return StoreStatus::kOk;
    });
  }

  std::optional<PostIntent> get_post_intent(std::string_view lead_id) override {
    return read_one<PostIntent>(
        "get_post_intent",
        "SELECT lead_id, buyer_id, price_cents, ping_id, at FROM post_intents WHERE lead_id = $1",
        Params().add(lead_id), [](const Row& q) {
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
  ///
  /// One transaction, four round trips for any batch size: the batch's lead rows are locked in
  /// id order (so batches overlapping in any order wait instead of deadlocking), the winners are
  /// decided here from the locked statuses, and one statement writes every winner's lead row
  /// and sale.
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) override {
    const std::vector<StoreStatus> all_failed(outcomes.size(), StoreStatus::kUnavailable);
    if (outcomes.empty()) return {};
    return run("record_outcomes", all_failed, [&](Connection& c) {
      std::vector<StoreStatus> results(outcomes.size(), StoreStatus::kUnavailable);
      Transaction tx(c);
      ArrayText ids;
      for (const auto& o : outcomes) ids.add(o.lead_id);
      const Result locked = c.exec(
          "SELECT id, status, EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = leads.id)"
          " FROM leads WHERE id = ANY ($1::TEXT[]) ORDER BY id FOR UPDATE",
          Params().add(ids.str()), Effect::kRead);
      struct Current {
        bool pending;
        bool has_sale;
      };
      std::unordered_map<std::string, Current> current;
      for (int i = 0; i < locked.rows(); ++i)
        current[locked.text(i, 0)] = {locked.text(i, 1) == "pending", locked.boolean(i, 2)};

      ArrayText id, status, buyer, price, payout, buyer_lead_id, reason, decided_at, attempts,
          ineligible;
      bool any = false;
      for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const OutcomeRecord& o = outcomes[i];
        const Distribution& d = o.distribution;
        const auto it = current.find(o.lead_id);
        if (it == current.end()) {
          results[i] = StoreStatus::kNotFound;
          continue;
        }
        const bool sale = d.status == DeliveryStatus::kDelivered;
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
      }
      if (any) {
        c.exec("WITH batch AS (SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[],"
               "   $4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::TEXT[],"
               "   $10::TEXT[]) AS b (id, status, buyer_id, price, payout, buyer_lead_id, reason,"
               "   decided_at, attempts, ineligible)),"
               " decided AS (UPDATE leads SET status = batch.status, buyer_id = batch.buyer_id,"
               "   price_cents = batch.price, payout_cents = batch.payout,"
               "   buyer_lead_id = batch.buyer_lead_id, reason = batch.reason,"
               "   decided_at = batch.decided_at, attempts = batch.attempts,"
               "   ineligible = batch.ineligible"
               "   FROM batch WHERE leads.id = batch.id"
               "   RETURNING leads.id, leads.status, leads.buyer_id, leads.price_cents,"
               "   leads.payout_cents, leads.decided_at, leads.email, leads.phone)"
               " INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
               "   email, phone)"
               " SELECT id, 0, buyer_id, price_cents, payout_cents, decided_at, email, phone"
               " FROM decided WHERE status = 'delivered'",
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
                   .add(ineligible.str()),
               Effect::kWrite);
      }
      tx.commit();
      return results;
    });
  }

  std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                          std::int64_t since_ms) override {
    return run("count_sales", std::optional<std::int64_t>{},
               [&](Connection& c) -> std::optional<std::int64_t> {
                 return c.exec("SELECT COUNT(*) FROM sales WHERE buyer_id = $1 AND sold_at >= $2",
                               Params().add(buyer_id).add(since_ms), Effect::kRead)
                     .int64(0, 0);
               });
  }

  std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view email,
                                          std::string_view phone, std::int64_t since_ms) override {
    return run("buyer_bought_person", std::optional<bool>{},
               [&](Connection& c) -> std::optional<bool> {
                 return c.exec("SELECT ($2 <> '' AND EXISTS (SELECT 1 FROM sales"
                               "  WHERE buyer_id = $1 AND email = $2 AND sold_at >= $4))"
                               " OR ($3 <> '' AND EXISTS (SELECT 1 FROM sales"
                               "  WHERE buyer_id = $1 AND phone = $3 AND sold_at >= $4))",
                               Params().add(buyer_id).add(email).add(phone).add(since_ms),
                               Effect::kRead)
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
      c.exec("UPDATE rate_buckets SET tokens = $2, refilled_at = $3, day = $4, day_count = $5"
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

  // --- stats ------------------------------------------------------------------------------------

  /// `invalid` counts whole hours: posts in the hour that contains `since_ms` all count.
  CampaignStats campaign_stats(std::string_view campaign_id, std::int64_t since_ms) override {
    return run("campaign_stats", CampaignStats{}, [&](Connection& c) {
      const Result r = c.exec(
          "SELECT COUNT(*),"
          " COUNT(*) FILTER (WHERE status = 'delivered'),"
          " COUNT(*) FILTER (WHERE status = 'unsold'),"
          " COUNT(*) FILTER (WHERE status = 'duplicate'),"
          " COUNT(*) FILTER (WHERE status = 'pending'),"
          " COUNT(*) FILTER (WHERE status IN ('failed', 'rejected')),"
          " COALESCE(SUM(payout_cents) FILTER (WHERE status = 'delivered'), 0),"
          " (SELECT COALESCE(SUM(count), 0) FROM invalid_counts"
          "  WHERE campaign_id = $1 AND hour_start >= $3)"
          " FROM leads WHERE campaign_id = $1 AND received_at >= $2",
          Params().add(campaign_id).add(since_ms).add(hour_start(since_ms)), Effect::kRead);
      CampaignStats s;
      s.received = r.int64(0, 0);
      s.sold = r.int64(0, 1);
      s.unsold = r.int64(0, 2);
      s.duplicates = r.int64(0, 3);
      s.queued = r.int64(0, 4);
      s.errors = r.int64(0, 5);
      s.payout = r.int64(0, 6);
      s.invalid = r.int64(0, 7);
      return s;
    });
  }

  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override {
    write("count_invalid",
          "INSERT INTO invalid_counts (campaign_id, hour_start, count) VALUES ($1, $2, 1)"
          " ON CONFLICT (campaign_id, hour_start)"
          " DO UPDATE SET count = invalid_counts.count + 1",
          Params().add(campaign_id).add(hour_start(at_ms)));
  }

 private:
  static std::int64_t clamp_limit(int limit) { return std::clamp<std::int64_t>(limit, 1, 1000); }

  static std::int64_t hour_start(std::int64_t ms) {
    const std::int64_t h = ms / kHourMs - (ms % kHourMs < 0 ? 1 : 0);  // floor, also below 0
    return h * kHourMs;
  }

  /// Runs `body` on a leased connection and translates every failure into `fallback` (or
  /// kConflict for an integrity violation of a call answering a StoreStatus), logged without
  /// SQL or values. A call whose connection turned out dead is retried once on a new one if
  /// nothing it sent can have been committed.
  template <class R, class Body>
  R run(const char* op, R fallback, Body&& body) noexcept {
    try {
      for (int attempt = 0;; ++attempt) {
        auto lease = pool_.acquire();
        if (!lease) return fallback;
        try {
          lease->start_call();
          return body(*lease);
        } catch (const PgError& e) {
          if (e.connection_lost && attempt == 0 && !lease->maybe_committed()) {
            log(LogLevel::kWarn, "store_retry", {{"op", op}, {"detail", e.message}});
            continue;  // the lease drops the dead connection on its way back
          }
          if (e.integrity_violation()) {
            if (log_enabled(LogLevel::kDebug))
              log(LogLevel::kDebug, "store_conflict", {{"op", op}, {"code", e.sqlstate}});
            if constexpr (std::is_same_v<R, StoreStatus>) return StoreStatus::kConflict;
            return fallback;
          }
          log(LogLevel::kError, "store_unavailable",
              {{"op", op}, {"code", e.sqlstate}, {"detail", e.message}});
          return fallback;
        }
      }
    } catch (const std::exception& e) {
      try {
        log(LogLevel::kError, "store_unavailable", {{"op", op}, {"detail", e.what()}});
      } catch (...) {
      }
    } catch (...) {
    }
    return fallback;
  }

  /// One writing statement in autocommit mode.
  StoreStatus write(const char* op, const char* sql, const Params& params) {
    return run(op, StoreStatus::kUnavailable, [&](Connection& c) {
      c.exec(sql, params, Effect::kWrite);
      return StoreStatus::kOk;
    });
  }

  template <class T, class Read>
  std::optional<T> read_one(const char* op, const char* sql, const Params& params, Read&& read) {
    return run(op, std::optional<T>{}, [&](Connection& c) -> std::optional<T> {
      const Result r = c.exec(sql, params, Effect::kRead);
      if (r.rows() == 0) return std::nullopt;
      return read(Row{r, 0});
    });
  }

  template <class T, class Read>
  std::vector<T> read_all(const char* op, const char* sql, const Params& params, Read&& read) {
    return run(op, std::vector<T>{}, [&](Connection& c) {
      const Result r = c.exec(sql, params, Effect::kRead);
      std::vector<T> out;
      out.reserve(static_cast<std::size_t>(r.rows()));
      for (int i = 0; i < r.rows(); ++i) out.push_back(read(Row{r, i}));
      return out;
    });
  }

  ConnectionPool pool_;
  std::atomic<std::int64_t> last_buyers_version_{0};
};

#undef LF_LEAD_COLUMNS
#undef LF_DISTRIBUTION_COLUMNS
#undef LF_CAMPAIGN_COLUMNS
#undef LF_API_KEY_COLUMNS
#undef LF_BUYER_COLUMNS

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
