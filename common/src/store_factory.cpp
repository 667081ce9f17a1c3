// Chooses the Store adapter named by LEADFLOW_STORE. Callers prefix errors with the setting's
// name ("LEADFLOW_STORE: ..."), so messages here do not repeat it, except where the value itself
// is unusable.

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "leadflow/store.hpp"
#include "sqlite_store.hpp"

namespace leadflow {

std::unique_ptr<Store> open_store(const std::string& url, std::string& error) {
  constexpr std::string_view kSqlite = "sqlite:";
  const std::string_view u = url;

  if (u.starts_with(kSqlite)) {
    std::string_view path = u.substr(kSqlite.size());
    // URL spelling: "sqlite:///var/lib/leadflow/db" is the absolute path "/var/lib/leadflow/db".
    if (path.starts_with("//")) path.remove_prefix(2);
    if (path.empty()) {
      error = "sqlite: needs a file path (sqlite:PATH)";
      return nullptr;
    }
    // Every connection of the pool must see the same database: no in-memory or URI databases.
    if (path == ":memory:" || path.starts_with("file:")) {
      error = "sqlite: needs a file path (sqlite:PATH), not an in-memory or URI database";
      return nullptr;
    }
    const std::filesystem::path file{std::string(path)};
    if (file.has_parent_path()) {
      std::error_code ec;
      std::filesystem::create_directories(file.parent_path(), ec);
      if (ec) {
        error = "cannot create directory '" + file.parent_path().string() +
                "': " + ec.message();
        return nullptr;
      }
    }
    return open_sqlite_store(file.string(), error);
  }

  if (u.starts_with("postgresql://") || u.starts_with("postgres://")) {
    error = "PostgreSQL store not built yet";
    return nullptr;
  }

  // The value itself is not echoed: a mistyped PostgreSQL URL may carry a password.
  error = "unsupported store; LEADFLOW_STORE must be sqlite:PATH or postgresql://...";
  return nullptr;
}

}  // namespace leadflow
