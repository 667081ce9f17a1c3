#pragma once
// The tests' PostgreSQL: the server the postgres_start CTest fixture starts (scripts/pg_server.sh,
// its admin URL in ${build}/pg/url) or the one LEADFLOW_TEST_PG_URL names, and a database of a
// test's own on it, made fresh and dropped afterwards.
#include <string>

namespace leadflow::testing {

/// What a PostgreSQL test says when there is no server to run on.
inline constexpr const char* kNoPostgres =
    "no PostgreSQL: run through ctest (the postgres_start fixture starts one) or set "
    "LEADFLOW_TEST_PG_URL to an admin URL";

/// $LEADFLOW_TEST_PG_URL, else the postgres_start fixture's admin URL; "" when there is neither.
std::string pg_admin_url();

/// Runs one SQL statement with psql (the tests need no libpq of their own); true when it ran.
bool psql(const std::string& url, const std::string& sql);

/// `admin_url` with its database replaced by `database`, then `params` ("?pool_size=4").
std::string pg_url_of(const std::string& admin_url, const std::string& database,
                      const std::string& params = "");

/// A new, empty database named `prefix` and a unique lower-case suffix, dropped (with FORCE) when
/// this goes. made() is false when there is no server or the database could not be made.
class PgTestDatabase {
 public:
  explicit PgTestDatabase(const std::string& prefix);
  ~PgTestDatabase();
  PgTestDatabase(const PgTestDatabase&) = delete;
  PgTestDatabase& operator=(const PgTestDatabase&) = delete;

  bool made() const { return made_; }
  const std::string& admin_url() const { return admin_; }
  const std::string& name() const { return name_; }
  /// The store URL of this database (LEADFLOW_STORE), with `params` such as "?pool_size=4".
  std::string url(const std::string& params = "") const { return pg_url_of(admin_, name_, params); }

 private:
  std::string admin_, name_;
  bool made_ = false;
};

}  // namespace leadflow::testing
