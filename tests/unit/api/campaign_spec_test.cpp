// A campaign's specification (GET /v1/campaigns/{id}/specification) on plain values: its
// example request passes the validator for every configured vertical, and its example answers
// are what the handlers send.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "campaign_spec.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

Campaign campaign_of(const std::string& vertical, bool async_mode = false) {
  Campaign c;
  c.id = "cp_1";
  c.seller_id = "sl_1";
  c.name = "Spring";
  c.vertical = vertical;
  c.async_mode = async_mode;
  c.rate_limit_per_minute = 120;
  c.payout_value = 7000;  // revshare 70%
  return c;
}

const json* example(const json& spec, int status) {
  for (const auto& e : spec["examples"])
    if (e["status"] == status) return &e;
  return nullptr;
}

TEST(CampaignSpecification, TheExampleRequestIsValidForEveryConfiguredVertical) {
  const VerticalRegistry verticals = VerticalRegistry::defaults();
  for (const std::string& name : verticals.names()) {
    const json spec =
        campaign_specification(json::object(), campaign_of(name), verticals.find(name), verticals);
    EXPECT_TRUE(spec["example_request_errors"].empty()) << name << ": " << spec.dump();
    const ParsedLead parsed =
        parse_lead_json(spec["example_request"].dump(), LeadShape::kCampaign, verticals, name);
    EXPECT_TRUE(parsed.errors.empty()) << name;
    // Every field of the vertical is listed, after the standard ones.
    for (const auto& f : verticals.find(name)->fields) {
      bool listed = false;
      for (const auto& l : spec["fields"]) listed = listed || (l["name"] == f.name);
      EXPECT_TRUE(listed) << name << "." << f.name;
    }
  }
}

TEST(CampaignSpecification, ListsTheStandardFieldsAsTheValidatorRequiresThem) {
  const VerticalRegistry verticals = VerticalRegistry::defaults();
  const json spec = campaign_specification(json::object(), campaign_of("solar"),
                                           verticals.find("solar"), verticals);
  for (const auto& f : spec["fields"]) {
    if (f["group"] != "standard") continue;
    // Drop the field from a valid lead: it is refused as required exactly when listed so.
    json lead = spec["example_request"];
    lead.erase(f["name"].get<std::string>());
    const ParsedLead parsed =
        parse_lead_json(lead.dump(), LeadShape::kCampaign, verticals, "solar");
    bool refused = false;
    for (const auto& e : parsed.errors) refused = refused || e.field == f["name"];
    EXPECT_EQ(refused, f["required"].get<bool>()) << f.dump();
  }
}

TEST(CampaignSpecification, ExampleAnswersAreTheHandlersAnswers) {
  const VerticalRegistry verticals = VerticalRegistry::defaults();
  const json spec = campaign_specification(json::object(), campaign_of("auto_insurance"),
                                           verticals.find("auto_insurance"), verticals);
  const json* sold = example(spec, 200);
  ASSERT_NE(sold, nullptr);
  EXPECT_EQ((*sold)["body"]["status"], "sold");
  EXPECT_DOUBLE_EQ((*sold)["body"]["price"].get<double>(), 14.00);  // 70% of a $20.00 sale
  EXPECT_FALSE((*sold)["body"].contains("buyer_id"));
  const json* queued = example(spec, 202);
  ASSERT_NE(queued, nullptr);
  EXPECT_EQ((*queued)["body"]["status"], "queued");
  const json* invalid = example(spec, 400);
  ASSERT_NE(invalid, nullptr);
  EXPECT_EQ((*invalid)["body"]["status"], "invalid");
  EXPECT_EQ((*invalid)["body"]["errors"].size(), 3u);  // last_name, email_address, phone_home
  const json* limited = example(spec, 429);
  ASSERT_NE(limited, nullptr);
  EXPECT_EQ((*limited)["headers"]["X-RateLimit-Limit"], "120");
  EXPECT_TRUE((*limited)["headers"].contains("Retry-After"));
  EXPECT_EQ((*limited)["body"]["status"], "rate_limited");
  ASSERT_NE(example(spec, 401), nullptr);
  ASSERT_NE(example(spec, 503), nullptr);
  // Nothing in it names a buyer.
  EXPECT_EQ(spec.dump().find("by_"), std::string::npos);
}

TEST(CampaignSpecification, AnAsyncCampaignOnlyAnswers202ToAGoodLead) {
  const VerticalRegistry verticals = VerticalRegistry::defaults();
  const json spec = campaign_specification(json::object(), campaign_of("solar", true),
                                           verticals.find("solar"), verticals);
  EXPECT_EQ(example(spec, 200), nullptr);
  ASSERT_NE(example(spec, 202), nullptr);
}

TEST(CampaignSpecification, AVerticalNoLongerConfiguredListsTheStandardFieldsAlone) {
  const VerticalRegistry verticals = VerticalRegistry::defaults();
  const json spec =
      campaign_specification(json::object(), campaign_of("retired"), nullptr, verticals);
  for (const auto& f : spec["fields"]) EXPECT_EQ(f["group"], "standard");
}

}  // namespace
}  // namespace leadflow
