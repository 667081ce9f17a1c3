#pragma once
#include <memory>
#include <string>

#include "leadflow/store/store.hpp"

namespace leadflow {

/// Opens (creating if missing) the SQLite database at `path` in WAL mode with synchronous=FULL.
/// The schema is not touched: call Store::migrate(). Returns nullptr and sets `error` (no SQL
/// detail) when the file cannot be opened as a database. The parent directory must exist.
std::unique_ptr<Store> open_sqlite_store(const std::string& path, std::string& error);

}  // namespace leadflow
