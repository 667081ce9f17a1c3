// The change log over real HTTPS on PostgreSQL, the scale-out store (change_log_checks.hpp;
// change_log_test runs the same on a SQLite file).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

#include "change_log_checks.hpp"
#include "leadflow/base/ids.hpp"

namespace leadflow::testing {
namespace {

std::string pg_admin_url() {
  if (const char* v = std::getenv("LEADFLOW_TEST_PG_URL"); v && *v) return v;
  std::ifstream in(std::string(LEADFLOW_BINARY_DIR) + "/pg/url");
  std::string url;
  std::getline(in, url);
  return url;
}

// psql runs the statement: the test needs no libpq of its own.
bool psql(const std::string& url, const std::string& sql) {
  const std::string cmd =
      "psql -q -v ON_ERROR_STOP=1 '" + url + "' -c \"" + sql + "\" >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TEST(PgChangeLog, ABuyerChangedThroughTheApiIsReadBackWithItsBeforeAndAfter) {
  const std::string admin = pg_admin_url();
  ASSERT_FALSE(admin.empty())
      << "no PostgreSQL: run through ctest (the postgres_start fixture starts one) or set "
         "LEADFLOW_TEST_PG_URL to an admin URL";
  std::string database = "lf_changes_" + new_id("t").substr(2);
  for (auto& ch : database) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  ASSERT_TRUE(psql(admin, "CREATE DATABASE " + database));
  {
    ServiceOptions o;
    o.workers = 0;
    o.store_url = admin.substr(0, admin.rfind('/') + 1) + database + "?pool_size=4";
    ServiceFixture svc(o);
    check_buyer_change_in_log(svc);
  }
  psql(admin, "DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

}  // namespace
}  // namespace leadflow::testing
