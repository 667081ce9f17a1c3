// The ledger's journal over real HTTPS on a SQLite file (ledger_checks.hpp; pg_ledger_test runs
// the same on PostgreSQL).
#include <gtest/gtest.h>

#include "ledger_checks.hpp"

namespace leadflow::testing {
namespace {

TEST(Ledger, TheOperatorReadsEveryEntryInOrderPagedAndAsCsvAndNobodyElseDoes) {
  ServiceFixture svc;
  check_ledger_journal(svc);
}

TEST(Ledger, FiltersByTimeAccountLeadAndKindKeepTheirCursorAndTheirCsv) {
  ServiceFixture svc;
  check_ledger_filters(svc);
}

}  // namespace
}  // namespace leadflow::testing
