// Chooses the Store adapter named by LEADFLOW_STORE. Callers prefix errors with the setting's
// name ("LEADFLOW_STORE: ..."), so messages here do not repeat it, except where the value itself
// is unusable.

#include <charconv>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "leadflow/store/pg_store.hpp"
#include "leadflow/store/sqlite_store.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow {
namespace {

constexpr int kMaxPoolSize = 1000;

/// Splits leadflow's own `pool_size=N` query parameter (connections kept open; default 8) off a
/// PostgreSQL URL: libpq refuses URI parameters it does not know, so the rest goes to libpq
/// without it. "postgresql://u@db/leadflow?pool_size=16&sslmode=require" keeps
/// "postgresql://u@db/leadflow?sslmode=require". Errors never echo the URL (it may hold a
/// password).
bool take_pool_size(const std::string& url, std::string& conninfo, int& pool_size,
                    std::string& error) {
  const auto query_start = url.find('?');
  if (query_start == std::string::npos) {
    conninfo = url;
    return true;
  }
  conninfo = url.substr(0, query_start);
  std::string rest;
  std::string_view query = std::string_view(url).substr(query_start + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    constexpr std::string_view kPoolSize = "pool_size=";
    if (param.starts_with(kPoolSize)) {
      const std::string_view value = param.substr(kPoolSize.size());
      int n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > kMaxPoolSize) {
        error = "pool_size must be a whole number from 1 to " + std::to_string(kMaxPoolSize);
        return false;
      }
      pool_size = n;
      continue;
    }
    if (param.empty()) continue;
    rest += rest.empty() ? '?' : '&';
    rest += param;
  }
  conninfo += rest;
  return true;
}

}  // namespace

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
        error = "cannot create directory '" + file.parent_path().string() + "': " + ec.message();
        return nullptr;
      }
    }
    return open_sqlite_store(file.string(), error);
  }

  if (u.starts_with("postgresql://") || u.starts_with("postgres://")) {
    PgStoreOptions options;
    if (!take_pool_size(url, options.conninfo, options.pool_size, error)) return nullptr;
    return open_pg_store(options, error);
  }

  // The value itself is not echoed: a mistyped PostgreSQL URL may carry a password.
  error = "unsupported store; LEADFLOW_STORE must be sqlite:PATH or postgresql://...";
  return nullptr;
}

std::unique_ptr<Store> open_migrated_store(const std::string& url, std::string& error) {
  auto store = open_store(url, error);
  if (!store) {
    error = "LEADFLOW_STORE: " + error;
    return nullptr;
  }
  if (store->migrate() != StoreStatus::kOk) {
    error = "LEADFLOW_STORE: migrations failed";
    return nullptr;
  }
  return store;
}

}  // namespace leadflow
