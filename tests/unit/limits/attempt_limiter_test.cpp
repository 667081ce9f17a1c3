// Attempts reserved before the check they guard, in a sliding window, on a simulated clock: a
// full window refuses (the right secret too) until its oldest place leaves, a success gives its
// place back, concurrent reservations never exceed the limit, and windows kept in the store are
// one window for every limiter using it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/limits/attempt_limiter.hpp"
#include "leadflow/limits/sign_in_limits.hpp"

namespace leadflow {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

const std::vector<AttemptKey> kOneKey = {{"a", 5}};

TEST(AttemptLimiter, AFullWindowRefusesUntilItsOldestPlaceLeaves) {
  ManualClock clock;
  AttemptLimiter limiter(clock, minutes(15));
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(limiter.reserve(kOneKey).reserved()) << i;  // each a wrong secret: kept
    clock.advance(minutes(1));
  }
  // Five attempts at minutes 0..4; now minute 5.
  AttemptDecision d = limiter.reserve(kOneKey);
  EXPECT_EQ(d.status, AttemptStatus::kRefused);
  EXPECT_EQ(d.retry_after_s, 10 * 60);  // the first leaves at minute 15
  EXPECT_FALSE(d.reservation.held());
  EXPECT_TRUE(limiter.reserve({{"b", 5}}).reserved()) << "another key is apart";

  clock.advance(minutes(10) - seconds(1));
  d = limiter.reserve(kOneKey);
  EXPECT_EQ(d.status, AttemptStatus::kRefused);
  EXPECT_EQ(d.retry_after_s, 1);
  clock.advance(seconds(1));
  d = limiter.reserve(kOneKey);
  ASSERT_TRUE(d.reserved());  // minute 15: the first left
  EXPECT_EQ(limiter.reserve(kOneKey).status, AttemptStatus::kRefused) << "full again";
}

TEST(AttemptLimiter, ASuccessGivesItsPlaceBackAndFreesNoOther) {
  ManualClock clock;
  AttemptLimiter limiter(clock, minutes(15));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(limiter.reserve(kOneKey).reserved());
  // The fifth is the right secret: released, so a fifth wrong one still has room.
  AttemptDecision right = limiter.reserve(kOneKey);
  ASSERT_TRUE(right.reserved());
  limiter.release(right.reservation);
  EXPECT_FALSE(right.reservation.held());
  limiter.release(right.reservation);  // a second release changes nothing
  ASSERT_TRUE(limiter.reserve(kOneKey).reserved());
  // Now full: the right secret is refused like any other, before it is checked.
  EXPECT_EQ(limiter.reserve(kOneKey).status, AttemptStatus::kRefused);
}

TEST(AttemptLimiter, AnAttemptTakesAPlaceInEveryKeyOrInNone) {
  ManualClock clock;
  AttemptLimiter limiter(clock, minutes(15));
  const std::vector<AttemptKey> narrow = {{"addr", 10}, {"acct", 2}};
  ASSERT_TRUE(limiter.reserve(narrow).reserved());
  ASSERT_TRUE(limiter.reserve(narrow).reserved());
  const AttemptDecision d = limiter.reserve(narrow);
  EXPECT_EQ(d.status, AttemptStatus::kRefused);
  EXPECT_EQ(d.refused_by, 1u);
  // The refused attempt took nothing from the address: 8 places left there.
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(limiter.reserve({{"addr", 10}, {"acct" + std::to_string(i), 2}}).reserved()) << i;
  const AttemptDecision full = limiter.reserve({{"addr", 10}, {"fresh", 2}});
  EXPECT_EQ(full.status, AttemptStatus::kRefused);
  EXPECT_EQ(full.refused_by, 0u);
}

TEST(AttemptLimiter, RetryAfterWaitsForTheLatestOfTheFullKeys) {
  ManualClock clock;
  AttemptLimiter limiter(clock, minutes(15));
  ASSERT_TRUE(limiter.reserve({{"x", 1}}).reserved());
  clock.advance(minutes(5));
  ASSERT_TRUE(limiter.reserve({{"y", 1}}).reserved());
  const AttemptDecision d = limiter.reserve({{"x", 1}, {"y", 1}});
  EXPECT_EQ(d.status, AttemptStatus::kRefused);
  EXPECT_EQ(d.refused_by, 0u);
  EXPECT_EQ(d.retry_after_s, 15 * 60) << "y frees only at minute 20";
}

TEST(AttemptLimiter, ConcurrentAttemptsNeverExceedTheLimit) {
  ManualClock clock;
  AttemptLimiter limiter(clock, minutes(15));
  constexpr int kThreads = 24;
  std::atomic<int> reserved{0}, refused{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      start.arrive_and_wait();
      const AttemptDecision d = limiter.reserve(kOneKey);
      ++(d.reserved() ? reserved : refused);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(reserved.load(), 5);
  EXPECT_EQ(refused.load(), kThreads - 5);
}

TEST(AttemptLimiter, WindowsInTheStoreAreOneWindowForEveryLimiter) {
  ManualClock clock;
  testing::FakeStore store(clock);
  AttemptLimiter a(clock, minutes(15), store), b(clock, minutes(15), store);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((i % 2 == 0 ? a : b).reserve(kOneKey).reserved()) << i;
  AttemptDecision d = b.reserve(kOneKey);
  EXPECT_EQ(d.status, AttemptStatus::kRefused);
  EXPECT_EQ(d.retry_after_s, 15 * 60);
  // A success on one frees the place for the other.
  clock.advance(minutes(15));
  AttemptDecision right = a.reserve(kOneKey);
  ASSERT_TRUE(right.reserved());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(b.reserve(kOneKey).reserved());
  EXPECT_EQ(b.reserve(kOneKey).status, AttemptStatus::kRefused);
  a.release(right.reservation);
  EXPECT_TRUE(b.reserve(kOneKey).reserved());
}

TEST(AttemptLimiter, AStoreThatCannotAnswerReservesNothing) {
  ManualClock clock;
  testing::FakeStore store(clock);
  AttemptLimiter limiter(clock, minutes(15), store);
  store.unavailable_for(seconds(10));
  const AttemptDecision d = limiter.reserve(kOneKey);
  EXPECT_EQ(d.status, AttemptStatus::kUnavailable);
  EXPECT_FALSE(d.reservation.held());
}

TEST(SignInLimits, AddressesOfOneIpv6SlashSixtyFourShareALimit) {
  ManualClock clock;
  SignInLimits limits(clock);
  // Ten attempts from ten addresses of one /64, each at another account.
  for (int i = 0; i < SignInLimits::kPerAddress; ++i)
    ASSERT_TRUE(limits
                    .reserve("2001:db8:1:2::" + std::to_string(i + 1),
                             "user" + std::to_string(i) + "@example.com")
                    .decision.reserved())
        << i;
  const SignInLimits::Attempt refused = limits.reserve("2001:db8:1:2:ffff::9", "new@example.com");
  EXPECT_EQ(refused.decision.status, AttemptStatus::kRefused);
  EXPECT_EQ(refused.refused_by, SignInLimits::Limit::kPerAddress);
  // The next /64 is another subscriber.
  EXPECT_TRUE(limits.reserve("2001:db8:1:3::1", "new@example.com").decision.reserved());
}

TEST(SignInLimits, AnAccountIsLimitedWhateverTheAddress) {
  ManualClock clock;
  SignInLimits limits(clock);
  for (int i = 0; i < SignInLimits::kPerAccount; ++i)
    ASSERT_TRUE(
        limits.reserve("198.51.100." + std::to_string(i), "ops@example.com").decision.reserved());
  SignInLimits::Attempt a = limits.reserve("203.0.113.9", "ops@example.com");
  EXPECT_EQ(a.decision.status, AttemptStatus::kRefused);
  EXPECT_EQ(a.refused_by, SignInLimits::Limit::kPerAccount);
  EXPECT_EQ(a.decision.retry_after_s, 15 * 60);
  // A success gives both places back: the address keeps its whole allowance.
  SignInLimits::Attempt ok = limits.reserve("203.0.113.9", "other@example.com");
  ASSERT_TRUE(ok.decision.reserved());
  limits.succeeded(ok);
  for (int i = 0; i < SignInLimits::kPerAddress; ++i)
    ASSERT_TRUE(
        limits.reserve("203.0.113.9", "x" + std::to_string(i) + "@example.com").decision.reserved())
        << i;
}

}  // namespace
}  // namespace leadflow
