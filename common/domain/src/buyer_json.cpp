// A buyer's API view (GET /v1/buyers): the configuration as the API names it, with budgets back
// in dollars and, when asked, secret header values masked.
#include <initializer_list>
#include <string_view>

#include "buyer_fields.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/buyer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json caps_to_json(const json& caps) {
  if (!caps.is_object()) return caps;
  json out = json::object();
  for (const auto& [key, v] : caps.items()) {
    static constexpr std::string_view kSuffix = "_cents";
    if (key.size() > kSuffix.size() && key.ends_with(kSuffix) && v.is_number_integer())
      out[key.substr(0, key.size() - kSuffix.size())] = cents_to_decimal(v.get<Cents>());
    else
      out[key] = v;
  }
  return out;
}

}  // namespace

bool is_secret_header(std::string_view name) {
  const std::string n = ascii_lower(name);
  for (std::string_view word : {"auth", "key", "token", "secret", "password", "passwd", "cookie",
                                "credential", "signature", "session"})
    if (n.find(word) != std::string::npos) return true;
  return false;
}

std::string mask_secret(std::string_view value) {
  if (value.size() < 12) return "****";
  return "****" + std::string(value.substr(value.size() - 4));
}

nlohmann::json buyer_to_json(const Buyer& b, bool mask_secrets) {
  json headers = json::object();
  for (const auto& [name, value] : b.headers)
    headers[name] = mask_secrets && is_secret_header(name) ? mask_secret(value) : value;

  json delivery = {
      {"mode", b.mode == DeliveryMode::kPingPost ? "ping_post" : "direct_post"},
      {"post_url", b.post_url},
      {"timeout_ms", b.timeout_ms},
      {"headers", std::move(headers)},
      {"mapping", b.mapping},
  };
  if (!b.ping_url.empty()) delivery["ping_url"] = b.ping_url;

  json pricing = {{"model", b.pricing == PricingModel::kFixed ? "fixed" : "bid"},
                  {"min_bid", cents_to_decimal(b.min_bid)}};
  if (b.pricing == PricingModel::kFixed) pricing["price"] = cents_to_decimal(b.price);
  if (b.shared_price > 0) pricing["shared_price"] = cents_to_decimal(b.shared_price);
  if (b.aged_price > 0) pricing["aged_price"] = cents_to_decimal(b.aged_price);

  json custom = json::array();
  for (const auto& r : b.custom_rules) {
    json rule = {{"field", r.field}, {"op", kOpNames[static_cast<std::size_t>(r.op)]}};
    if (!r.value.is_null()) rule["value"] = r.value;
    custom.push_back(std::move(rule));
  }

  return json{
      {"buyer_id", b.id},
      {"name", b.name},
      {"status", b.active ? "active" : "paused"},
      {"verticals", b.verticals},
      {"delivery", std::move(delivery)},
      {"pricing", std::move(pricing)},
      {"filters",
       {{"states", b.states},
        {"exclude_states", b.exclude_states},
        {"zip_prefixes", b.zip_prefixes},
        {"sources", b.sources},
        {"custom", std::move(custom)}}},
      {"schedule", b.schedule},
      {"caps", caps_to_json(b.caps)},
      {"priority", b.priority},
      {"weight", b.weight},
      {"tier", b.tier},
      {"max_concurrency", b.max_concurrency},
      {"duplicate_lookback_days", b.duplicate_lookback_days},
      {"return_window_days", b.return_window_days},
      {"max_return_rate", b.max_return_rate},
      {"accepts_aged", b.accepts_aged},
      {"visibility", {{"seller_names", b.show_seller_names}}},
      {"self_service", {{"caps", b.self_caps}, {"filters", b.self_filters}}},
      {"created_at", format_rfc3339_ms(b.created_at_ms)},
      {"updated_at", format_rfc3339_ms(b.updated_at_ms)},
  };
}

}  // namespace leadflow
