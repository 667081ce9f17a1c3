#pragma once
// The libpq wrapper of the PostgreSQL adapter: text parameters and array literals, owned results,
// one connection, a transaction guard, the connection pool, and the calls on it. A libpq failure
// is thrown as PgError (password scrubbed, connection loss noted) and translated to a StoreStatus
// or an empty answer in one place, PgCalls::run.
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "leadflow/base/log.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow::pg {

// A caller waits this long for a free connection before the call answers kUnavailable.
inline constexpr auto kAcquireTimeout = std::chrono::seconds(30);

/// PostgreSQL text cannot hold NUL; libpq would cut a C string there (and an array literal would
/// break). Dropping the byte keeps the rest of the value.
std::string without_nul(std::string_view v);
/// The shortest text that reads back as exactly `v`.
std::string format_double(double v);

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

/// A failed libpq call, thrown inside the adapter and translated at the port (see PgStore::run).
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

  /// PGRES_FATAL_ERROR when there is no result at all.
  ExecStatusType status() const { return r_ != nullptr ? PQresultStatus(r_) : PGRES_FATAL_ERROR; }
  const PGresult* get() const { return r_; }
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

/// One row of a Result, so the row codecs read like the SQLite adapter's (see rows.hpp).
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

/// One statement of a pipeline (Connection::exec_pipeline). `prepared`: run as the
/// connection's prepared statement (Connection::exec_prepared).
struct Statement {
  const char* sql;
  Params params;
  bool prepared = false;
};

/// One libpq connection. Not thread-safe: one thread uses it at a time, leased from the pool.
class Connection {
 public:
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { PQfinish(conn_); }

  /// A connected connection, or nullptr with `error` set (password scrubbed).
  static std::unique_ptr<Connection> open(const ConnectSettings& settings, std::string& error);

  /// Runs one parameterised statement; throws PgError on failure.
  Result exec(const char* sql, const Params& params, Effect effect) {
    note_send(effect);
    const auto values = params.pointers();
    return check(PQexecParams(conn_, sql, params.size(), nullptr, values.data(), nullptr, nullptr,
                              /*resultFormat=*/0));
  }
  Result exec(const char* sql, Effect effect) { return exec(sql, Params{}, effect); }
  /// exec(), as a statement this connection prepared the first time it ran it: the server
  /// parses and plans it once per connection (it may keep one generic plan), not at every
  /// call. For the statements run for every lead whose planning costs more than running them
  /// (docs/benchmarks.md#statements-planned-once-per-connection); a statement whose best plan
  /// depends on its parameters' values is better left to exec().
  Result exec_prepared(const char* sql, const Params& params, Effect effect) {
    const std::string* name = prepare(sql, params.size());
    if (name == nullptr) return exec(sql, params, effect);
    note_send(effect);
    const auto values = params.pointers();
    return check_prepared(sql, PQexecPrepared(conn_, name->c_str(), params.size(), values.data(),
                                              nullptr, nullptr, /*resultFormat=*/0));
  }
  /// Sends every statement at once and reads their results after (libpq's pipeline mode): one
  /// round trip for all of them, run by the server in order. The results come back in order.
  /// If one fails, the server skips those after it, and this throws that statement's PgError.
  /// A pipeline holding its own BEGIN and COMMIT is one transaction whatever fails: after a
  /// failure the transaction is left aborted, for the pool's ROLLBACK.
  std::vector<Result> exec_pipeline(const std::vector<Statement>& statements, Effect effect);
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

  /// The socket, to wait on for notifications (-1 when there is none).
  int socket() const { return PQsocket(conn_); }
  /// Reads what the server sent and returns the payloads of the notifications among it, in
  /// order; throws PgError (connection lost) when the connection broke.
  std::vector<std::string> take_notifications();

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

  /// The name of `sql` prepared on this connection, preparing it now if it is not yet;
  /// nullptr once kMaxPrepared are held, or once the connection found its prepared statements
  /// gone (the statement then runs unprepared). Throws PgError when the server refuses it.
  const std::string* prepare(const char* sql, int params);
  /// check(), and a prepared statement the server can no longer run as planned ("cached plan
  /// must not change result type", after a table it reads changed) is forgotten, so that the
  /// next call prepares it again. One the server does not know (26000) means the session
  /// behind this connection changed under it: a pooler in transaction mode that keeps no
  /// prepared statements (PgBouncer without max_prepared_statements). The connection then
  /// prepares nothing more and runs every statement unnamed.
  Result check_prepared(const char* sql, PGresult* r);
  /// What a failure of the prepared `sql` tells (check_prepared).
  void prepared_failed(const char* sql, const PGresult* r);
  static constexpr std::size_t kMaxPrepared = 64;

  /// `r` as a Result if it succeeded; otherwise throws PgError (and marks the connection
  /// broken when the failure lost it).
  Result check(PGresult* r);
  /// The PgError of a failed result (or of the connection when `r` is null); marks the
  /// connection broken when the failure lost it.
  PgError error_of(const PGresult* r);

  PGconn* conn_;
  std::shared_ptr<const std::vector<std::string>> secrets_;
  std::uint64_t generation_ = 0;
  bool broken_ = false;
  bool committed_something_ = false;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text -> statement name
  std::uint64_t statements_prepared_ = 0;
  bool prepare_nothing_ = false;  // its sessions keep no prepared statement (check_prepared)
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
  Lease acquire();
  /// How its connections are made (for a connection of its own outside the pool).
  const ConnectSettings& settings() const { return settings_; }

 private:
  void give_back(std::unique_ptr<Connection> conn);

  const ConnectSettings settings_;
  const std::size_t size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> free_;
  std::size_t opened_ = 0;
  std::uint64_t generation_ = 0;
  std::atomic<bool> down_{false};
};

/// How PgStore runs statements: each call leases a connection from the pool, and every failure
/// is translated here, so no exception reaches the Store port. Thread-safe.
class PgCalls {
 public:
  PgCalls(ConnectSettings settings, std::size_t pool_size)
      : pool_(std::move(settings), pool_size) {}

  ConnectionPool& pool() { return pool_; }

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
  Lookup<T> lookup(const char* op, const char* sql, const Params& params, Read&& read) {
    return run(op, Lookup<T>{}, [&](Connection& c) -> Lookup<T> {
      const Result r = c.exec(sql, params, Effect::kRead);
      if (r.rows() == 0) return {StoreStatus::kNotFound, std::nullopt};
      return {StoreStatus::kOk, read(Row{r, 0})};
    });
  }

  /// Every row, or nullopt when the store could not read them.
  template <class T, class Read>
  std::optional<std::vector<T>> read_rows(const char* op, const char* sql, const Params& params,
                                          Read&& read) {
    return run(op, std::optional<std::vector<T>>{},
               [&](Connection& c) -> std::optional<std::vector<T>> {
                 const Result r = c.exec(sql, params, Effect::kRead);
                 std::vector<T> out;
                 out.reserve(static_cast<std::size_t>(r.rows()));
                 for (int i = 0; i < r.rows(); ++i) out.push_back(read(Row{r, i}));
                 return out;
               });
  }

 private:
  ConnectionPool pool_;
};

}  // namespace leadflow::pg
