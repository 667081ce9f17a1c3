// The ledger's journal over real HTTPS on PostgreSQL, the scale-out store (ledger_checks.hpp;
// ledger_test runs the same on a SQLite file).
#include <gtest/gtest.h>

#include "ledger_checks.hpp"
#include "pg_test_database.hpp"

namespace leadflow::testing {
namespace {

TEST(PgLedger, TheOperatorReadsEveryEntryInOrderPagedAndAsCsvAndNobodyElseDoes) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_ledger_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_ledger_journal(svc);
}

TEST(PgLedger, FiltersByTimeAccountLeadAndKindKeepTheirCursorAndTheirCsv) {
  ASSERT_FALSE(pg_admin_url().empty()) << kNoPostgres;
  PgTestDatabase db("lf_ledger_filters_");
  ASSERT_TRUE(db.made());
  ServiceOptions o;
  o.store_url = db.url("?pool_size=4");
  ServiceFixture svc(o);
  check_ledger_filters(svc);
}

}  // namespace
}  // namespace leadflow::testing
