// The front's expiring cache: what it believes, for how long, and what it forgets.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/expiring_cache.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;

TEST(ExpiringCache, BelievesAValueForItsTimeAndNotAMomentLonger) {
  ManualClock clock;
  ExpiringCache<int> cache(clock, 1s);
  EXPECT_FALSE(cache.get("a").has_value());
  cache.put("a", 1);
  clock.advance(999ms);
  ASSERT_TRUE(cache.get("a").has_value());
  EXPECT_EQ(*cache.get("a"), 1);
  clock.advance(1ms);
  EXPECT_FALSE(cache.get("a").has_value());
}

TEST(ExpiringCache, APutStartsTheTimeAgainAndReplacesTheValue) {
  ManualClock clock;
  ExpiringCache<int> cache(clock, 1s);
  cache.put("a", 1);
  clock.advance(900ms);
  cache.put("a", 2);
  clock.advance(900ms);
  ASSERT_TRUE(cache.get("a").has_value());
  EXPECT_EQ(*cache.get("a"), 2);
}

TEST(ExpiringCache, AnAmendChangesALiveValueWithoutMakingItLiveLonger) {
  ManualClock clock;
  ExpiringCache<int> cache(clock, 1s);
  cache.put("a", 1);
  clock.advance(500ms);
  cache.amend("a", [](int& v) { v = 7; });
  EXPECT_EQ(*cache.get("a"), 7);
  clock.advance(500ms);
  EXPECT_FALSE(cache.get("a").has_value());
  cache.amend("b", [](int& v) { v = 9; });  // nothing there: nothing made
  EXPECT_FALSE(cache.get("b").has_value());
}

TEST(ExpiringCache, ErasedAndClearedEntriesAreGone) {
  ManualClock clock;
  ExpiringCache<int> cache(clock, 1s);
  cache.put("a", 1);
  cache.put("b", 2);
  cache.erase("a");
  EXPECT_FALSE(cache.get("a").has_value());
  EXPECT_TRUE(cache.get("b").has_value());
  cache.clear();
  EXPECT_FALSE(cache.get("b").has_value());
}

TEST(ExpiringCache, PastItsCapacityANewKeyDropsTheRestButNotItself) {
  ManualClock clock;
  ExpiringCache<int> cache(clock, 1s, 2);
  cache.put("a", 1);
  cache.put("b", 2);
  cache.put("b", 3);  // a key already there takes no room
  EXPECT_TRUE(cache.get("a").has_value());
  cache.put("c", 4);
  EXPECT_FALSE(cache.get("a").has_value());
  EXPECT_FALSE(cache.get("b").has_value());
  ASSERT_TRUE(cache.get("c").has_value());
  EXPECT_EQ(*cache.get("c"), 4);
}

}  // namespace
}  // namespace leadflow
