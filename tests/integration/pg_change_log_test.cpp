// The change log over real HTTPS on PostgreSQL, the scale-out store (change_log_checks.hpp;
// change_log_test runs the same on a SQLite file).
#include <gtest/gtest.h>

#include <string>

#include "change_log_checks.hpp"
#include "pg_test_database.hpp"

namespace leadflow::testing {
namespace {

TEST(PgChangeLog, ABuyerChangedThroughTheApiIsReadBackWithItsBeforeAndAfter) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_changes_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.workers = 0;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_buyer_change_in_log(svc);
}

}  // namespace
}  // namespace leadflow::testing
