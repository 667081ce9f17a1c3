// The rule of what makes a lead a test (leadflow/domain/test_mode.hpp), and what a worker
// records for one, on plain values.
#include "leadflow/domain/test_mode.hpp"

#include <gtest/gtest.h>

#include "leadflow/domain/lead_codec.hpp"

namespace leadflow {
namespace {

TEST(TestMode, ALeadIsATestWhenThePostItsSellerOrItsCampaignSaysSo) {
  EXPECT_FALSE(is_test_lead({}));
  EXPECT_TRUE(is_test_lead({.lead = true}));
  EXPECT_TRUE(is_test_lead({.seller = true}));
  EXPECT_TRUE(is_test_lead({.campaign = true}));
  // Neither the seller nor the campaign makes a lead marked a test into a real one.
  EXPECT_TRUE(is_test_lead({.lead = true, .seller = false, .campaign = false}));
  EXPECT_TRUE(is_test_lead({.lead = false, .seller = true, .campaign = true}));
}

TEST(TestMode, ATestLeadIsDecidedTestWithNoBuyerPriceOrAttempt) {
  const Distribution d = test_outcome(1'700'000'000'123);
  EXPECT_EQ(d.status, DeliveryStatus::kTest);
  EXPECT_TRUE(is_test(d.status));
  EXPECT_TRUE(is_final(d.status));
  EXPECT_EQ(d.decided_at_ms, 1'700'000'000'123);
  EXPECT_EQ(d.reason, "test");
  EXPECT_TRUE(d.buyer_id.empty());
  EXPECT_EQ(d.price, 0);
  EXPECT_EQ(d.payout, 0);
  EXPECT_TRUE(d.sales.empty());
  EXPECT_TRUE(d.attempts.empty());
  EXPECT_TRUE(d.ineligible.empty());
  EXPECT_EQ(to_string(DeliveryStatus::kTest), "test");
  EXPECT_EQ(parse_delivery_status("test"), DeliveryStatus::kTest);
  for (auto s : {DeliveryStatus::kPending, DeliveryStatus::kDelivered, DeliveryStatus::kUnsold,
                 DeliveryStatus::kDuplicate, DeliveryStatus::kRejected, DeliveryStatus::kFailed,
                 DeliveryStatus::kReturned})
    EXPECT_FALSE(is_test(s)) << to_string(s);
}

TEST(TestMode, TheMarkTravelsOnTheQueueAndARealLeadsRecordIsUnchanged) {
  Lead l;
  l.id = "ld_1";
  l.vertical = "solar";
  l.received_at_ms = 1;
  const std::string real = encode_lead(l);
  EXPECT_EQ(real.find("\"test\""), std::string::npos);
  EXPECT_FALSE(decode_lead(real)->test);
  l.test = true;
  const auto back = decode_lead(encode_lead(l));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->test);
}

}  // namespace
}  // namespace leadflow
