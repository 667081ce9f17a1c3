// The JSON readers of both surfaces (ingest/validation): Surface A's POST /v1/leads body
// (parse_lead_json, kApi), Surface B's POST /api/v1/lead body read in one parse
// (parse_campaign_lead_json) and again for a known vertical (parse_lead_json, kCampaign), and
// the key scan used on a body that is not a readable object (peek_campaign_key). Every result
// goes through lead_checks.hpp; besides, when a Surface B body parsed, the key its one parse saw
// is the key the scan finds.
// Input: the body. The campaign behind a SELLER_CAMPAIGN_KEY is steered by the key itself: a
// vertical's name is a campaign of that vertical, "pending" one only the store knows, "retired" a
// campaign whose vertical is no longer configured; any other key has no campaign.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "lead_checks.hpp"
#include "leadflow/validation/validation.hpp"

namespace {

using leadflow::LeadShape;
using leadflow::ParsedLead;
using leadflow::fuzz::check_parsed_lead;
using leadflow::fuzz::verticals;

std::optional<std::string> campaign_vertical(std::string_view key) {
  if (key == "pending") return std::nullopt;
  if (key == "retired") return std::string("no_longer_configured");
  if (verticals().find(key) != nullptr) return std::string(key);
  return std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  check_parsed_lead(leadflow::parse_lead_json(body, LeadShape::kApi, verticals(), ""));

  std::optional<std::string> asked;
  const ParsedLead b = leadflow::parse_campaign_lead_json(
      body, verticals(), [&](std::string_view key) -> std::optional<std::string> {
        FUZZ_CHECK(!asked.has_value());  // asked once, in the one parse
        asked = std::string(key);
        return campaign_vertical(key);
      });
  check_parsed_lead(b, b.malformed || b.validated_for.has_value());
  const std::string peeked = leadflow::peek_campaign_key(body);
  if (!b.malformed) {
    FUZZ_CHECK(asked.has_value());
    FUZZ_CHECK(peeked == *asked);
    const std::optional<std::string> vertical = campaign_vertical(*asked);
    if (!vertical) {
      FUZZ_CHECK(!b.validated_for && b.campaign_key == *asked);
    } else {
      FUZZ_CHECK(b.validated_for == vertical);
      // Validating again for the same vertical (the pool's second look) gives the same answer.
      const ParsedLead again =
          leadflow::parse_lead_json(body, LeadShape::kCampaign, verticals(), *vertical);
      check_parsed_lead(again);
      FUZZ_CHECK(again.errors.size() == b.errors.size());
    }
  }
  if (asked && !asked->empty()) {
    // The pool validates a lead whose campaign only the store knew against its vertical.
    check_parsed_lead(leadflow::parse_lead_json(body, LeadShape::kCampaign, verticals(), "solar"));
  }
  return 0;
}
