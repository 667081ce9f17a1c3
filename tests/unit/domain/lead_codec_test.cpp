// The queue payload of a lead read back from bytes leadflow did not write: anything with access to
// a topic can put a record there, and a worker must refuse it (it is dead-lettered), not misread
// it. Inputs found by tests/fuzz/lead_codec_fuzz.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

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

// Custom-field numbers as the seller wrote them: integers stay integers with every digit (the
// queue payload and the stores' JSON both), decimals keep their value.
TEST(LeadCodec, CustomFieldNumbersRoundTripAsWritten) {
  Lead l;
  l.id = "ld_1";
  l.custom_fields = {{"year", std::int64_t{2019}},
                     {"account", std::int64_t{9007199254740993}},
                     {"low", std::numeric_limits<std::int64_t>::min()},
                     {"rate", 2019.0},
                     {"part", 0.1},
                     {"name", std::string("x")}};
  const std::string payload = encode_lead(l);
  EXPECT_NE(payload.find(R"("year":2019,)"), std::string::npos) << payload;
  EXPECT_NE(payload.find(R"("account":9007199254740993,)"), std::string::npos) << payload;
  // Read back through a JSON object, the members come sorted by name.
  CustomFields expected = l.custom_fields;
  std::sort(expected.begin(), expected.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto back = decode_lead(payload);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->custom_fields, expected);

  const std::string stored = custom_fields_to_json(l.custom_fields).dump();
  EXPECT_NE(stored.find(R"("year":2019)"), std::string::npos) << stored;
  EXPECT_NE(stored.find(R"("rate":2019.0,)"), std::string::npos) << stored;
  EXPECT_EQ(custom_fields_from_json(nlohmann::json::parse(stored)), expected);
}

}  // namespace
}  // namespace leadflow
