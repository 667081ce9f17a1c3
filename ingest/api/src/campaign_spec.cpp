#include "campaign_spec.hpp"

#include <string>
#include <string_view>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/money/payout.hpp"
#include "leadflow/validation/validation.hpp"
#include "surface_b.hpp"

namespace leadflow {

namespace {

using nlohmann::json;

// What the examples use in place of the campaign key: the key itself was shown once, when the
// campaign was made, and is never read back.
constexpr std::string_view kKeyPlaceholder = "YOUR_CAMPAIGN_KEY";
constexpr std::string_view kExampleLeadId = "ld_01JBXW3Q8M4T6V2R9K5N7P0C1D";
constexpr Cents kExampleSale = 2000;  // a sale of $20.00, to show the payout rule at work

// A value the field's check accepts: the middle of its bounds, its first value, a short text.
json sample_value(const VerticalField& f) {
  const double low = f.min.value_or(f.max ? *f.max : 1);
  const double high = f.max.value_or(low);
  switch (f.type) {
    case VerticalField::Type::kInteger:
      return static_cast<std::int64_t>((low + high) / 2);
    case VerticalField::Type::kNumber:
      return (low + high) / 2;
    case VerticalField::Type::kBoolean:
      return true;
    case VerticalField::Type::kEnum:
      return f.values.empty() ? json("") : json(f.values.front());
    case VerticalField::Type::kString:
      break;
  }
  std::string text = "example";
  const auto shortest = static_cast<std::size_t>(f.min.value_or(0));
  const auto longest = static_cast<std::size_t>(f.max.value_or(64));
  while (text.size() < shortest) text += 'x';
  if (text.size() > longest) text.resize(longest);
  return text;
}

json example_request(const Vertical* vertical) {
  json body = {{"SELLER_CAMPAIGN_KEY", kKeyPlaceholder},
               {"first_name", "Ada"},
               {"last_name", "Lovelace"},
               {"email_address", "ada.lovelace@example.com"},
               {"phone_home", "(202) 555-0147"},
               {"zip_code", "20001"},
               {"source", "google"},
               {"ip_address", "203.0.113.7"},
               {"tcpa_consent", true}};
  if (vertical)
    for (const auto& f : vertical->fields) body[f.name] = sample_value(f);
  return body;
}

// An answer as the handlers send it: status, the headers a client acts on, and the body.
json captured(std::string_view when, const http::Response& res) {
  json headers = json::object();
  for (const std::string_view name :
       {"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"})
    if (res.has_header(name)) headers[std::string(name)] = std::string(res.header(name));
  return {{"when", when},
          {"status", res.status},
          {"headers", std::move(headers)},
          {"body", json::parse(res.body, nullptr, false)}};
}

json field_list(const Vertical* vertical, const VerticalRegistry& verticals) {
  json out = json::array();
  for (const StandardField& f : standard_fields(LeadShape::kCampaign)) {
    json j = {{"name", f.name},      {"required", f.required},  {"type", f.type}, {"rule", f.rule},
              {"group", "standard"}, {"values", json::array()}, {"min", nullptr}, {"max", nullptr}};
    if (f.max_length > 0) j["max_length"] = f.max_length;
    out.push_back(std::move(j));
  }
  if (!vertical) return out;
  // The vertical's fields as GET /api/v1/fields/{vertical} publishes them, its description as
  // the rule.
  json published = verticals.to_json(*vertical);
  for (json& f : published["fields"]) {
    f["rule"] = std::move(f["description"]);
    f.erase("description");
    f["group"] = vertical->name;
    out.push_back(std::move(f));
  }
  return out;
}

json example_answers(const Campaign& c, const VerticalRegistry& verticals, const json& request) {
  json out = json::array();
  const std::string lead_id(kExampleLeadId), key(kKeyPlaceholder);
  http::Response res;
  if (!c.async_mode) {
    OutcomeMessage sold{lead_id, DeliveryStatus::kDelivered, "", kExampleSale,
                        money::seller_payout(&c, nullptr, kExampleSale)};
    http::send_json(res, 200, campaign_outcome_body(sold, c.seller_id));
    out.push_back(captured("sold within the wait (price: your payout for the lead)", res));
    res = {};
    OutcomeMessage unsold{lead_id, DeliveryStatus::kUnsold, "", 0, 0};
    http::send_json(res, 200, campaign_outcome_body(unsold, c.seller_id));
    out.push_back(captured("no buyer took it", res));
    res = {};
    OutcomeMessage duplicate{lead_id, DeliveryStatus::kDuplicate, "", 0, 0};
    http::send_json(res, 200, campaign_outcome_body(duplicate, c.seller_id));
    out.push_back(captured("the same person posted again within the vertical's lookback", res));
    res = {};
  }
  res.status = 202;
  res.set_content(campaign_queued_body(lead_id, key), "application/json");
  out.push_back(captured(c.async_mode ? "accepted (this campaign always answers at once; poll "
                                        "GET /api/v1/jobs/{job_id})"
                                      : "accepted, not decided within the wait (poll "
                                        "GET /api/v1/jobs/{job_id})",
                         res));
  res = {};
  json invalid = request;
  invalid.erase("last_name");
  invalid["email_address"] = "ada.lovelace@";
  invalid["phone_home"] = "555-01";
  const ParsedLead parsed =
      parse_lead_json(invalid.dump(), LeadShape::kCampaign, verticals, c.vertical);
  send_b_invalid(res, parsed.errors);
  out.push_back(captured("a field is missing or invalid (every one is listed)", res));
  res = {};
  RateDecision over;
  over.limit = c.rate_limit_per_minute;
  over.reset_unix = 1767225660;  // 2026-01-01T00:01:00Z
  over.retry_after_s = 1;
  http::set_rate_headers(res, over);
  send_b_refusal(res, refusal_for(CampaignRefused::kRateLimited));
  out.push_back(captured("over the campaign's per-minute ceiling", res));
  res = {};
  send_campaign_unauthorized(res, kUnknownCampaignKey);
  out.push_back(captured("the key is wrong, or the campaign is paused", res));
  res = {};
  send_b_refusal(res, refusal_for(CampaignRefused::kKeyUnavailable));
  out.push_back(
      captured("our side could not take the lead now: nothing was kept; post it again", res));
  return out;
}

}  // namespace

json campaign_specification(json campaign, const Campaign& c, const Vertical* vertical,
                            const VerticalRegistry& verticals) {
  const json request = example_request(vertical);
  const ParsedLead check =
      parse_lead_json(request.dump(), LeadShape::kCampaign, verticals, c.vertical);
  json request_errors = json::array();
  for (const auto& e : check.errors)
    request_errors.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  return {
      {"campaign", std::move(campaign)},
      {"authentication",
       {{"field", "SELLER_CAMPAIGN_KEY"},
        {"how",
         "the campaign key in the JSON body's SELLER_CAMPAIGN_KEY, or in the path of the form "
         "post; it was shown once, when the campaign was made"}}},
      {"endpoints", json::array({{{"method", "POST"},
                                  {"path", "/api/v1/lead"},
                                  {"content_types", {"application/json"}},
                                  {"what", "post a lead"}},
                                 {{"method", "POST"},
                                  {"path", "/YOUR_CAMPAIGN_KEY"},
                                  {"content_types",
                                   {"application/x-www-form-urlencoded", "multipart/form-data",
                                    "application/json"}},
                                  {"what", "post a lead as a form (the same fields)"}},
                                 {{"method", "GET"},
                                  {"path", "/api/v1/jobs/{job_id}"},
                                  {"headers", {"X-Campaign-Key: YOUR_CAMPAIGN_KEY"}},
                                  {"what", "the outcome of a lead answered 202"}},
                                 {{"method", "GET"},
                                  {"path", "/api/v1/stats/YOUR_CAMPAIGN_KEY?period=today"},
                                  {"what", "the campaign's figures"}}})},
      {"fields", field_list(vertical, verticals)},
      {"example_request", request},
      {"example_request_errors", std::move(request_errors)},
      {"examples", example_answers(c, verticals, request)},
  };
}

}  // namespace leadflow
