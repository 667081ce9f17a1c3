// A buyer's own portal over real HTTPS on PostgreSQL, the scale-out store
// (buyer_portal_checks.hpp; buyer_portal_test runs the same on a SQLite file).
#include <gtest/gtest.h>

#include "buyer_portal_checks.hpp"
#include "pg_test_database.hpp"

namespace leadflow::testing {
namespace {

ServiceOptions on_postgres(PgTestDatabase& db) {
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  return o;
}

TEST(PgBuyerPortal, ABuyerReadsItsOwnAccountAndItsPurchasesReturnWindow) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_portal_a_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_buyer_account(svc);
}

TEST(PgBuyerPortal, ABuyerPausesResumesAndChangesOnlyWhatTheOperatorOpened) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_portal_c_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_buyer_changes(svc);
}

TEST(PgBuyerPortal, EachPartyExportsItsLeadsInTheColumnsItMaySee) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_portal_e_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_lead_exports(svc);
}

}  // namespace
}  // namespace leadflow::testing
