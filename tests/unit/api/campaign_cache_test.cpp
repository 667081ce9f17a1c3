// The campaign-key cache of the front: what it believes, and for how long.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "fake_store.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/crypto.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;

constexpr const char* kCachedCampaignKey = "lfc_campaign_key_for_the_cache_test";

class CampaignCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Seller s;
    s.id = "sl_cache";
    s.name = "Acme";
    ASSERT_EQ(store_.insert_seller(s), StoreStatus::kOk);
    Campaign c;
    c.id = "cp_cache";
    c.seller_id = s.id;
    c.name = "cache";
    c.vertical = "solar";
    c.key_hash = sha256_hex(kCachedCampaignKey);
    c.key_hint = "lfc_camp";
    ASSERT_EQ(store_.insert_campaign(c), StoreStatus::kOk);
  }

  ManualClock clock_;
  testing::FakeStore store_{clock_};
  CampaignCache cache_{store_, clock_};
};

TEST_F(CampaignCacheTest, ALookupTheStoreCouldNotAnswerIsNeverCachedAsNoSuchKey) {
  // The lookup fails, and the store is back by the time anyone could ask it whether it is well:
  // the miss must not be taken for "no such key" (a valid key answered 401 for a second).
  store_.fail_next_lookups(1);
  bool unavailable = false;
  EXPECT_FALSE(cache_.find_by_key(kCachedCampaignKey, unavailable).has_value());
  EXPECT_TRUE(unavailable);
  std::optional<Campaign> cached;
  EXPECT_FALSE(cache_.find_cached(kCachedCampaignKey, cached)) << "a failed lookup was cached";

  const std::optional<Campaign> found = cache_.find_by_key(kCachedCampaignKey, unavailable);
  EXPECT_FALSE(unavailable);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, "cp_cache");
}

TEST_F(CampaignCacheTest, AMissTheStoreAnsweredIsCachedForASecond) {
  bool unavailable = true;
  EXPECT_FALSE(cache_.find_by_key("lfc_no_such_key", unavailable).has_value());
  EXPECT_FALSE(unavailable);
  std::optional<Campaign> cached = Campaign{};
  EXPECT_TRUE(cache_.find_cached("lfc_no_such_key", cached));
  EXPECT_FALSE(cached.has_value());
  clock_.advance(1s);
  EXPECT_FALSE(cache_.find_cached("lfc_no_such_key", cached));
}

TEST_F(CampaignCacheTest, AStoreThatIsDownIsUnavailableNotUnknown) {
  store_.unavailable_for(5s);
  bool unavailable = false;
  EXPECT_FALSE(cache_.find_by_key(kCachedCampaignKey, unavailable).has_value());
  EXPECT_TRUE(unavailable);
  clock_.advance(5s);
  EXPECT_TRUE(cache_.find_by_key(kCachedCampaignKey, unavailable).has_value());
  EXPECT_FALSE(unavailable);
}

}  // namespace
}  // namespace leadflow
