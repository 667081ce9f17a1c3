// The rate limits shared by ingest replicas (SharedRateLimiter) over a real store file: two
// limiter instances stand for two replicas, a manual clock for time.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>

#include "leadflow/base/clock.hpp"
#include "leadflow/limits/rate_limiter.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

class SharedLimiterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    store_ = open_store("sqlite:" + dir_.path() + "/leadflow.db", error);
    ASSERT_NE(store_, nullptr) << error;
    ASSERT_EQ(store_->migrate(), StoreStatus::kOk);
    a_ = std::make_unique<SharedRateLimiter>(clock_, *store_);
    b_ = std::make_unique<SharedRateLimiter>(clock_, *store_);
  }

  TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<SharedRateLimiter> a_, b_;
};

TEST_F(SharedLimiterTest, TwoReplicasTogetherGetTheLimitNotTwice) {
  int allowed = 0;
  for (int i = 0; i < 300; ++i) {
    SharedRateLimiter& replica = i % 2 == 0 ? *a_ : *b_;
    if (replica.acquire("key_1", 100, 0).allowed) ++allowed;
  }
  // Each replica may hold at most one lease's tokens back; nothing beyond the bucket is given.
  EXPECT_LE(allowed, 100);
  EXPECT_GE(allowed, 100 - 2 * SharedRateLimiter::lease_size(100));
  const RateDecision refused = a_->acquire("key_1", 100, 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.limit, 100);
  EXPECT_GE(refused.retry_after_s, 1);
  // Another key has its own bucket.
  EXPECT_TRUE(b_->acquire("key_2", 100, 0).allowed);
}

TEST_F(SharedLimiterTest, ReplicasTogetherAllowWhatOneBucketWouldPlusTheDocumentedSlack) {
  // A steady 5 requests a second spread over both replicas for ten minutes (five times the
  // limit), and the same stream through one local bucket for comparison.
  RateLimiter one_bucket(clock_);
  struct Tally {
    std::deque<std::int64_t> window;  // times (ms) allowed in the last 60 s
    std::size_t worst = 0;
    int total = 0;
    void allowed(std::int64_t now) {
      ++total;
      window.push_back(now);
      while (now - window.front() >= 60'000) window.pop_front();
      worst = std::max(worst, window.size());
    }
  } shared, local;
  for (int i = 0; i < 3000; ++i) {
    clock_.advance(std::chrono::milliseconds(200));
    SharedRateLimiter& replica = (i / 3) % 2 == 0 ? *a_ : *b_;
    if (replica.acquire("key_1", 60, 0).allowed) shared.allowed(clock_.now_ms());
    if (one_bucket.acquire("key_1", 60, 0).allowed) local.allowed(clock_.now_ms());
  }
  // No minute gets more than one bucket's minute plus one second of refill (the lease life).
  EXPECT_LE(shared.worst, local.worst + 1);
  // And the limit is actually given, not starved by leases lost between replicas.
  EXPECT_GE(shared.total, local.total * 95 / 100);
}

TEST_F(SharedLimiterTest, TheDailyLimitIsExactAcrossReplicas) {
  int allowed = 0;
  for (int minute = 0; minute < 30; ++minute) {
    for (int i = 0; i < 40; ++i)
      if ((i % 2 == 0 ? *a_ : *b_).acquire("key_1", 100, 500).allowed) ++allowed;
    clock_.advance(std::chrono::minutes(1));
  }
  EXPECT_EQ(allowed, 500);
  const RateDecision d = a_->acquire("key_1", 100, 500);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.remaining, 0);
  EXPECT_GT(d.retry_after_s, 60);  // until the next UTC day, not the next token
}

TEST_F(SharedLimiterTest, RemainingCountsWhatTheReplicasLeftInTheSharedBucket) {
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(a_->acquire("key_1", 100, 0).allowed);
  const RateDecision d = b_->acquire("key_1", 100, 0);
  ASSERT_TRUE(d.allowed);
  // 11 spent; leases held by a replica count as spent to the others.
  EXPECT_LE(d.remaining, 89);
  EXPECT_GE(d.remaining, 89 - 2 * SharedRateLimiter::lease_size(100));
}

}  // namespace
}  // namespace leadflow::testing
