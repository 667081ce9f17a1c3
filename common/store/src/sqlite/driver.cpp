#include "sqlite/driver.hpp"

namespace leadflow::sqlite {
namespace {

constexpr int kBusyTimeoutMs = 5000;
// Negative cache sizes are KiB: 64 MiB for the writer, 16 MiB per reader.
constexpr const char* kWriterCacheSize = "PRAGMA cache_size = -65536";
constexpr const char* kReaderCacheSize = "PRAGMA cache_size = -16384";

// Before SQLite's first use in the process: no allocation statistics. They take one global
// mutex around every malloc and free of every connection, which the readers of concurrent
// requests then queue on (about 3% of a lead view's CPU, measured with perf). Nothing here
// reads sqlite3_memory_used(). Too late (SQLITE_MISUSE) only if SQLite was initialised first.
//
// Statement journals and savepoints (a lead's outcome is one, SAVEPOINT outcome) are kept in
// memory, never spilled to a temporary file. With SQLite's default (spill past 64 KiB) an outcome
// with its sale, ledger entry and rollup rows changed more pages than that, and each one's
// journal went to a temporary file, page by page: about 20 writes of 4 KiB per lead a worker
// decides, in the kernel's file write path (perf: a tenth of a draining worker's CPU), for a file
// deleted at the end of the transaction. A spill size above 128 KiB cannot be used: SQLite 3.40
// copies a spilling journal to its file in chunks of that size, its file layer writes at most
// 128 KiB at once, and every statement whose journal outgrew the size failed with SQLITE_FULL
// ("database or disk is full"; sqlite_store_test,
// AStatementWithAJournalOfManyMegabytesInATransactionIsWritten). 128 KiB itself cost a draining
// worker a fifth of its rate (the worker's batches of outcomes outgrow it). In memory, as with
// temp_store=MEMORY, a statement's journal holds the pages it changes: the large statements inside
// transactions are kept small on purpose (a suppression list's switch moves its rows one statement
// each).
constexpr int kStatementJournalSpill = -1;

void configure_sqlite_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, kStatementJournalSpill);
  });
}

}  // namespace

std::unique_ptr<Connection> Connection::open(const std::string& path, bool writer,
                                             std::string& error) {
  configure_sqlite_once();
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
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

Connection::~Connection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

sqlite3_stmt* Connection::statement(std::string_view sql) {
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

int Connection::pragma(const char* sql, std::string* answer) {
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

ReaderPool::Lease ReaderPool::acquire() {
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

void ReaderPool::give_back(std::unique_ptr<Connection> conn) {
  {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(conn));
  }
  cv_.notify_one();
}

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

}  // namespace leadflow::sqlite
