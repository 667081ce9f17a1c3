// Failed sign-ins in a sliding window: refused once the window holds the limit, allowed again
// when the oldest failure leaves it, with Retry-After saying when; keys are apart.
#include <gtest/gtest.h>

#include <chrono>

#include "leadflow/base/clock.hpp"
#include "leadflow/limits/login_limiter.hpp"

namespace leadflow {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(LoginLimiter, RefusesAtTheLimitUntilTheOldestFailureLeavesTheWindow) {
  ManualClock clock;
  LoginLimiter limiter(clock, 5, minutes(15));
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(limiter.check("a").allowed) << i;
    limiter.record_failure("a");
    clock.advance(minutes(1));
  }
  // Five failures at minutes 0..4; now minute 5.
  LoginLimiter::Decision d = limiter.check("a");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after_s, 10 * 60);      // the first failure leaves at minute 15
  EXPECT_TRUE(limiter.check("b").allowed);  // another key is apart

  clock.advance(minutes(10) - seconds(1));
  d = limiter.check("a");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after_s, 1);
  clock.advance(seconds(1));
  EXPECT_TRUE(limiter.check("a").allowed);  // one slot free: one more try
  limiter.record_failure("a");
  EXPECT_FALSE(limiter.check("a").allowed);
  EXPECT_EQ(limiter.check("a").retry_after_s, 60);  // the second failure leaves a minute later
}

TEST(LoginLimiter, AQuietKeyIsForgottenAndStartsAfresh) {
  ManualClock clock;
  LoginLimiter limiter(clock, 2, minutes(15));
  limiter.record_failure("a");
  limiter.record_failure("a");
  EXPECT_FALSE(limiter.check("a").allowed);
  clock.advance(minutes(15));
  EXPECT_TRUE(limiter.check("a").allowed);
  limiter.record_failure("a");
  EXPECT_TRUE(limiter.check("a").allowed);  // one failure of two
}

TEST(LoginLimiter, ManyKeysStayBounded) {
  ManualClock clock;
  LoginLimiter limiter(clock, 3, minutes(15));
  for (std::size_t i = 0; i < LoginLimiter::kMaxKeys + 10; ++i)
    limiter.record_failure("k" + std::to_string(i));
  // The newest keys are remembered; the flood did not grow without bound (no crash, and a key
  // failing now is still counted).
  limiter.record_failure("last");
  limiter.record_failure("last");
  limiter.record_failure("last");
  EXPECT_FALSE(limiter.check("last").allowed);
}

}  // namespace
}  // namespace leadflow
