// A buyer's own portal over real HTTPS on a SQLite file (buyer_portal_checks.hpp;
// pg_buyer_portal_test runs the same on PostgreSQL).
#include <gtest/gtest.h>

#include "buyer_portal_checks.hpp"

namespace leadflow::testing {
namespace {

TEST(BuyerPortal, ABuyerReadsItsOwnAccountAndItsPurchasesReturnWindow) {
  ServiceFixture svc;
  check_buyer_account(svc);
}

TEST(BuyerPortal, ABuyerPausesResumesAndChangesOnlyWhatTheOperatorOpened) {
  ServiceFixture svc;
  check_buyer_changes(svc);
}

TEST(BuyerPortal, EachPartyExportsItsLeadsInTheColumnsItMaySee) {
  ServiceFixture svc;
  check_lead_exports(svc);
}

}  // namespace
}  // namespace leadflow::testing
