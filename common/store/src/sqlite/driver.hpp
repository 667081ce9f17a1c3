#pragma once
// The SQLite wrapper of the SQLite adapter: a connection with its prepared-statement cache, a
// query binding and reading one statement, the write transaction, the reader pool, and the
// translation of SQLite result codes into StoreStatus.
#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "leadflow/base/log.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow::sqlite {

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
  static std::unique_ptr<Connection> open(const std::string& path, bool writer, std::string& error);

  ~Connection();

  /// The cached statement for `sql`, prepared on first use; nullptr on failure (see last_error).
  sqlite3_stmt* statement(std::string_view sql);

  /// Runs one or more statements without caching (migrations).
  int exec(const char* sql) { return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr); }

  int last_error() const { return last_error_; }
  std::int64_t changes() const { return sqlite3_changes64(db_); }
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
  const char* message() const { return sqlite3_errmsg(db_); }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}

  /// Runs a PRAGMA, storing the first column of its answer in `answer` if not null.
  int pragma(const char* sql, std::string* answer);

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
    if (ready())
      note(sqlite3_bind_text(stmt_, ++pos_, v.data() ? v.data() : "", static_cast<int>(v.size()),
                             SQLITE_STATIC));
    return *this;
  }
  Query& bind(const std::string& v) { return bind(std::string_view(v)); }
  // Text is bound without a copy (SQLITE_STATIC) and read when the statement runs, after the
  // binding expression: a temporary string would be gone by then.
  Query& bind(std::string&& v) = delete;
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

/// A read transaction on a reader connection: the statements inside it share one snapshot and
/// one WAL read lock (each autocommit statement takes and drops its own, two fcntl calls and the
/// shared-memory mutex each). Ended by end(), or rolled back on scope exit.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Connection& conn) : conn_(conn) {}
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  ~ReadSnapshot() {
    // exec, not a cached statement: nothing here may allocate or throw.
    if (conn_.in_transaction()) conn_.exec("ROLLBACK");
  }
  int begin() { return Query(conn_, "BEGIN").run(); }
  int end() { return Query(conn_, "COMMIT").run(); }

 private:
  Connection& conn_;
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
  Lease acquire();

 private:
  void give_back(std::unique_ptr<Connection> conn);

  const std::string path_;
  const std::size_t size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> free_;
  std::size_t opened_ = 0;
};

// Translation: every SQLite failure becomes a StoreStatus or an empty answer here.

/// Whether `rc` (an extended result code) is a constraint violation: a conflict, not a failure.
inline bool is_constraint(int rc) { return (rc & 0xff) == SQLITE_CONSTRAINT; }

/// Maps a failed SQLite call to the port's vocabulary, and logs it (without SQL text or values).
StoreStatus report(const Connection& conn, int rc, const char* op);

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

/// How SqliteStore runs statements: writes on the one writer connection under its mutex, reads on
/// a pooled reader, every failure translated by report() or guarded(). Thread-safe.
class SqliteCalls {
 protected:
  SqliteCalls(std::string path, std::unique_ptr<Connection> writer, std::size_t readers)
      : writer_(std::move(writer)), readers_(std::move(path), readers) {}

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
  Lookup<T> lookup(const char* op, std::string_view sql, Bind&& bind, Read&& read) {
    return guarded(op, Lookup<T>{}, [&]() -> Lookup<T> {
      auto conn = readers_.acquire();
      if (!conn) return {};
      Query q(*conn, sql);
      bind(q);
      const int rc = q.step();
      if (rc == SQLITE_ROW) return {StoreStatus::kOk, read(q)};
      if (rc == SQLITE_DONE) return {StoreStatus::kNotFound, std::nullopt};
      report(*conn, rc, op);
      return {};
    });
  }

  /// Every row of `sql`, or nullopt when the store could not read them all.
  template <class T, class Bind, class Read>
  std::optional<std::vector<T>> read_rows(const char* op, std::string_view sql, Bind&& bind,
                                          Read&& read) {
    return guarded(op, std::optional<std::vector<T>>{}, [&]() -> std::optional<std::vector<T>> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      return rows_on<T>(*conn, op, sql, std::forward<Bind>(bind), std::forward<Read>(read));
    });
  }

  /// Every row of `sql` on `conn` (inside a snapshot), or nullopt when it could not read them.
  template <class T, class Bind, class Read>
  static std::optional<std::vector<T>> rows_on(Connection& conn, const char* op,
                                               std::string_view sql, Bind&& bind, Read&& read) {
    std::vector<T> out;
    Query q(conn, sql);
    bind(q);
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) out.push_back(read(q));
    if (rc != SQLITE_DONE) {
      report(conn, rc, op);
      return std::nullopt;
    }
    return out;
  }

  /// Runs `body` (Connection&) -> R on one pooled reader inside one ReadSnapshot: several reads
  /// that agree with each other, for the price of one read lock. `fallback` when the snapshot
  /// cannot begin or end.
  template <class R, class Body>
  R read_snapshot(const char* op, R fallback, Body&& body) {
    return guarded(op, fallback, [&]() -> R {
      auto conn = readers_.acquire();
      if (!conn) return fallback;
      ReadSnapshot snapshot(*conn);
      if (int rc = snapshot.begin()) return (report(*conn, rc, op), fallback);
      R out = body(*conn);
      if (int rc = snapshot.end()) {
        report(*conn, rc, op);
        out = fallback;
      }
      return out;
    });
  }

  std::mutex write_mu_;
  std::unique_ptr<Connection> writer_;
  ReaderPool readers_;
};

}  // namespace leadflow::sqlite
