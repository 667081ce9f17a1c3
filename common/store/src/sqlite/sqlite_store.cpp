// The SQLite adapter of the Store port (the embedded default, SPEC §1).
//
// Connections: one writer, guarded by a mutex (SQLite allows one writer at a time anyway, and
// serialising in-process avoids busy-waiting on the file lock), and a small pool of readers that
// WAL lets run beside the writer. Every connection caches its prepared statements. Every SQLite
// failure becomes a StoreStatus here: constraint violations are kConflict, everything else
// (busy, I/O, corruption, a missing schema) is kUnavailable. No exception leaves the adapter.
// The schema is in schema.cpp, the SQLite wrapper in driver.hpp.

#include "leadflow/store/sqlite_store.hpp"
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

std::optional<std::string> SqliteStore::shared_secret(std::string_view name,
                                                      std::string_view candidate) {
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

}  // namespace leadflow::sqlite

namespace leadflow {

std::unique_ptr<Store> open_sqlite_store(const std::string& path, std::string& error) {
  using namespace sqlite;  // the adapter (adapter.hpp) and its driver
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
