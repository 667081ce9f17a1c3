// Suppression lists over real HTTPS on PostgreSQL, the scale-out store (suppression_*checks.hpp;
// suppression_test runs the same on a SQLite file).
#include <gtest/gtest.h>

#include "pg_test_database.hpp"
#include "suppression_change_checks.hpp"
#include "suppression_checks.hpp"
#include "suppression_gzip_checks.hpp"
#include "suppression_upload_checks.hpp"

namespace leadflow::testing {
namespace {

TEST(PgSuppression, TheOperatorsListsRefuseAtIntakeAndABuyersKeepTheLeadFromIt) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_suppression_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_suppression_lists(svc);
}

TEST(PgSuppression, TheRoutesLetEachPartyManageOnlyItsOwnLists) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_suppression_routes_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_suppression_routes(svc);
}

TEST(PgSuppression, ALargeUploadIsReadAsItArrivesAndAClientThatGoesChangesNothing) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_suppression_stream_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_suppression_streamed_uploads(svc);
}

TEST(PgSuppression, AGzipUploadIsInflatedAsItArrivesAndABadOneChangesNothing) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_suppression_gzip_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_suppression_gzip_uploads(svc);
}

TEST(PgSuppression, EachListMadeReplacedOrDeletedIsInTheChangeLog) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_suppression_changes_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_suppression_change_log(svc);
}

}  // namespace
}  // namespace leadflow::testing
