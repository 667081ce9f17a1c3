// POST /v1/buyers/{id}/test-ping: one ping of a synthetic lead to the buyer, as a worker sends
// it, answered with what came back. An outbound request on an operator's click, so it is
// limited per caller and per buyer, and bounded by the buyer's own timeout.
#include "leadflow/api/buyer_test_ping.hpp"

#include <algorithm>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// One ZIP code per state (and DC), to give a test lead a place a buyer's filters accept.
constexpr const char* kSampleZips[] = {
    "10001", "90012", "60601", "75201", "33101", "30303", "19103", "43215", "48226",
    "98101", "02108", "85001", "80202", "55401", "63101", "37201", "21201", "23219",
    "27601", "46204", "53202", "97201", "35203", "29201", "70112", "40202", "73102",
    "06103", "50309", "84101", "89101", "72201", "39201", "66603", "87102", "68102",
    "25301", "83702", "96813", "03301", "04101", "59601", "02903", "19901", "57104",
    "58102", "99501", "05401", "82001", "07102", "20001"};

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool zip_fits(const Buyer& b, std::string_view zip, std::string_view state) {
  if (state.empty()) return false;
  if (!b.states.empty() && !contains(b.states, state)) return false;
  if (contains(b.exclude_states, state)) return false;
  if (b.zip_prefixes.empty()) return true;
  return std::any_of(b.zip_prefixes.begin(), b.zip_prefixes.end(),
                     [&](const std::string& p) { return zip.substr(0, p.size()) == p; });
}

// A sample value a vertical's required field accepts.
CustomValue ping_sample_value(const VerticalField& f) {
  switch (f.type) {
    case VerticalField::Type::kNumber:
      return f.min ? *f.min : 1.0;
    case VerticalField::Type::kInteger:
      return static_cast<std::int64_t>(f.min ? *f.min : 1.0);
    case VerticalField::Type::kBoolean:
      return std::string("true");
    case VerticalField::Type::kEnum:
      return f.values.empty() ? std::string("test") : f.values.front();
    case VerticalField::Type::kString:
      break;
  }
  return std::string("test");
}

json result_json(const TestPingResult& r) {
  return {{"url", r.url},
          {"http_status", r.http_status == 0 ? json(nullptr) : json(r.http_status)},
          {"duration_ms", r.duration_ms},
          {"outcome", r.outcome},
          {"bid", r.bid ? json(cents_to_decimal(*r.bid)) : json(nullptr)},
          {"reason", r.reason.empty() ? json(nullptr) : json(r.reason)}};
}

void test_ping(IngestContext& ctx, BuyerPinger& pinger, const http::Request& req,
               http::Response& res) {
  auto key = authorise(ctx, req, res, kScopeBuyersWrite, true);
  if (!key) return;
  // An optional body: {"vertical"}, one of the buyer's (default its first).
  std::string vertical;
  if (!req.body().empty()) {
    if (!http::require_json(req, res)) return;
    auto body = http::parse_body(req, res);
    if (!body) return;
    FieldErrors errors;
    if (!body->is_object()) {
      errors.push_back({"body", "invalid_type", "must be a JSON object"});
    } else {
      for (const auto& [k, v] : body->items()) {
        if (k != "vertical") {
          errors.push_back({k, "unknown_field", "unknown field"});
        } else if (!v.is_string()) {
          errors.push_back({k, "invalid_type", "must be a string"});
        } else {
          vertical = v.get<std::string>();
        }
      }
    }
    if (!errors.empty()) return http::send_problem(res, 400, "the test ping is invalid", errors);
  }
  const auto found = ctx.accounts.get_buyer(std::string(req.match(1)));
  if (found.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(found.status, StoreStep::kRead));
  if (!found.value) return http::send_problem(res, 404, "no such buyer");
  const auto& buyer = found.value;
  if (buyer->mode == DeliveryMode::kDirectPost || buyer->ping_url.empty())
    return http::send_problem(res, 409, "direct-post buyers have no ping");
  if (vertical.empty() && !buyer->verticals.empty()) vertical = buyer->verticals.front();
  const Vertical* spec = ctx.verticals.find(vertical);
  if (!contains(buyer->verticals, vertical) || spec == nullptr)
    return http::send_problem(res, 400, "the test ping is invalid",
                              {{"vertical", "not_allowed", "not one of the buyer's verticals"}});

  // Each ping leaves this process: limited per caller and per buyer (whoever clicks).
  for (const auto& [bucket, per_minute] :
       {std::pair{"testping:caller:" + key->id, kTestPingsPerMinute},
        std::pair{"testping:buyer:" + buyer->id, kTestPingsPerBuyerPerMinute}}) {
    const RateDecision d = ctx.ip_limiter.acquire(bucket, per_minute, 0);
    if (!d.allowed) {
      res.set_header("Retry-After", std::to_string(std::max(1, d.retry_after_s)));
      return http::send_problem(res, 429, "too many test pings; retry later");
    }
  }

  const std::int64_t now = ctx.clock.now_ms();
  const Lead lead = test_ping_lead(*buyer, *spec, now);
  const std::string ping_id = "test_ping_" + new_id("", now);
  const TestPingResult r = pinger.ping(*buyer, lead, ping_id);
  log(LogLevel::kInfo, "buyer_test_ping",
      {{"buyer_id", buyer->id}, {"outcome", r.outcome}, {"http_status", r.http_status}});
  http::send_json(res, 200, {{"success", true}, {"data", result_json(r)}});
}

}  // namespace

Lead test_ping_lead(const Buyer& buyer, const Vertical& vertical, std::int64_t now_ms) {
  Lead l;
  l.id = "test_" + new_id("", now_ms);
  l.surface = Surface::kApi;
  l.first_name = "Test";
  l.last_name = "Ping";
  l.email = "test-ping@example.invalid";
  l.phone = "+12025550100";  // 555-01XX: reserved for fiction
  l.vertical = vertical.name;
  for (const auto& f : vertical.fields)
    if (f.required) l.custom_fields.emplace_back(f.name, ping_sample_value(f));
  l.source = "leadflow_test_ping";
  l.received_at_ms = now_ms;
  for (const char* zip : kSampleZips) {
    const std::string_view state = state_for_zip(zip);
    if (zip_fits(buyer, zip, state)) {
      l.zip_code = zip;
      l.state = std::string(state);
      break;
    }
  }
  if (l.zip_code.empty() && !buyer.zip_prefixes.empty()) {
    std::string zip = buyer.zip_prefixes.front().substr(0, 5);
    zip.resize(5, '0');
    l.zip_code = zip;
    l.state = std::string(state_for_zip(zip));
  }
  if (l.zip_code.empty()) {
    l.zip_code = "10001";
    l.state = "NY";
  }
  return l;
}

void register_buyer_test_ping(Routes& routes, IngestContext& ctx, BuyerPinger& pinger) {
  routes.post(
      "/v1/buyers/{id}/test-ping",
      [&ctx, &pinger](const http::Request& q, http::Response& r) { test_ping(ctx, pinger, q, r); });
}

}  // namespace leadflow
