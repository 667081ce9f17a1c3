// Suppression lists over real HTTPS on a SQLite file (suppression_*checks.hpp;
// pg_suppression_test runs the same on PostgreSQL).
#include <gtest/gtest.h>

#include "suppression_change_checks.hpp"
#include "suppression_checks.hpp"
#include "suppression_gzip_checks.hpp"
#include "suppression_upload_checks.hpp"

namespace leadflow::testing {
namespace {

TEST(Suppression, TheOperatorsListsRefuseAtIntakeAndABuyersKeepTheLeadFromIt) {
  ServiceFixture svc;
  check_suppression_lists(svc);
}

TEST(Suppression, TheRoutesLetEachPartyManageOnlyItsOwnLists) {
  ServiceFixture svc;
  check_suppression_routes(svc);
}

TEST(Suppression, ALargeUploadIsReadAsItArrivesAndAClientThatGoesChangesNothing) {
  ServiceFixture svc;
  check_suppression_streamed_uploads(svc);
}

TEST(Suppression, AGzipUploadIsInflatedAsItArrivesAndABadOneChangesNothing) {
  ServiceFixture svc;
  check_suppression_gzip_uploads(svc);
}

TEST(Suppression, EachListMadeReplacedOrDeletedIsInTheChangeLog) {
  ServiceFixture svc;
  check_suppression_change_log(svc);
}

}  // namespace
}  // namespace leadflow::testing
