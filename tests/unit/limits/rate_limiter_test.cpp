// X-RateLimit-Reset of both limiters: the second it names is never one already past, and never
// before the bucket is full again (it is rounded up, not down).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/limits/rate_limiter.hpp"

namespace leadflow {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// 999 ms into a second: the worst case for rounding the current time down.
SystemTime late_in_a_second() { return SystemTime{seconds{1'700'000'000} + milliseconds{999}}; }

// The first whole second at or after `ms`.
std::int64_t ceil_second(std::int64_t ms) { return (ms + 999) / 1000; }

TEST(RateLimitReset, IsRoundedUpToTheSecondTheBucketIsFull) {
  ManualClock clock(late_in_a_second());
  RateLimiter limiter(clock);
  // 60 a minute: one token a second. After one request the bucket is full 1 s later, at
  // 1'700'000'001.999: the header must name ...002, not ...001 (already the past when the
  // client could retry, and before the bucket is full).
  const RateDecision d = limiter.acquire("k", 60, 0);
  ASSERT_TRUE(d.allowed);
  const std::int64_t full_at_ms = clock.now_ms() + 1000;
  EXPECT_EQ(d.reset_unix, ceil_second(full_at_ms));
  EXPECT_GE(d.reset_unix * 1000, full_at_ms);
}

TEST(RateLimitReset, NeverNamesASecondAlreadyPast) {
  ManualClock clock(late_in_a_second());
  RateLimiter limiter(clock);
  for (int i = 0; i < 200; ++i) {
    const RateDecision d = limiter.acquire("k", 100, 0);
    EXPECT_GE(d.reset_unix * 1000, clock.now_ms()) << i;
    clock.advance(milliseconds(137));
  }
}

TEST(RateLimitReset, SharedLimiterRoundsUpToo) {
  ManualClock clock(late_in_a_second());
  testing::FakeStore store(clock);
  SharedRateLimiter limiter(clock, store);
  // One lease of 1 token (60/min → 1/50 rounds up to 1): the shared bucket is full again 1 s
  // after it was taken.
  const RateDecision d = limiter.acquire("k", 60, 0);
  ASSERT_TRUE(d.allowed);
  const std::int64_t full_at_ms = clock.now_ms() + 1000;
  EXPECT_EQ(d.reset_unix, ceil_second(full_at_ms));
  for (int i = 0; i < 100; ++i) {
    clock.advance(milliseconds(251));
    const RateDecision next = limiter.acquire("k", 60, 0);
    EXPECT_GE(next.reset_unix * 1000, clock.now_ms()) << i;
  }
}

}  // namespace
}  // namespace leadflow
