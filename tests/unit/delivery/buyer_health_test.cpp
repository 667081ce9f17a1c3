#include <gtest/gtest.h>

#include "leadflow/base/clock.hpp"
#include "leadflow/delivery/buyer_health.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;

BuyerHealth::Options health_options() {
  BuyerHealth::Options o;
  o.window = 10;
  o.min_requests = 4;
  o.failure_ratio = 0.5;
  o.cool_down = 30s;
  return o;
}

TEST(BuyerHealth, PausesAfterEnoughFailuresThenComesBackClean) {
  ManualClock clock;
  BuyerHealth health(clock, health_options());
  EXPECT_FALSE(health.record("b", true));
  EXPECT_FALSE(health.record("b", true));
  EXPECT_FALSE(health.record("b", true));  // 3 known: below the minimum to judge
  EXPECT_FALSE(health.paused("b"));
  EXPECT_TRUE(health.record("b", false));  // 4 known, 3 failed: 75% >= 50%
  EXPECT_TRUE(health.paused("b"));
  EXPECT_FALSE(health.paused("other"));
  EXPECT_FALSE(health.record("b", true));  // late answers during the pause do not count
  clock.advance(29s);
  EXPECT_TRUE(health.paused("b"));
  clock.advance(2s);
  EXPECT_FALSE(health.paused("b"));
  // A clean record: one failure after the pause does not pause it again.
  EXPECT_FALSE(health.record("b", true));
  EXPECT_FALSE(health.paused("b"));
}

TEST(BuyerHealth, AHealthyBuyerWithOccasionalFailuresStaysIn) {
  ManualClock clock;
  BuyerHealth health(clock, health_options());
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(health.record("b", i % 4 == 0)) << i;  // a quarter fail: below half
  }
  EXPECT_FALSE(health.paused("b"));
}

TEST(BuyerHealth, JudgesOnlyTheRecentWindow) {
  ManualClock clock;
  BuyerHealth health(clock, health_options());
  for (int i = 0; i < 10; ++i) health.record("b", false);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(health.record("b", true));  // 4 of the last 10
  EXPECT_TRUE(health.record("b", true));                               // 5 of the last 10
}

}  // namespace
}  // namespace leadflow
