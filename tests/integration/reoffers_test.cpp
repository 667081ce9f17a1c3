// Second chances end to end on the embedded default: a SQLite file, the embedded queue, buyer
// simulators over HTTPS (reoffer_checks.hpp; pg_reoffers_test runs the same on PostgreSQL).
#include <gtest/gtest.h>

#include "reoffer_checks.hpp"
#include "vertical_reoffer_checks.hpp"

namespace leadflow::testing {
namespace {

TEST(Reoffers, AnUnsoldLeadIsSoldAgedToABuyerNeverPostedIt) {
  ServiceFixture svc(reoffering_vertical());
  check_aged_sale(svc);
}

TEST(Reoffers, NobodyTakingItAgedRunsEveryRoundThenStops) {
  ServiceFixture svc(reoffering_vertical());
  check_every_round(svc);
}

TEST(Reoffers, ACampaignsOwnPolicyReplacesItsVerticals) {
  ServiceFixture svc(reoffering_vertical());
  check_campaigns_own_policy(svc);
}

TEST(Reoffers, AVerticalsPolicySetByTheOperatorAppliesToLeadsDecidedAfter) {
  ServiceFixture svc(reoffering_vertical());
  check_vertical_policy_set_live(svc);
}

TEST(Reoffers, AVerticalsPolicyIsChangedOnlyAtTheVersionItWasRead) {
  ServiceFixture svc;
  check_vertical_policy_versions(svc);
}

}  // namespace
}  // namespace leadflow::testing
