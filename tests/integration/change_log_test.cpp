// The change log over real HTTPS on a SQLite file (change_log_checks.hpp; pg_change_log_test
// runs the same on PostgreSQL).
#include <gtest/gtest.h>

#include "change_log_checks.hpp"

namespace leadflow::testing {
namespace {

TEST(ChangeLog, ABuyerChangedThroughTheApiIsReadBackWithItsBeforeAndAfter) {
  ServiceOptions o;
  o.workers = 0;
  ServiceFixture svc(o);
  check_buyer_change_in_log(svc);
}

}  // namespace
}  // namespace leadflow::testing
