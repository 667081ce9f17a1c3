// The queue payload of a lead read back from bytes leadflow did not write: anything with access to
// a topic can put a record there, and a worker must refuse it (it is dead-lettered), not misread
// it. Inputs found by tests/fuzz/lead_codec_fuzz.cpp.
#include <gtest/gtest.h>

#include <string>

#include "leadflow/domain/lead_codec.hpp"

namespace leadflow {
namespace {

std::string payload_with(const std::string& member) {
  return R"({"id":"ld_1","first_name":"Jane",)" + member + "}";
}

TEST(LeadCodec, ReadsTheTimesItWrites) {
  const auto lead =
      decode_lead(payload_with(R"("received_at_ms":1718000000123,"sync_wait_ms":3000)"));
  ASSERT_TRUE(lead.has_value());
  EXPECT_EQ(lead->received_at_ms, 1718000000123);
  EXPECT_EQ(lead->sync_wait_ms, 3000);
  const auto without = decode_lead(R"({"id":"ld_1"})");
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(without->received_at_ms, 0);
  EXPECT_EQ(without->sync_wait_ms, 0);
}

// A float too large for the integer it is read into was converted anyway: undefined behaviour
// (UBSan: "3.43608e+28 is outside the range of representable values of type 'long'").
TEST(LeadCodec, RefusesTimesThatAreNotIntegersInRange) {
  for (const char* member :
       {R"("received_at_ms":34360777777777777777700222000)", R"("received_at_ms":1e300)",
        R"("received_at_ms":-1e300)", R"("received_at_ms":1.5)", R"("received_at_ms":"1")",
        R"("received_at_ms":null)", R"("received_at_ms":18446744073709551615)",
        R"("sync_wait_ms":1e10)", R"("sync_wait_ms":2.5)", R"("sync_wait_ms":4294967296)",
        R"("sync_wait_ms":-2147483649)"}) {
    EXPECT_FALSE(decode_lead(payload_with(member)).has_value()) << member;
  }
  EXPECT_TRUE(decode_lead(payload_with(R"("received_at_ms":-9223372036854775808)")).has_value());
  EXPECT_TRUE(decode_lead(payload_with(R"("sync_wait_ms":2147483647)")).has_value());
}

}  // namespace
}  // namespace leadflow
