#pragma once
// The schema versions of the two store adapters, so that a test can hold their migration lists
// to the same versions: a database may move between SQLite and PostgreSQL tooling only if a
// version means the same step in both.
#include <cstdint>
#include <vector>

namespace leadflow {

/// The versions the SQLite adapter's migrations bring a database to, in the order applied.
std::vector<std::int64_t> sqlite_schema_versions();
/// The versions the PostgreSQL adapter's migrations bring a database to, in the order applied.
std::vector<std::int64_t> pg_schema_versions();

}  // namespace leadflow
