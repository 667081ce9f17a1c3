#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/store/store.hpp"

namespace leadflow {

/// Options of the PostgreSQL adapter.
struct PgStoreOptions {
  std::string conninfo;  // a libpq connection URI: postgresql://user:pass@host:port/db?...
  int pool_size = 8;     // connections kept open; callers beyond it wait for one
  int connect_timeout_s = 5;
  // libpq settings for the listening connections only (the URL's listen_KEYWORD=VALUE), applied
  // over the conninfo's: a pool behind a pooler in transaction mode listens on the server itself.
  std::vector<std::pair<std::string, std::string>> listen;
};

/// Connects to PostgreSQL. The schema is not touched: call Store::migrate(). Returns nullptr and
/// sets `error` (never echoing a password) when no connection can be made. A connection that
/// breaks later (server restarted) is re-made on its next use; calls made while the server is
/// down answer kUnavailable / nullopt / empty rather than blocking for long.
std::unique_ptr<Store> open_pg_store(const PgStoreOptions& options, std::string& error);

}  // namespace leadflow
