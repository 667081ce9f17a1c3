#pragma once
#include <span>

#include "migration.hpp"

namespace leadflow::sqlite {

/// The SQLite migrations, oldest first; entry i brings a database to version i + 1.
std::span<const store_schema::Migration> migrations();

}  // namespace leadflow::sqlite
