#pragma once
// One step of a migration list, as both adapters' schema.cpp write them.
#include <cstdint>

namespace leadflow::store_schema {

/// One step of a store's schema: `sql` brings a database at `version` - 1 to `version`.
struct Migration {
  std::int64_t version;
  const char* sql;
};

}  // namespace leadflow::store_schema
