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
// Queries are PQexecParams with text parameters only, but for the few run for every lead whose
// planning costs more than their run (the duplicate check, a post intent), which each connection
// prepares once (Connection::exec_prepared); batches travel as array parameters
// (unnest), so a batch costs a few round trips, not one per row. A batch whose rows each need a
// statement of their own (post intents) is sent as one pipeline: one round trip. Every libpq
// failure becomes a StoreStatus here: integrity violations (SQLSTATE class 23) are kConflict,
// everything else is kUnavailable. Internally failures are thrown as PgError and caught at the
// port: no exception leaves the adapter. The schema is in schema.cpp, the libpq wrapper in
// driver.hpp.

#include "leadflow/store/pg_store.hpp"
#include "pg/adapter.hpp"

namespace leadflow::pg {

/// The row is created with the defaults of a new bucket if missing, then locked FOR UPDATE:
/// every process updating the key waits its turn. If `update` throws, nothing is written.
std::optional<std::string> PgStore::shared_secret(std::string_view name,
                                                  std::string_view candidate) {
  return run("shared_secret", std::optional<std::string>(),
             [&](Connection& c) -> std::optional<std::string> {
               c.exec(
                   "INSERT INTO shared_secrets (name, value) VALUES ($1, $2)"
                   " ON CONFLICT (name) DO NOTHING",
                   Params().add(name).add(candidate), Effect::kWrite);
               const Result row = c.exec("SELECT value FROM shared_secrets WHERE name = $1",
                                         Params().add(name), Effect::kRead);
               if (row.rows() != 1) return std::nullopt;
               return row.text(0, 0);
             });
}

}  // namespace leadflow::pg

namespace leadflow {

std::unique_ptr<Store> open_pg_store(const PgStoreOptions& options, std::string& error) {
  using namespace pg;  // the adapter (adapter.hpp) and its driver
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
    std::vector<std::string> secrets = password_forms(options.conninfo);
    // The listening connections' own settings come last, so they win over the conninfo's.
    ConnectSettings listen_settings = settings;
    for (const auto& [keyword, value] : options.listen) {
      listen_settings.keywords.push_back(keyword);
      listen_settings.values.push_back(value);
      if (keyword == "password" && !value.empty()) secrets.push_back(value);
    }
    settings.secrets = std::make_shared<const std::vector<std::string>>(std::move(secrets));
    listen_settings.secrets = settings.secrets;

    // One connection now, so that a wrong URL or an unreachable server stops start-up; the
    // same for the listening connections when they go elsewhere.
    std::string detail;
    auto first = Connection::open(settings, detail);
    if (!first) {
      error = "cannot connect to PostgreSQL: " + detail;
      return nullptr;
    }
    if (!options.listen.empty() && !Connection::open(listen_settings, detail)) {
      error = "cannot connect to PostgreSQL with the listen_ parameters: " + detail;
      return nullptr;
    }
    const auto pool_size = static_cast<std::size_t>(std::max(options.pool_size, 1));
    auto store =
        std::make_unique<PgStore>(std::move(settings), std::move(listen_settings), pool_size);
    store->pool().adopt(std::move(first));
    return store;
  } catch (const std::exception& e) {
    error = std::string("cannot open the PostgreSQL store: ") + e.what();
    return nullptr;
  }
}

}  // namespace leadflow
