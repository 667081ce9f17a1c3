// The lead codec (common/domain lead_codec): decode_lead reads a queue payload, which a worker
// takes from a topic that anything with access to the broker can write to (an undecodable record
// is dead-lettered, never a crash). A lead it decodes must survive the way back: encode_lead
// gives a payload that decodes to the same lead, and the lead's API view serialises.
// Input: the payload.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  const std::optional<leadflow::Lead> lead = leadflow::decode_lead(payload);
  if (!lead) return 0;

  const std::string encoded = leadflow::encode_lead(*lead);
  const std::optional<leadflow::Lead> again = leadflow::decode_lead(encoded);
  if (!again) std::fprintf(stderr, "encoded lead does not decode: %s\n", encoded.c_str());
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(leadflow::encode_lead(*again) == encoded);

  leadflow::LeadRecord record;
  record.lead = *lead;
  (void)leadflow::lead_record_to_json(record, /*with_attempts=*/true)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
