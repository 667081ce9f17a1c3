#include "leadflow/domain/buyer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

// Buyer configuration: validation with exact paths, PUT merge, round trip, masking, URL safety.
// No network: every URL is an IP literal or "localhost" (this machine has no DNS).

namespace leadflow {
namespace {

using nlohmann::json;

constexpr const char* kPing = "https://93.184.216.34/ping";
constexpr const char* kPost = "https://93.184.216.34/post";

json minimal_body() {
  return {{"name", "Acme Insurance"},
          {"verticals", {"auto_insurance"}},
          {"delivery", {{"mode", "ping_post"}, {"ping_url", kPing}, {"post_url", kPost}}}};
}

json full_body() {
  return json::parse(R"({
    "name": "Full Buyer",
    "status": "paused",
    "verticals": ["auto_insurance", "home_insurance"],
    "delivery": {
      "mode": "ping_post",
      "ping_url": "https://93.184.216.34/ping",
      "post_url": "https://93.184.216.34:8443/post?x=1",
      "timeout_ms": 2500,
      "headers": {"Authorization": "Bearer abcdef1234567890", "X-Api-Key": "k-1234567890abcd",
                  "X-Source": "leadflow", "X-Token": "short"},
      "mapping": {
        "request": {"format": "form", "rename": {"zip_code": "zip"},
                    "constants": {"affiliate": "lf", "tier": 2}},
        "response": {"accepted": "/result/ok", "bid": "/price", "reference": "/id",
                     "reason": "/errors/0/message"}
      }
    },
    "pricing": {"model": "fixed", "price": 14.25, "min_bid": 2.5},
    "filters": {
      "states": ["ca", "TX", "CA"],
      "exclude_states": ["NY"],
      "zip_prefixes": ["021", "9"],
      "sources": ["google", "facebook"],
      "custom": [
        {"field": "age", "op": "gte", "value": 18},
        {"field": "credit", "op": "in", "value": ["good", "excellent"]},
        {"field": "homeowner", "op": "exists"},
        {"field": "tobacco", "op": "eq", "value": false}
      ]
    },
    "schedule": {"timezone": "America/New_York",
                 "hours": {"mon": [["09:00", "12:00"], ["13:00", "17:30"]],
                           "sat": [["10:00", "24:00"]]}},
    "caps": {"hourly": 10, "daily": 100, "monthly": 2000, "daily_budget": 500.5,
             "monthly_budget": 10000},
    "priority": -5,
    "weight": 3,
    "tier": 2,
    "max_concurrency": 40,
    "duplicate_lookback_days": 45,
    "max_return_rate": 0.15
  })");
}

std::string dump(const FieldErrors& errors) {
  std::string out;
  for (const auto& e : errors) out += "  " + e.field + " " + e.code + " (" + e.message + ")\n";
  return out.empty() ? "  (no errors)\n" : out;
}

bool has_error(const FieldErrors& errors, const std::string& field, const std::string& code) {
  return std::any_of(errors.begin(), errors.end(),
                     [&](const FieldError& e) { return e.field == field && e.code == code; });
}

Buyer parse_ok(const json& body, const Buyer* base = nullptr, bool allow_private = false) {
  FieldErrors errors;
  Buyer b = buyer_from_json(body, base, allow_private, errors);
  EXPECT_TRUE(errors.empty()) << dump(errors);
  return b;
}

FieldErrors parse_errors(const json& body, const Buyer* base = nullptr,
                         bool allow_private = false) {
  FieldErrors errors;
  buyer_from_json(body, base, allow_private, errors);
  return errors;
}

// The minimal body with `path` (a JSON pointer) set to `value`.
FieldErrors errors_with(const std::string& pointer, const json& value) {
  json body = minimal_body();
  body[json::json_pointer(pointer)] = value;
  return parse_errors(body);
}

#define EXPECT_FIELD_ERROR(errors, field, code)                                                    \
  EXPECT_TRUE(has_error((errors), (field), (code))) << "want " << (field) << " " << (code) << "\n" \
                                                    << dump(errors)

// Every config field of two buyers (ids and timestamps excluded).
void expect_same_config(const Buyer& a, const Buyer& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.active, b.active);
  EXPECT_EQ(a.verticals, b.verticals);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.ping_url, b.ping_url);
  EXPECT_EQ(a.post_url, b.post_url);
  EXPECT_EQ(a.timeout_ms, b.timeout_ms);
  EXPECT_EQ(a.headers, b.headers);
  EXPECT_EQ(a.mapping, b.mapping);
  EXPECT_EQ(a.pricing, b.pricing);
  EXPECT_EQ(a.price, b.price);
  EXPECT_EQ(a.min_bid, b.min_bid);
  EXPECT_EQ(a.states, b.states);
  EXPECT_EQ(a.exclude_states, b.exclude_states);
  EXPECT_EQ(a.zip_prefixes, b.zip_prefixes);
  EXPECT_EQ(a.sources, b.sources);
  ASSERT_EQ(a.custom_rules.size(), b.custom_rules.size());
  for (std::size_t i = 0; i < a.custom_rules.size(); ++i) {
    EXPECT_EQ(a.custom_rules[i].field, b.custom_rules[i].field);
    EXPECT_EQ(a.custom_rules[i].op, b.custom_rules[i].op);
    EXPECT_EQ(a.custom_rules[i].value, b.custom_rules[i].value);
  }
  EXPECT_EQ(a.schedule, b.schedule);
  EXPECT_EQ(a.caps, b.caps);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.weight, b.weight);
  EXPECT_EQ(a.tier, b.tier);
  EXPECT_EQ(a.max_concurrency, b.max_concurrency);
  EXPECT_EQ(a.duplicate_lookback_days, b.duplicate_lookback_days);
  EXPECT_EQ(a.max_return_rate, b.max_return_rate);
  EXPECT_EQ(a.show_seller_names, b.show_seller_names);
}

// ---------------------------------------------------------------------------------------------
// Create

TEST(BuyerFromJson, MinimalBodyGetsDefaults) {
  const Buyer b = parse_ok(minimal_body());
  EXPECT_EQ(b.name, "Acme Insurance");
  EXPECT_TRUE(b.active);
  EXPECT_EQ(b.verticals, std::vector<std::string>{"auto_insurance"});
  EXPECT_EQ(b.mode, DeliveryMode::kPingPost);
  EXPECT_EQ(b.ping_url, kPing);
  EXPECT_EQ(b.post_url, kPost);
  EXPECT_EQ(b.timeout_ms, 1000);
  EXPECT_TRUE(b.headers.empty());
  EXPECT_TRUE(b.mapping.is_null());
  EXPECT_EQ(b.pricing, PricingModel::kBid);
  EXPECT_EQ(b.min_bid, 0);
  EXPECT_TRUE(b.schedule.is_null());
  EXPECT_TRUE(b.caps.is_null());
  EXPECT_EQ(b.priority, 0);
  EXPECT_EQ(b.weight, 1);
  EXPECT_EQ(b.tier, 1);
  EXPECT_EQ(b.max_concurrency, 0);
  EXPECT_EQ(b.duplicate_lookback_days, 30);
  EXPECT_EQ(b.max_return_rate, 0.0);
  EXPECT_TRUE(b.id.empty());
}

TEST(BuyerFromJson, DirectPostNeedsNoPingUrl) {
  json body = minimal_body();
  body["delivery"] = {{"mode", "direct_post"}, {"post_url", kPost}};
  const Buyer b = parse_ok(body);
  EXPECT_EQ(b.mode, DeliveryMode::kDirectPost);
  EXPECT_TRUE(b.ping_url.empty());
}

TEST(BuyerFromJson, FullBodyIsNormalised) {
  const Buyer b = parse_ok(full_body());
  EXPECT_FALSE(b.active);
  EXPECT_EQ(b.timeout_ms, 2500);
  EXPECT_EQ(b.pricing, PricingModel::kFixed);
  EXPECT_EQ(b.price, 1425);
  EXPECT_EQ(b.min_bid, 250);
  EXPECT_EQ(b.states, (std::vector<std::string>{"CA", "TX"}));  // upper-cased, deduplicated
  EXPECT_EQ(b.exclude_states, std::vector<std::string>{"NY"});
  EXPECT_EQ(b.zip_prefixes, (std::vector<std::string>{"021", "9"}));
  ASSERT_EQ(b.custom_rules.size(), 4u);
  EXPECT_EQ(b.custom_rules[0].op, CustomRule::Op::kGte);
  EXPECT_EQ(b.custom_rules[0].value, 18);
  EXPECT_EQ(b.custom_rules[1].op, CustomRule::Op::kIn);
  EXPECT_EQ(b.custom_rules[2].op, CustomRule::Op::kExists);
  EXPECT_TRUE(b.custom_rules[2].value.is_null());
  EXPECT_EQ(b.headers.size(), 4u);
  EXPECT_EQ(b.mapping["request"]["format"], "form");
  EXPECT_EQ(b.mapping["response"]["bid"], "/price");
  EXPECT_EQ(b.priority, -5);
  EXPECT_EQ(b.weight, 3);
  EXPECT_EQ(b.tier, 2);
  EXPECT_EQ(b.max_concurrency, 40);
  EXPECT_EQ(b.duplicate_lookback_days, 45);
  EXPECT_DOUBLE_EQ(b.max_return_rate, 0.15);
}

TEST(BuyerFromJson, ScheduleIsStoredWithAllSevenDays) {
  const Buyer b = parse_ok(full_body());
  EXPECT_EQ(b.schedule, json::parse(R"({"timezone": "America/New_York", "hours": {
      "mon": [["09:00", "12:00"], ["13:00", "17:30"]], "tue": [], "wed": [], "thu": [],
      "fri": [], "sat": [["10:00", "24:00"]], "sun": []}})"));
}

TEST(BuyerFromJson, ASharedPriceIsMoneyOfAnyModel) {
  json body = minimal_body();
  body["pricing"] = {{"model", "bid"}, {"min_bid", 5}, {"shared_price", 4.5}};
  const Buyer b = parse_ok(body);
  EXPECT_EQ(b.shared_price, 450);
  EXPECT_EQ(buyer_to_json(b, true)["pricing"]["shared_price"], 4.5);
  body["pricing"] = {{"model", "fixed"}, {"price", 12}};
  EXPECT_EQ(parse_ok(body).shared_price, 0);  // buys the lead alone only
  EXPECT_FALSE(buyer_to_json(parse_ok(body), true)["pricing"].contains("shared_price"));
  body["pricing"] = {{"model", "fixed"}, {"price", 12}, {"shared_price", -1}};
  const FieldErrors errors = parse_errors(body);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "pricing.shared_price");
  body["pricing"]["shared_price"] = "cheap";
  EXPECT_EQ(parse_errors(body).size(), 1u);
}

TEST(BuyerFromJson, CapsStoreBudgetsInCents) {
  const Buyer b = parse_ok(full_body());
  EXPECT_EQ(b.caps, json::parse(R"({"hourly": 10, "daily": 100, "monthly": 2000,
      "daily_budget_cents": 50050, "monthly_budget_cents": 1000000})"));
}

TEST(BuyerFromJson, RequiredFieldsOnCreate) {
  const FieldErrors e = parse_errors(json::object());
  EXPECT_FIELD_ERROR(e, "name", "required");
  EXPECT_FIELD_ERROR(e, "verticals", "required");
  EXPECT_FIELD_ERROR(e, "delivery", "required");
  EXPECT_EQ(e.size(), 3u) << dump(e);
}

TEST(BuyerFromJson, BodyMustBeAnObject) {
  for (const json& body : {json::array(), json("x"), json(3), json(nullptr)}) {
    const FieldErrors e = parse_errors(body);
    ASSERT_EQ(e.size(), 1u) << body.dump();
    EXPECT_EQ(e[0].field, "body");
    EXPECT_EQ(e[0].code, "invalid_type");
  }
}

TEST(BuyerFromJson, UnknownFieldsAnywhere) {
  json body = minimal_body();
  body["colour"] = "blue";
  body["delivery"]["retries"] = 3;
  body["pricing"] = {{"model", "bid"}, {"max_bid", 5}};
  body["filters"] = {{"countries", {"US"}}};
  body["schedule"] = {{"timezone", "UTC"}, {"hours", {{"monday", json::array()}}}};
  body["caps"] = {{"yearly", 5}};
  const FieldErrors e = parse_errors(body);
  EXPECT_FIELD_ERROR(e, "colour", "unknown_field");
  EXPECT_FIELD_ERROR(e, "delivery.retries", "unknown_field");
  EXPECT_FIELD_ERROR(e, "pricing.max_bid", "unknown_field");
  EXPECT_FIELD_ERROR(e, "filters.countries", "unknown_field");
  EXPECT_FIELD_ERROR(e, "schedule.hours.monday", "unknown_field");
  EXPECT_FIELD_ERROR(e, "caps.yearly", "unknown_field");
  EXPECT_EQ(e.size(), 6u) << dump(e);
}

TEST(BuyerFromJson, ReadOnlyFieldsAreIgnored) {
  json body = minimal_body();
  body["buyer_id"] = "by_whatever";
  body["created_at"] = "2020-01-01T00:00:00.000Z";
  body["updated_at"] = "2020-01-01T00:00:00.000Z";
  const Buyer b = parse_ok(body);
  EXPECT_TRUE(b.id.empty());
  EXPECT_EQ(b.created_at_ms, 0);
}

// Ignored, but of the view's type: a wrong JSON type is a 400 like anywhere else.
TEST(BuyerFromJson, ReadOnlyFieldsKeepTheViewsType) {
  EXPECT_FIELD_ERROR(errors_with("/updated_at", 12), "updated_at", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/buyer_id", nullptr), "buyer_id", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/returns", "x"), "returns", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/health", 3), "health", "invalid_type");
  EXPECT_TRUE(errors_with("/returns", nullptr).empty());
}

TEST(BuyerFromJson, IdCannotBeSet) {
  json body = minimal_body();
  body["id"] = "by_01HXYZ";
  EXPECT_FIELD_ERROR(parse_errors(body), "id", "not_allowed");
}

TEST(BuyerFromJson, Name) {
  EXPECT_FIELD_ERROR(errors_with("/name", ""), "name", "required");
  EXPECT_FIELD_ERROR(errors_with("/name", nullptr), "name", "required");
  EXPECT_FIELD_ERROR(errors_with("/name", 5), "name", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/name", std::string(201, 'a')), "name", "too_long");
  EXPECT_FIELD_ERROR(errors_with("/name", "bad\nname"), "name", "invalid_format");
  // 200 characters of two bytes each are still 200 characters.
  std::string accented;
  for (int i = 0; i < 200; ++i) accented += "\xC3\xA9";
  EXPECT_TRUE(errors_with("/name", accented).empty());
}

TEST(BuyerFromJson, Status) {
  EXPECT_FIELD_ERROR(errors_with("/status", "stopped"), "status", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/status", true), "status", "invalid_type");
  json body = minimal_body();
  body["status"] = "paused";
  EXPECT_FALSE(parse_ok(body).active);
}

TEST(BuyerFromJson, Verticals) {
  EXPECT_FIELD_ERROR(errors_with("/verticals", json::array()), "verticals", "required");
  EXPECT_FIELD_ERROR(errors_with("/verticals", "auto_insurance"), "verticals", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/verticals", json::array({"solar", 4})), "verticals[1]",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/verticals", json::array({"solar", ""})), "verticals[1]",
                     "required");
  // Names are checked against the registry by the caller, not here.
  EXPECT_TRUE(errors_with("/verticals", json::array({"underwater_basket_weaving"})).empty());
}

TEST(BuyerFromJson, DeliveryRequiredMembers) {
  const FieldErrors e = errors_with("/delivery", json::object());
  EXPECT_FIELD_ERROR(e, "delivery.mode", "required");
  EXPECT_FIELD_ERROR(e, "delivery.post_url", "required");
  EXPECT_FIELD_ERROR(errors_with("/delivery", "https://x"), "delivery", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mode", "email"), "delivery.mode", "invalid_format");
  json body = minimal_body();
  body["delivery"].erase("ping_url");
  EXPECT_FIELD_ERROR(parse_errors(body), "delivery.ping_url", "required");
}

TEST(BuyerFromJson, DeliveryTimeout) {
  EXPECT_FIELD_ERROR(errors_with("/delivery/timeout_ms", 49), "delivery.timeout_ms",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/delivery/timeout_ms", 30001), "delivery.timeout_ms",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/delivery/timeout_ms", 100.5), "delivery.timeout_ms",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/timeout_ms", "100"), "delivery.timeout_ms",
                     "invalid_type");
  EXPECT_TRUE(errors_with("/delivery/timeout_ms", 50).empty());
  EXPECT_TRUE(errors_with("/delivery/timeout_ms", 30000).empty());
  EXPECT_TRUE(errors_with("/delivery/timeout_ms", 2000.0).empty());
}

TEST(BuyerFromJson, DeliveryUrlsSyntax) {
  EXPECT_FIELD_ERROR(errors_with("/delivery/post_url", "ftp://93.184.216.34/x"),
                     "delivery.post_url", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/post_url", "93.184.216.34/x"), "delivery.post_url",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/post_url", "https:///x"), "delivery.post_url",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/post_url", "https://93.184.216.34:99999/"),
                     "delivery.post_url", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/post_url", "https://user:pw@93.184.216.34/"),
                     "delivery.post_url", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/ping_url", "https://93.184.216.34/a b"),
                     "delivery.ping_url", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/ping_url", 7), "delivery.ping_url", "invalid_type");
  EXPECT_TRUE(errors_with("/delivery/post_url", "HTTP://93.184.216.34:8080/p?q=1#f").empty());
}

TEST(BuyerFromJson, PrivateUrlsRefusedUnlessAllowed) {
  json body = minimal_body();
  body["delivery"]["ping_url"] = "http://127.0.0.1:9000/ping";
  body["delivery"]["post_url"] = "http://localhost:9000/post";
  const FieldErrors e = parse_errors(body);
  EXPECT_FIELD_ERROR(e, "delivery.ping_url", "not_allowed");
  EXPECT_FIELD_ERROR(e, "delivery.post_url", "not_allowed");
  const Buyer b = parse_ok(body, nullptr, /*allow_private=*/true);
  EXPECT_EQ(b.ping_url, "http://127.0.0.1:9000/ping");
  // Allowing private addresses does not allow other schemes.
  body["delivery"]["post_url"] = "file:///etc/passwd";
  EXPECT_FIELD_ERROR(parse_errors(body, nullptr, true), "delivery.post_url", "invalid_format");
}

TEST(BuyerFromJson, Headers) {
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", json::array()), "delivery.headers",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"X-Api-Key", 5}}),
                     "delivery.headers.X-Api-Key", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"X-Api-Key", "a\r\nX-Evil: 1"}}),
                     "delivery.headers.X-Api-Key", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"X Api Key", "v"}}),
                     "delivery.headers.X Api Key", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"X-Bad:", "v"}}),
                     "delivery.headers.X-Bad:", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"Content-Length", "5"}}),
                     "delivery.headers.Content-Length", "not_allowed");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"idempotency-key", "x"}}),
                     "delivery.headers.idempotency-key", "not_allowed");
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", {{"X-A", "1"}, {"x-a", "2"}}),
                     "delivery.headers.x-a", "invalid_format");
  json many = json::object();
  for (int i = 0; i < 21; ++i) many["X-H" + std::to_string(i)] = "v";
  EXPECT_FIELD_ERROR(errors_with("/delivery/headers", many), "delivery.headers", "too_long");
  many.erase("X-H0");
  EXPECT_TRUE(errors_with("/delivery/headers", many).empty());
}

TEST(BuyerFromJson, Mapping) {
  EXPECT_TRUE(errors_with("/delivery/mapping", nullptr).empty());
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping", "json"), "delivery.mapping", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/request", {{"format", "xml"}}),
                     "delivery.mapping.request.format", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/request", {{"rename", {{"zip_code", 5}}}}),
                     "delivery.mapping.request.rename.zip_code", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/request", {{"constants", {{"a", {1, 2}}}}}),
                     "delivery.mapping.request.constants.a", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/request", {{"method", "GET"}}),
                     "delivery.mapping.request.method", "unknown_field");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/response", {{"accepted", "result.ok"}}),
                     "delivery.mapping.response.accepted", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/response", {{"bid", "/a~2b"}}),
                     "delivery.mapping.response.bid", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/response", {{"bid", 3}}),
                     "delivery.mapping.response.bid", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping/response", {{"status", "/s"}}),
                     "delivery.mapping.response.status", "unknown_field");
  EXPECT_FIELD_ERROR(errors_with("/delivery/mapping", {{"extra", 1}}), "delivery.mapping.extra",
                     "unknown_field");
}

TEST(BuyerFromJson, Pricing) {
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"price", 5}}), "pricing.model", "required");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "auction"}}), "pricing.model",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "fixed"}}), "pricing.price", "required");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "fixed"}, {"price", 0}}), "pricing.price",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "fixed"}, {"price", -3}}), "pricing.price",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "fixed"}, {"price", 2000000}}),
                     "pricing.price", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "fixed"}, {"price", "14.25"}}),
                     "pricing.price", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "bid"}, {"price", 3}}), "pricing.price",
                     "not_allowed");
  EXPECT_FIELD_ERROR(errors_with("/pricing", {{"model", "bid"}, {"min_bid", -0.01}}),
                     "pricing.min_bid", "out_of_range");
  json body = minimal_body();
  body["pricing"] = {{"model", "bid"}, {"min_bid", 0.1 + 0.2}};
  EXPECT_EQ(parse_ok(body).min_bid, 30);
  body["pricing"] = {{"model", "fixed"}, {"price", 19.99}};
  EXPECT_EQ(parse_ok(body).price, 1999);
}

TEST(BuyerFromJson, Filters) {
  EXPECT_FIELD_ERROR(errors_with("/filters", "CA"), "filters", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/filters/states", {"CA", "XX"}), "filters.states[1]",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/filters/states", {"CAL"}), "filters.states[0]",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/filters/states", "CA"), "filters.states", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/filters/exclude_states", {1}), "filters.exclude_states[0]",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/filters/zip_prefixes", {"021", "123456"}),
                     "filters.zip_prefixes[1]", "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/filters/zip_prefixes", {"", "1a"}), "filters.zip_prefixes[0]",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/filters/zip_prefixes", {"", "1a"}), "filters.zip_prefixes[1]",
                     "invalid_format");
  EXPECT_FIELD_ERROR(errors_with("/filters/zip_prefixes", {21}), "filters.zip_prefixes[0]",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/filters/sources", {"ok", 3}), "filters.sources[1]",
                     "invalid_type");
  EXPECT_TRUE(errors_with("/filters", {{"states", {"pr", "dc"}}}).empty());
}

TEST(BuyerFromJson, CustomRules) {
  const json rules = json::parse(R"([
    {"field": "age", "op": "gte", "value": 18},
    {"field": "age", "op": "between", "value": [1, 2]},
    {"field": "credit", "op": "in", "value": "good"},
    {"field": "credit", "op": "gt", "value": "700"},
    {"op": "eq", "value": 1},
    {"field": "x", "op": "eq"},
    {"field": "x", "op": "nin", "value": []},
    {"field": "x", "op": "exists", "value": 3},
    {"field": "x", "op": "eq", "value": {"a": 1}},
    {"field": "x", "op": "in", "value": [1, [2]]},
    "rule",
    {"field": "x", "op": "eq", "value": 1, "negate": true}
  ])");
  const FieldErrors e = errors_with("/filters/custom", rules);
  EXPECT_FIELD_ERROR(e, "filters.custom[1].op", "invalid_format");
  EXPECT_FIELD_ERROR(e, "filters.custom[2].value", "invalid_type");
  EXPECT_FIELD_ERROR(e, "filters.custom[3].value", "invalid_type");
  EXPECT_FIELD_ERROR(e, "filters.custom[4].field", "required");
  EXPECT_FIELD_ERROR(e, "filters.custom[5].value", "required");
  EXPECT_FIELD_ERROR(e, "filters.custom[6].value", "required");
  EXPECT_FIELD_ERROR(e, "filters.custom[7].value", "invalid_type");
  EXPECT_FIELD_ERROR(e, "filters.custom[8].value", "invalid_type");
  EXPECT_FIELD_ERROR(e, "filters.custom[9].value[1]", "invalid_type");
  EXPECT_FIELD_ERROR(e, "filters.custom[10]", "invalid_type");
  EXPECT_FIELD_ERROR(e, "filters.custom[11].negate", "unknown_field");
  EXPECT_EQ(e.size(), 11u) << dump(e);  // rule 0 is valid
}

TEST(BuyerFromJson, Schedule) {
  EXPECT_TRUE(errors_with("/schedule", nullptr).empty());
  EXPECT_FIELD_ERROR(errors_with("/schedule", {{"hours", json::object()}}), "schedule.timezone",
                     "required");
  EXPECT_FIELD_ERROR(errors_with("/schedule", {{"timezone", "UTC"}}), "schedule.hours", "required");
  const json hours = json::parse(R"({
    "mon": [["17:00", "09:00"]],
    "tue": [["09:00", "17:00"], ["9:00", "10:00"]],
    "wed": [["09:00"]],
    "thu": [["24:00", "24:00"]],
    "fri": "09:00-17:00",
    "sat": [["09:60", "10:00"]],
    "sun": [["00:00", "24:00"]]
  })");
  const FieldErrors e = errors_with("/schedule", {{"timezone", "UTC"}, {"hours", hours}});
  EXPECT_FIELD_ERROR(e, "schedule.hours.mon[0]", "invalid_format");
  EXPECT_FIELD_ERROR(e, "schedule.hours.tue[1]", "invalid_format");
  EXPECT_FIELD_ERROR(e, "schedule.hours.wed[0]", "invalid_format");
  EXPECT_FIELD_ERROR(e, "schedule.hours.thu[0]", "invalid_format");
  EXPECT_FIELD_ERROR(e, "schedule.hours.fri", "invalid_type");
  EXPECT_FIELD_ERROR(e, "schedule.hours.sat[0]", "invalid_format");
  EXPECT_EQ(e.size(), 6u) << dump(e);  // tue[0] and sun are fine
}

TEST(BuyerFromJson, ScheduleTimezone) {
  auto tz_errors = [](const json& tz) {
    // Built step by step: {{"09:00", "17:00"}} in a braced list would read as an object.
    json schedule = {{"timezone", tz}};
    schedule["hours"]["mon"] = json::array({json::array({"09:00", "17:00"})});
    return errors_with("/schedule", schedule);
  };
  for (const char* good :
       {"America/New_York", "UTC", "Europe/London", "Etc/GMT+5", "America/Argentina/Buenos_Aires"})
    EXPECT_TRUE(tz_errors(good).empty()) << good << "\n" << dump(tz_errors(good));
  for (const char* bad :
       {"Mars/Olympus", "America", "America/", "../../../etc/passwd", "America/../UTC",
        "/etc/passwd", "zone.tab", "leapseconds", "localtime", "right/UTC", "utc\n", ""})
    EXPECT_FALSE(tz_errors(bad).empty()) << "accepted " << bad;
  EXPECT_FIELD_ERROR(tz_errors("Mars/Olympus"), "schedule.timezone", "invalid_format");
  EXPECT_FIELD_ERROR(tz_errors(5), "schedule.timezone", "invalid_type");
}

TEST(BuyerFromJson, Caps) {
  EXPECT_TRUE(errors_with("/caps", nullptr).empty());
  EXPECT_FIELD_ERROR(errors_with("/caps", {{"daily", -1}}), "caps.daily", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/caps", {{"hourly", 1.5}}), "caps.hourly", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/caps", {{"weekly", "10"}}), "caps.weekly", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/caps", {{"daily_budget", -5}}), "caps.daily_budget",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/caps", {{"monthly_budget", "100"}}), "caps.monthly_budget",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/caps", 5), "caps", "invalid_type");
  json body = minimal_body();
  body["caps"] = {{"daily", 0}, {"daily_budget", 0}};
  EXPECT_EQ(parse_ok(body).caps, json::parse(R"({"daily": 0, "daily_budget_cents": 0})"));
}

TEST(BuyerFromJson, Numbers) {
  EXPECT_FIELD_ERROR(errors_with("/priority", 1001), "priority", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/priority", -1001), "priority", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/priority", "1"), "priority", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/weight", 0), "weight", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/weight", 1001), "weight", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/duplicate_lookback_days", 366), "duplicate_lookback_days",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/duplicate_lookback_days", -1), "duplicate_lookback_days",
                     "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/max_return_rate", 1.01), "max_return_rate", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/max_return_rate", -0.1), "max_return_rate", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/max_return_rate", "0.1"), "max_return_rate", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/priority", 18446744073709551615ull), "priority", "out_of_range");
  EXPECT_TRUE(errors_with("/priority", -1000).empty());
  EXPECT_TRUE(errors_with("/max_return_rate", 1).empty());
  EXPECT_TRUE(errors_with("/duplicate_lookback_days", 0).empty());
  EXPECT_FIELD_ERROR(errors_with("/tier", 0), "tier", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/tier", 11), "tier", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/tier", "1"), "tier", "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/max_concurrency", -1), "max_concurrency", "out_of_range");
  EXPECT_FIELD_ERROR(errors_with("/max_concurrency", 100001), "max_concurrency", "out_of_range");
  EXPECT_TRUE(errors_with("/tier", 10).empty());
  EXPECT_TRUE(errors_with("/max_concurrency", 0).empty());
}

TEST(BuyerFromJson, EveryErrorIsReportedTogether) {
  const json body = json::parse(R"({
    "name": "",
    "status": "on",
    "verticals": [],
    "delivery": {"mode": "ping_post", "post_url": "gopher://x", "timeout_ms": 10,
                 "headers": {"X-Api-Key": "a\nb"}},
    "pricing": {"model": "fixed", "price": 0},
    "filters": {"states": ["ZZ"], "custom": [{"field": "a", "op": "gt", "value": 1},
                                            {"field": "b", "op": "like", "value": 1},
                                            {"field": "c", "op": "eq", "value": 1}]},
    "schedule": {"timezone": "Nowhere/City", "hours": {"mon": [["10:00", "09:00"]]}},
    "caps": {"daily": -1},
    "priority": 5000,
    "weight": 0,
    "duplicate_lookback_days": 400,
    "max_return_rate": 2,
    "extra": true
  })");
  const FieldErrors e = parse_errors(body);
  for (const auto& [field, code] : std::vector<std::pair<std::string, std::string>>{
           {"name", "required"},
           {"status", "invalid_format"},
           {"verticals", "required"},
           {"delivery.ping_url", "required"},
           {"delivery.post_url", "invalid_format"},
           {"delivery.timeout_ms", "out_of_range"},
           {"delivery.headers.X-Api-Key", "invalid_format"},
           {"pricing.price", "out_of_range"},
           {"filters.states[0]", "invalid_format"},
           {"filters.custom[1].op", "invalid_format"},
           {"schedule.timezone", "invalid_format"},
           {"schedule.hours.mon[0]", "invalid_format"},
           {"caps.daily", "out_of_range"},
           {"priority", "out_of_range"},
           {"weight", "out_of_range"},
           {"duplicate_lookback_days", "out_of_range"},
           {"max_return_rate", "out_of_range"},
           {"extra", "unknown_field"},
       })
    EXPECT_FIELD_ERROR(e, field, code);
  EXPECT_EQ(e.size(), 18u) << dump(e);
}

// Hostile input never throws: every node of a full body replaced by every JSON type.
TEST(BuyerFromJson, NeverThrowsOnWrongTypes) {
  const json full = full_body();
  std::vector<std::string> pointers;
  const json flat = full.flatten();
  for (const auto& [leaf, v] : flat.items()) {
    std::string p = leaf;
    while (!p.empty()) {  // the leaf and every enclosing node
      pointers.push_back(p);
      p = p.substr(0, p.rfind('/'));
    }
  }
  const std::vector<json> values = {nullptr,
                                    true,
                                    0,
                                    -1.5,
                                    1e300,
                                    18446744073709551615ull,
                                    "",
                                    "\x01",
                                    json::array(),
                                    json::object(),
                                    json::array({json::array()}),
                                    json::parse(R"({"a": {"b": [1, "x", null]}})")};
  const Buyer base = parse_ok(full);
  std::size_t cases = 0;
  for (const auto& p : pointers) {
    for (const auto& value : values) {
      json body = full;
      body[json::json_pointer(p)] = value;
      FieldErrors errors;
      EXPECT_NO_THROW(buyer_from_json(body, nullptr, false, errors)) << p << " = " << value.dump();
      EXPECT_NO_THROW(buyer_from_json(body, &base, true, errors)) << p << " = " << value.dump();
      ++cases;
    }
  }
  EXPECT_GT(cases, 500u);
}

// ---------------------------------------------------------------------------------------------
// PUT

Buyer stored_buyer() {
  Buyer b = parse_ok(full_body());
  b.id = "by_01J0000000000000000000000A";
  b.created_at_ms = 1'700'000'000'000;
  b.updated_at_ms = 1'700'000'100'000;
  return b;
}

TEST(BuyerPut, NamedFieldsReplaceOthersKept) {
  const Buyer base = stored_buyer();
  const Buyer b = parse_ok({{"name", "Renamed"}, {"weight", 7}}, &base);
  EXPECT_EQ(b.name, "Renamed");
  EXPECT_EQ(b.weight, 7);
  EXPECT_EQ(b.id, base.id);
  EXPECT_EQ(b.created_at_ms, base.created_at_ms);
  Buyer expected = base;
  expected.name = "Renamed";
  expected.weight = 7;
  expect_same_config(b, expected);
}

TEST(BuyerPut, EmptyBodyKeepsEverything) {
  const Buyer base = stored_buyer();
  expect_same_config(parse_ok(json::object(), &base), base);
}

TEST(BuyerPut, NamedObjectReplacesTheWholeObject) {
  const Buyer base = stored_buyer();
  // Only post_url and mode named inside delivery: timeout, headers, mapping and ping_url reset.
  const Buyer b = parse_ok({{"delivery", {{"mode", "direct_post"}, {"post_url", kPost}}}}, &base);
  EXPECT_EQ(b.mode, DeliveryMode::kDirectPost);
  EXPECT_TRUE(b.ping_url.empty());
  EXPECT_EQ(b.timeout_ms, 1000);
  EXPECT_TRUE(b.headers.empty());
  EXPECT_TRUE(b.mapping.is_null());
  EXPECT_EQ(b.price, base.price);  // pricing not named: kept

  const Buyer f = parse_ok({{"filters", {{"sources", {"tv"}}}}}, &base);
  EXPECT_TRUE(f.states.empty());
  EXPECT_TRUE(f.custom_rules.empty());
  EXPECT_EQ(f.sources, std::vector<std::string>{"tv"});
}

TEST(BuyerPut, NullClearsOptionalObjectsButNotRequiredOnes) {
  const Buyer base = stored_buyer();
  const Buyer b = parse_ok({{"schedule", nullptr}, {"caps", nullptr}, {"filters", nullptr}}, &base);
  EXPECT_TRUE(b.schedule.is_null());
  EXPECT_TRUE(b.caps.is_null());
  EXPECT_TRUE(b.states.empty());
  const FieldErrors e =
      parse_errors({{"name", nullptr}, {"verticals", nullptr}, {"delivery", nullptr}}, &base);
  EXPECT_FIELD_ERROR(e, "name", "required");
  EXPECT_FIELD_ERROR(e, "verticals", "required");
  EXPECT_FIELD_ERROR(e, "delivery", "required");
}

TEST(BuyerPut, IdMayBeRepeatedButNotChanged) {
  const Buyer base = stored_buyer();
  EXPECT_TRUE(parse_errors({{"id", base.id}}, &base).empty());
  EXPECT_FIELD_ERROR(parse_errors({{"id", "by_other"}}, &base), "id", "not_allowed");
}

TEST(BuyerPut, RequiredFieldsAreNotRequiredAgain) {
  const Buyer base = stored_buyer();
  EXPECT_TRUE(parse_errors({{"status", "active"}}, &base).empty());
}

TEST(BuyerPut, MaskedSecretSentBackKeepsTheStoredValue) {
  const Buyer base = stored_buyer();
  json view = buyer_to_json(base, /*mask_secrets=*/true);
  view["delivery"]["timeout_ms"] = 3000;
  const Buyer b = parse_ok({{"delivery", view["delivery"]}}, &base);
  EXPECT_EQ(b.headers, base.headers);
  EXPECT_EQ(b.timeout_ms, 3000);
  // A masked value that matches nothing is refused rather than stored as the secret.
  json delivery = view["delivery"];
  delivery["headers"]["Authorization"] = "****zzzz";
  EXPECT_FIELD_ERROR(parse_errors({{"delivery", delivery}}, &base),
                     "delivery.headers.Authorization", "invalid_format");
  EXPECT_FIELD_ERROR(
      parse_errors(json{{"name", "x"}, {"verticals", {"solar"}}, {"delivery", delivery}}),
      "delivery.headers.Authorization", "invalid_format");
}

// ---------------------------------------------------------------------------------------------
// Serialise

TEST(BuyerToJson, RoundTripsExactly) {
  const Buyer original = stored_buyer();
  const json j = buyer_to_json(original, false);
  FieldErrors errors;
  const Buyer again = buyer_from_json(j, nullptr, true, errors);
  ASSERT_TRUE(errors.empty()) << dump(errors) << j.dump(2);
  expect_same_config(again, original);
  // And the view of the re-parsed buyer is the same document.
  Buyer with_ids = again;
  with_ids.id = original.id;
  with_ids.created_at_ms = original.created_at_ms;
  with_ids.updated_at_ms = original.updated_at_ms;
  EXPECT_EQ(buyer_to_json(with_ids, false), j);
}

TEST(BuyerVisibility, SellerNamesIsAValidatedChoiceThatDefaultsToSourceCodes) {
  EXPECT_FALSE(parse_ok(minimal_body()).show_seller_names);
  json body = minimal_body();
  body["visibility"] = {{"seller_names", true}};
  const Buyer named = parse_ok(body);
  EXPECT_TRUE(named.show_seller_names);
  EXPECT_EQ(buyer_to_json(named, true)["visibility"], json({{"seller_names", true}}));
  // A PUT that does not name it keeps it; null turns it back to the default.
  EXPECT_TRUE(parse_ok({{"status", "paused"}}, &named).show_seller_names);
  EXPECT_FALSE(parse_ok({{"visibility", nullptr}}, &named).show_seller_names);
  EXPECT_FIELD_ERROR(errors_with("/visibility/seller_names", "yes"), "visibility.seller_names",
                     "invalid_type");
  EXPECT_FIELD_ERROR(errors_with("/visibility/payouts", true), "visibility.payouts",
                     "unknown_field");
  EXPECT_FIELD_ERROR(errors_with("/visibility", 1), "visibility", "invalid_type");
}

TEST(BuyerToJson, MinimalRoundTrip) {
  const Buyer original = parse_ok(minimal_body());
  FieldErrors errors;
  const Buyer again = buyer_from_json(buyer_to_json(original, false), nullptr, true, errors);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  expect_same_config(again, original);
}

TEST(BuyerToJson, Shape) {
  const json j = buyer_to_json(stored_buyer(), false);
  EXPECT_EQ(j["buyer_id"], "by_01J0000000000000000000000A");
  EXPECT_EQ(j["created_at"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(j["updated_at"], "2023-11-14T22:15:00.000Z");
  EXPECT_EQ(j["status"], "paused");
  EXPECT_EQ(j["pricing"]["price"], 14.25);
  EXPECT_EQ(j["pricing"]["min_bid"], 2.5);
  EXPECT_EQ(j["pricing"]["price"].dump(), "14.25");
  EXPECT_EQ(j["caps"]["daily_budget"], 500.5);
  EXPECT_EQ(j["caps"]["monthly_budget"], 10000.0);
  EXPECT_FALSE(j["caps"].contains("daily_budget_cents"));
  EXPECT_EQ(j["delivery"]["headers"]["Authorization"], "Bearer abcdef1234567890");
  EXPECT_EQ(j["filters"]["custom"][2], json::parse(R"({"field": "homeowner", "op": "exists"})"));
  EXPECT_EQ(j["schedule"]["timezone"], "America/New_York");
  EXPECT_EQ(j["tier"], 2);
  EXPECT_EQ(j["max_concurrency"], 40);
}

TEST(BuyerToJson, StoredBuyersWithoutTheNewerFieldsReadBackWithDefaults) {
  // Buyers saved before tier and max_concurrency existed have documents without them.
  json doc = buyer_to_json(stored_buyer(), false);
  doc.erase("tier");
  doc.erase("max_concurrency");
  FieldErrors errors;
  const Buyer b = buyer_from_json(doc, nullptr, true, errors);
  EXPECT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(b.tier, 1);
  EXPECT_EQ(b.max_concurrency, 0);
}

TEST(BuyerToJson, BidBuyerHasNoPrice) {
  const json j = buyer_to_json(parse_ok(minimal_body()), false);
  EXPECT_EQ(j["pricing"], json::parse(R"({"model": "bid", "min_bid": 0.0})"));
  EXPECT_TRUE(j["schedule"].is_null());
  EXPECT_TRUE(j["caps"].is_null());
  EXPECT_TRUE(j["delivery"]["mapping"].is_null());
}

TEST(BuyerToJson, MasksSecretHeaders) {
  Buyer b = parse_ok(minimal_body());
  b.headers = {{"Authorization", "Bearer abcdef1234567890"},
               {"X-Api-Key", "k-1234567890abcd"},
               {"X-Token", "short"},
               {"Cookie", "session=0123456789abcdef"},
               {"X-Client-Secret", "supersecretvalue"},
               {"X-Password", "hunter2hunter2"},
               {"X-Source", "leadflow-demo-source"}};
  const json h = buyer_to_json(b, true)["delivery"]["headers"];
  EXPECT_EQ(h["Authorization"], "****7890");
  EXPECT_EQ(h["X-Api-Key"], "****abcd");
  EXPECT_EQ(h["X-Token"], "****");
  EXPECT_EQ(h["Cookie"], "****cdef");
  EXPECT_EQ(h["X-Client-Secret"], "****alue");
  EXPECT_EQ(h["X-Password"], "****ter2");
  EXPECT_EQ(h["X-Source"], "leadflow-demo-source");
  const json clear = buyer_to_json(b, false)["delivery"]["headers"];
  EXPECT_EQ(clear["Authorization"], "Bearer abcdef1234567890");
}

// ---------------------------------------------------------------------------------------------
// Outbound URL safety

TEST(IsPublicHttpUrl, RefusesNonPublicAddresses) {
  for (const char* url :
       {"http://127.0.0.1/", "http://127.8.9.10:8080/x", "http://[::1]/", "http://[::1]:8443/p",
        "http://10.1.2.3/", "http://172.20.0.1/", "http://172.16.0.1/", "http://172.31.255.255/",
        "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/",
        "http://100.127.255.254/", "http://0.0.0.0/", "http://0.1.2.3/", "http://[::]/",
        "http://[::ffff:127.0.0.1]/", "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:169.254.169.254]/", "http://[::127.0.0.1]/", "http://[64:ff9b::a00:1]/",
        "http://[2002:7f00:1::]/", "http://[fc00::1]/", "http://[fd12:3456::1]/",
        "http://[fe80::1]/", "http://[ff02::1]/", "http://224.0.0.1/", "http://255.255.255.255/",
        "http://localhost/", "http://LOCALHOST:80/", "http://localhost./", "http://api.localhost/",
        "http://metadata.google.internal/",
        // Numeric forms the resolver reads as 127.0.0.1: judged by the resolved address.
        "http://2130706433/", "http://127.1/", "http://0x7f000001/"}) {
    std::string why;
    EXPECT_FALSE(is_public_http_url(url, &why)) << url;
    EXPECT_FALSE(why.empty()) << url;
  }
}

TEST(IsPublicHttpUrl, RefusesBadSyntax) {
  for (const char* url : {"ftp://x/",
                          "ftp://93.184.216.34/",
                          "file:///etc/passwd",
                          "http://user:pw@1.2.3.4/",
                          "http://user@93.184.216.34/",
                          "http://93.184.216.34@127.0.0.1/",
                          "93.184.216.34",
                          "http://",
                          "http:///path",
                          "http://[::1/",
                          "http://[fe80::1%25eth0]/",
                          "http://93.184.216.34:0/",
                          "http://93.184.216.34:65536/",
                          "http://93.184.216.34:/",
                          "http://93.184.216.34:8o/",
                          "http://93.184.216.34 /",
                          "http://93.184.216.34\\@127.0.0.1/",
                          "http://exa%6dple.com/",
                          "http://a..b/",
                          "javascript:alert(1)",
                          ""}) {
    std::string why;
    EXPECT_FALSE(is_public_http_url(url, &why)) << url;
    EXPECT_FALSE(why.empty()) << url;
  }
  std::string why;
  is_public_http_url("http://user:pw@1.2.3.4/", &why);
  EXPECT_NE(why.find("credentials"), std::string::npos) << why;
  is_public_http_url("ftp://x", &why);
  EXPECT_NE(why.find("scheme"), std::string::npos) << why;
}

TEST(IsPublicHttpUrl, AcceptsPublicLiterals) {
  for (const char* url :
       {"http://93.184.216.34/", "https://93.184.216.34:8443/post?a=1#frag",
        "HTTPS://93.184.216.34", "https://[2606:2800:220:1:248:1893:25c8:1946]/",
        "http://[2606:2800:220:1:248:1893:25c8:1946]:8080/x", "http://[::ffff:93.184.216.34]/",
        "http://8.8.8.8/", "http://172.32.0.1/", "http://100.128.0.1/", "http://192.169.0.1/"}) {
    std::string why = "unset";
    EXPECT_TRUE(is_public_http_url(url, &why)) << url << ": " << why;
    EXPECT_TRUE(why.empty()) << url;
  }
  EXPECT_TRUE(is_public_http_url("http://93.184.216.34/", nullptr));
  EXPECT_FALSE(is_public_http_url("http://127.0.0.1/", nullptr));
}

TEST(IsPublicHttpUrl, ExplainsWhy) {
  std::string why;
  EXPECT_FALSE(is_public_http_url("http://169.254.169.254/", &why));
  EXPECT_NE(why.find("link-local"), std::string::npos) << why;
  EXPECT_FALSE(is_public_http_url("http://[::ffff:127.0.0.1]/", &why));
  EXPECT_NE(why.find("loopback"), std::string::npos) << why;
  EXPECT_FALSE(is_public_http_url("http://10.0.0.1/", &why));
  EXPECT_NE(why.find("private"), std::string::npos) << why;
}

}  // namespace
}  // namespace leadflow
