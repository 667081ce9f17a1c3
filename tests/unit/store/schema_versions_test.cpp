// The SQLite and PostgreSQL migration lists must bring a database to the same versions: a
// version one adapter has and the other lacks would leave the two schemas apart for good.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "leadflow/store/schema_versions.hpp"

namespace leadflow {
namespace {

std::vector<std::int64_t> one_to(std::size_t n) {
  std::vector<std::int64_t> v;
  for (std::size_t i = 1; i <= n; ++i) v.push_back(static_cast<std::int64_t>(i));
  return v;
}

TEST(SchemaVersions, SqliteAndPostgresHaveTheSameVersions) {
  EXPECT_EQ(sqlite_schema_versions(), pg_schema_versions())
      << "every migration needs a step with the same version in both sqlite/schema.cpp and "
         "pg/schema.cpp";
}

// migrate() applies entry i as version i + 1, so a list must run 1, 2, 3... without a gap.
TEST(SchemaVersions, EachListRunsFromOneWithoutGaps) {
  const auto sqlite = sqlite_schema_versions();
  const auto pg = pg_schema_versions();
  EXPECT_FALSE(sqlite.empty());
  EXPECT_EQ(sqlite, one_to(sqlite.size()));
  EXPECT_EQ(pg, one_to(pg.size()));
}

}  // namespace
}  // namespace leadflow
