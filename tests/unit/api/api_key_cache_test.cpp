// The API-key cache of the front: a busy key is read from the store once a second; a revoked key
// is refused within that second everywhere and at once where it was revoked; nothing the store
// did not find is believed.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fake_store.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/crypto.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;

class ApiKeyCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_.id = "key_cache";
    key_.name = "cache";
    key_.plan = Plan::kStandard;
    key_.scopes = kScopeAll;
    key_.key_hash = hash_;
    key_.key_hint = "lfk_cach";
    key_.created_at_ms = clock_.now_ms();
  }

  ManualClock clock_;
  testing::FakeStore store_{clock_};
  ApiKeyCache cache_{store_, clock_};
  const std::string hash_ = sha256_hex("lfk_key_for_the_cache_test");
  ApiKey key_;
};

TEST_F(ApiKeyCacheTest, AKeyRevokedElsewhereIsRefusedWithinASecond) {
  ASSERT_EQ(store_.insert_api_key(key_), StoreStatus::kOk);
  Lookup<ApiKey> found = cache_.find_by_hash(hash_);
  ASSERT_EQ(found.status, StoreStatus::kOk);
  ASSERT_TRUE(found.value.has_value());
  EXPECT_EQ(found.value->revoked_at_ms, 0);

  // Another replica (or leadflow-admin) revokes it: the store says so at once.
  ASSERT_EQ(store_.revoke_api_key(key_.id, clock_.now_ms(), kAnyVersion), StoreStatus::kOk);
  clock_.advance(999ms);
  EXPECT_EQ(cache_.find_by_hash(hash_).value->revoked_at_ms, 0) << "kept for its second";
  clock_.advance(1ms);
  found = cache_.find_by_hash(hash_);
  ASSERT_TRUE(found.value.has_value());
  EXPECT_NE(found.value->revoked_at_ms, 0) << "still believed past its second";
}

TEST_F(ApiKeyCacheTest, ARevocationThroughThisReplicaIsRefusedAtOnce) {
  ASSERT_EQ(store_.insert_api_key(key_), StoreStatus::kOk);
  ASSERT_TRUE(cache_.find_by_hash(hash_).value.has_value());
  ASSERT_EQ(store_.revoke_api_key(key_.id, clock_.now_ms(), kAnyVersion), StoreStatus::kOk);
  cache_.forget_all();
  EXPECT_NE(cache_.find_by_hash(hash_).value->revoked_at_ms, 0);
}

TEST_F(ApiKeyCacheTest, AMissIsAskedAgainSoANewKeyWorksAtOnce) {
  Lookup<ApiKey> found = cache_.find_by_hash(hash_);
  EXPECT_EQ(found.status, StoreStatus::kNotFound);
  EXPECT_FALSE(found.value.has_value());
  ASSERT_EQ(store_.insert_api_key(key_), StoreStatus::kOk);
  found = cache_.find_by_hash(hash_);
  ASSERT_TRUE(found.value.has_value());
  EXPECT_EQ(found.value->id, "key_cache");
}

TEST_F(ApiKeyCacheTest, ALookupTheStoreCouldNotAnswerIsNotKeptAsAnAnswer) {
  ASSERT_EQ(store_.insert_api_key(key_), StoreStatus::kOk);
  store_.fail_next_lookups(1);
  EXPECT_EQ(cache_.find_by_hash(hash_).status, StoreStatus::kUnavailable);
  const Lookup<ApiKey> found = cache_.find_by_hash(hash_);
  EXPECT_EQ(found.status, StoreStatus::kOk);
  EXPECT_TRUE(found.value.has_value());
}

TEST_F(ApiKeyCacheTest, AKeptKeyAnswersWhileTheStoreIsDownForItsSecondOnly) {
  ASSERT_EQ(store_.insert_api_key(key_), StoreStatus::kOk);
  ASSERT_TRUE(cache_.find_by_hash(hash_).value.has_value());
  store_.unavailable_for(5s);
  EXPECT_EQ(cache_.find_by_hash(hash_).status, StoreStatus::kOk);
  clock_.advance(1s);
  EXPECT_EQ(cache_.find_by_hash(hash_).status, StoreStatus::kUnavailable);
}

TEST_F(ApiKeyCacheTest, AUseWrittenToTheStoreIsKeptSoItIsNotWrittenAgain) {
  ASSERT_EQ(store_.insert_api_key(key_), StoreStatus::kOk);
  ASSERT_EQ(cache_.find_by_hash(hash_).value->last_used_at_ms, 0);
  const std::int64_t at = clock_.now_ms();
  cache_.used(hash_, at);
  EXPECT_EQ(cache_.find_by_hash(hash_).value->last_used_at_ms, at);
  cache_.used(hash_, at - 10);  // an older use never goes back in time
  EXPECT_EQ(cache_.find_by_hash(hash_).value->last_used_at_ms, at);
}

}  // namespace
}  // namespace leadflow
