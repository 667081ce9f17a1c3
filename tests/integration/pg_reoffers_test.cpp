// Second chances end to end on PostgreSQL, the scale-out store: the schedule claimed with FOR
// UPDATE SKIP LOCKED, the re-offer's outcome in one transaction (reoffer_checks.hpp;
// reoffers_test runs the same on a SQLite file).
#include <gtest/gtest.h>

#include "pg_test_database.hpp"
#include "reoffer_checks.hpp"
#include "vertical_reoffer_checks.hpp"

namespace leadflow::testing {
namespace {

ServiceOptions on_postgres(const PgTestDatabase& db) {
  ServiceOptions o = reoffering_vertical();
  o.store_url = db.url("?pool_size=4");
  return o;
}

TEST(PgReoffers, AnUnsoldLeadIsSoldAgedToABuyerNeverPostedIt) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_reoffers_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_aged_sale(svc);
}

TEST(PgReoffers, NobodyTakingItAgedRunsEveryRoundThenStops) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_reoffers_rounds_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_every_round(svc);
}

TEST(PgReoffers, ACampaignsOwnPolicyReplacesItsVerticals) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_reoffers_own_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_campaigns_own_policy(svc);
}

TEST(PgReoffers, AVerticalsPolicySetByTheOperatorAppliesToLeadsDecidedAfter) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_reoffers_vertical_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_vertical_policy_set_live(svc);
}

TEST(PgReoffers, AVerticalsPolicyIsChangedOnlyAtTheVersionItWasRead) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_reoffers_versions_");
  ASSERT_TRUE(db.made());
  ServiceFixture svc(on_postgres(db));
  check_vertical_policy_versions(svc);
}

}  // namespace
}  // namespace leadflow::testing
