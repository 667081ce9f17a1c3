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

/// "%2F" and the like decoded; false on a malformed escape.
bool percent_decoded(std::string_view in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= in.size()) return false;
    const auto [end, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, value, 16);
    if (ec != std::errc() || end != in.data() + i + 3) return false;
    out += static_cast<char>(value);
    i += 2;
  }
  return true;
}

/// Splits leadflow's own query parameters off a PostgreSQL URL: libpq refuses URI parameters it
/// does not know, so the rest goes to libpq without them.
/// - `pool_size=N`: connections kept open (default 8).
/// - `listen_KEYWORD=VALUE`: the libpq setting KEYWORD for the listening connections only
///   (e.g. listen_host=db-rw beside a host that is a pooler in transaction mode, which holds no
///   LISTEN); VALUE is percent-decoded.
/// "postgresql://u@db/leadflow?pool_size=16&sslmode=require" keeps
/// "postgresql://u@db/leadflow?sslmode=require". Errors never echo the URL or a value (they may
/// hold a password).
bool take_own_parameters(const std::string& url, PgStoreOptions& options, std::string& error) {
  const auto query_start = url.find('?');
  if (query_start == std::string::npos) {
    options.conninfo = url;
    return true;
  }
  options.conninfo = url.substr(0, query_start);
  std::string rest;
  std::string_view query = std::string_view(url).substr(query_start + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    constexpr std::string_view kPoolSize = "pool_size=";
    constexpr std::string_view kListen = "listen_";
    if (param.starts_with(kPoolSize)) {
      const std::string_view value = param.substr(kPoolSize.size());
      int n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > kMaxPoolSize) {
        error = "pool_size must be a whole number from 1 to " + std::to_string(kMaxPoolSize);
        return false;
      }
      options.pool_size = n;
      continue;
    }
    if (param.starts_with(kListen)) {
      const auto equals = param.find('=');
      const std::string_view keyword = param.substr(kListen.size(), equals - kListen.size());
      const bool named = !keyword.empty() &&
                         keyword.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == keyword.npos;
      std::string value;
      if (equals == std::string_view::npos || !named ||
          !percent_decoded(param.substr(equals + 1), value)) {
        error = "a listen_ parameter must be listen_KEYWORD=VALUE, KEYWORD a libpq setting";
        return false;
      }
      options.listen.emplace_back(keyword, std::move(value));
      continue;
    }
    if (param.empty()) continue;
    rest += rest.empty() ? '?' : '&';
    rest += param;
  }
  options.conninfo += rest;
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
    if (!take_own_parameters(url, options, error)) return nullptr;
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
