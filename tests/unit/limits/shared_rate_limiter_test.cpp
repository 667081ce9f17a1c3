// A replica remembers the shared bucket's refusal: until the bucket has refilled a token it
// refuses on its own, without a store round trip (and from the event loop), then asks again.
#include <gtest/gtest.h>

#include <chrono>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/limits/rate_limiter.hpp"

namespace leadflow {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(SharedRateLimiter, ARefusalIsRememberedUntilTheBucketHasATokenAgain) {
  ManualClock clock;
  testing::FakeStore store(clock);
  SharedRateLimiter limiter(clock, store);
  // 2 a minute: leases of one token, each from the store.
  ASSERT_TRUE(limiter.acquire("k", 2, 0).allowed);
  ASSERT_TRUE(limiter.acquire("k", 2, 0).allowed);
  const RateDecision refused = limiter.acquire("k", 2, 0);
  ASSERT_FALSE(refused.allowed);
  EXPECT_GE(refused.retry_after_s, 30);  // one token every 30 s
  EXPECT_LE(refused.retry_after_s, 31);

  // The store is gone: a replica that asked it would fall back to its own bucket and allow.
  store.unavailable_for(minutes(10));
  clock.advance(seconds(10));
  const auto again = limiter.try_acquire("k", 2, 0);
  ASSERT_TRUE(again) << "answered without the store";
  EXPECT_FALSE(again->allowed);
  EXPECT_EQ(again->retry_after_s, 20);
  EXPECT_EQ(again->remaining, 0);
  EXPECT_EQ(store.unavailable_calls(), 0);
  // Other limits for the same key are not the refusal that was remembered.
  EXPECT_FALSE(limiter.try_acquire("k", 5, 0).has_value());

  // Once the bucket has a token again, only the store can say who gets it.
  clock.advance(seconds(20));
  EXPECT_FALSE(limiter.try_acquire("k", 2, 0).has_value());
}

TEST(SharedRateLimiter, PastTheDailyLimitTheRefusalLastsUntilTheNextDay) {
  ManualClock clock;
  testing::FakeStore store(clock);
  SharedRateLimiter limiter(clock, store);
  ASSERT_TRUE(limiter.acquire("k", 60, 1).allowed);
  clock.advance(seconds(2));  // the lease is gone, the minute bucket has tokens
  ASSERT_FALSE(limiter.acquire("k", 60, 1).allowed);
  clock.advance(seconds(30));  // the minute bucket is full again, the day is not over
  const auto again = limiter.try_acquire("k", 60, 1);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->allowed);
  EXPECT_GT(again->retry_after_s, 60);
}

}  // namespace
}  // namespace leadflow
