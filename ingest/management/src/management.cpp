#include "leadflow/management/management.hpp"

#include <cmath>

#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/text.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

void unknown_fields(const json& body, std::initializer_list<const char*> allowed,
                    FieldErrors& errors) {
  for (const auto& [k, v] : body.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) errors.push_back({k, "unknown_field", "unknown field"});
  }
}

// Names and ids are text a person reads in a list, a log or a terminal: 1 to `max` characters
// (code points, so any script counts as a person would), and no control characters (C0, DEL,
// C1: a NUL, a newline or an escape sequence could cut a record short, forge a log line or
// repaint a terminal).
constexpr std::size_t kMaxName = 200;

bool take_string(const json& body, const char* name, std::size_t max, bool required,
                 std::string& out, FieldErrors& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) {
    if (required) errors.push_back({name, "required", "is required"});
    return false;
  }
  if (!it->is_string()) {
    errors.push_back({name, "invalid_type", "must be a string"});
    return false;
  }
  out = it->get<std::string>();
  const TextInfo text = inspect_text(out, false);
  if (text.problem != TextProblem::kNone) {
    errors.push_back({name, "invalid_format",
                      text.problem == TextProblem::kControl ? "must not contain control characters"
                                                            : "must be valid UTF-8"});
    return false;
  }
  if (out.empty() || text.chars > max) {
    errors.push_back({name, out.empty() ? "required" : "too_long",
                      "must be 1 to " + std::to_string(max) + " characters"});
    return false;
  }
  return true;
}

bool take_int(const json& body, const char* name, int min, int max, int& out, FieldErrors& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_number_integer()) {
    errors.push_back({name, "invalid_type", "must be an integer"});
    return false;
  }
  if (it->get<std::int64_t>() < min || it->get<std::int64_t>() > max) {
    errors.push_back(
        {name, "out_of_range",
         "must be an integer from " + std::to_string(min) + " to " + std::to_string(max)});
    return false;
  }
  out = it->get<int>();
  return true;
}

// "status": "active" | "paused", when present.
void take_status(const json& body, bool& active, FieldErrors& errors) {
  auto it = body.find("status");
  if (it == body.end()) return;
  if (*it == "active")
    active = true;
  else if (*it == "paused")
    active = false;
  else
    errors.push_back({"status", "not_allowed", "must be active or paused"});
}

std::string hint_of(const std::string& secret) { return secret.substr(0, 8) + "…"; }

}  // namespace

namespace {
// "payout": {"model": "revshare" (percent) | "fixed" (dollars), "value"}, into `fixed` and
// `value` (basis points or cents); left as they are when absent.
void take_payout(const json& body, bool& fixed, std::int64_t& value, FieldErrors& errors) {
  const auto it = body.find("payout");
  if (it == body.end()) return;
  if (!it->is_object()) {
    errors.push_back({"payout", "invalid_type", "must be an object"});
    return;
  }
  // Absent means revshare; anything but one of the two strings is refused (null included: a
  // model named and left empty is a mistake, not a choice).
  const auto model_it = it->find("model");
  const std::string model = model_it == it->end()   ? std::string("revshare")
                            : model_it->is_string() ? model_it->get<std::string>()
                                                    : std::string();
  const auto v = it->find("value");
  if (model != "revshare" && model != "fixed") {
    errors.push_back({"payout.model", "not_allowed", "must be revshare or fixed"});
  } else if (v == it->end() || !v->is_number()) {
    errors.push_back({"payout.value", "required", "must be a number"});
  } else if (model == "revshare") {
    const double pct = v->get<double>();
    if (pct < 0 || pct > 100)
      errors.push_back({"payout.value", "out_of_range", "percent from 0 to 100"});
    fixed = false;
    value = static_cast<std::int64_t>(std::llround(pct * 100));
  } else {
    auto cents = cents_from_decimal(v->get<double>());
    if (!cents) errors.push_back({"payout.value", "out_of_range", "a price in dollars"});
    fixed = true;
    value = cents.value_or(0);
  }
  for (const auto& [k, unused] : it->items())
    if (k != "model" && k != "value")
      errors.push_back({"payout." + k, "unknown_field", "unknown field"});
}
}  // namespace

Management::Created Management::create_seller(const json& body) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body, {"name", "status", "payout"}, out.errors);
  Seller s;
  take_string(body, "name", kMaxName, true, s.name, out.errors);
  take_status(body, s.active, out.errors);
  take_payout(body, s.payout_fixed, s.payout_value, out.errors);
  if (!out.errors.empty()) return out;
  s.id = new_id(kSellerPrefix);
  s.created_at_ms = clock_.now_ms();
  out.status = store_.insert_seller(s);
  out.body = seller_to_json(s);
  return out;
}

Management::Created Management::update_seller(const std::string& id, const json& body) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  // Read-only fields of the view may be sent back as they were read.
  unknown_fields(body, {"name", "status", "payout", "seller_id", "created_at"}, out.errors);
  auto s = store_.get_seller(id);
  if (!s) {
    out.status = StoreStatus::kNotFound;
    return out;
  }
  if (body.contains("name")) take_string(body, "name", kMaxName, true, s->name, out.errors);
  take_status(body, s->active, out.errors);
  take_payout(body, s->payout_fixed, s->payout_value, out.errors);
  if (!out.errors.empty()) return out;
  out.status = store_.update_seller(*s);
  out.body = seller_to_json(*s);
  return out;
}

Management::Created Management::create_campaign(const json& body) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body,
                 {"seller_id", "name", "vertical", "status", "mode", "sync_timeout_ms",
                  "rate_limit_per_minute", "payout"},
                 out.errors);
  Campaign c;
  if (take_string(body, "seller_id", 64, true, c.seller_id, out.errors) &&
      !store_.get_seller(c.seller_id))
    out.errors.push_back({"seller_id", "not_found", "no such seller"});
  take_string(body, "name", kMaxName, true, c.name, out.errors);
  if (take_string(body, "vertical", 64, true, c.vertical, out.errors) &&
      !verticals_.find(c.vertical))
    out.errors.push_back({"vertical", "not_allowed", "unknown vertical"});
  take_status(body, c.active, out.errors);
  if (body.contains("mode")) {
    const auto& m = body["mode"];
    if (m == "sync")
      c.async_mode = false;
    else if (m == "async")
      c.async_mode = true;
    else
      out.errors.push_back({"mode", "not_allowed", "must be sync or async"});
  }
  take_int(body, "sync_timeout_ms", 100, 60000, c.sync_timeout_ms, out.errors);
  take_int(body, "rate_limit_per_minute", 1, 10'000'000, c.rate_limit_per_minute, out.errors);
  c.payout_fixed = false;
  c.payout_value = 7000;  // default: the seller earns 70% of the sale
  take_payout(body, c.payout_fixed, c.payout_value, out.errors);
  if (!out.errors.empty()) return out;
  const std::string secret = new_campaign_key_secret();
  c.id = new_id(kCampaignPrefix);
  c.key_hash = sha256_hex(secret);
  c.key_hint = hint_of(secret);
  c.created_at_ms = clock_.now_ms();
  out.status = store_.insert_campaign(c);
  out.body = campaign_to_json(c);
  out.body["campaign_key"] = secret;
  return out;
}

Management::Created Management::create_api_key(const json& body) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body, {"name", "seller_id", "buyer_id", "plan", "scopes"}, out.errors);
  ApiKey k;
  take_string(body, "name", kMaxName, false, k.name, out.errors);
  if (body.contains("seller_id") && !body["seller_id"].is_null()) {
    if (take_string(body, "seller_id", 64, true, k.seller_id, out.errors) &&
        !store_.get_seller(k.seller_id))
      out.errors.push_back({"seller_id", "not_found", "no such seller"});
  }
  if (body.contains("buyer_id") && !body["buyer_id"].is_null()) {
    if (!k.seller_id.empty())
      out.errors.push_back({"buyer_id", "not_allowed", "a key belongs to a seller or a buyer"});
    else if (take_string(body, "buyer_id", 64, true, k.buyer_id, out.errors) &&
             !store_.get_buyer(k.buyer_id))
      out.errors.push_back({"buyer_id", "not_found", "no such buyer"});
  }
  if (body.contains("plan")) {
    auto plan =
        body["plan"].is_string() ? parse_plan(body["plan"].get<std::string>()) : std::nullopt;
    if (!plan)
      out.errors.push_back({"plan", "not_allowed", "must be standard or enterprise"});
    else
      k.plan = *plan;
  }
  const std::uint32_t allowed = !k.buyer_id.empty()    ? kBuyerScopes
                                : !k.seller_id.empty() ? kSellerScopes
                                                       : kScopeAll;
  if (auto it = body.find("scopes"); it != body.end()) {
    if (!it->is_array() || it->empty()) {
      out.errors.push_back({"scopes", "invalid_type", "must be a non-empty array"});
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const auto& s = (*it)[i];
        const std::uint32_t scope =
            s.is_string() ? parse_scope(s.get<std::string>()).value_or(Scope{}) : 0u;
        const std::string path = "scopes[" + std::to_string(i) + "]";
        if (scope == 0)
          out.errors.push_back({path, "not_allowed", "unknown scope"});
        else if ((scope & allowed) == 0)
          out.errors.push_back({path, "not_allowed",
                                !k.buyer_id.empty() ? "a buyer key cannot hold this scope"
                                                    : "a seller key cannot hold this scope"});
        else
          k.scopes |= scope;
      }
    }
  } else {
    k.scopes = allowed;
  }
  if (!out.errors.empty()) return out;
  const std::string secret = new_api_key_secret();
  k.id = new_id(kKeyPrefix);
  k.key_hash = sha256_hex(secret);
  k.key_hint = hint_of(secret);
  k.created_at_ms = clock_.now_ms();
  out.status = store_.insert_api_key(k);
  out.body = api_key_to_json(k);
  out.body["key"] = secret;
  return out;
}

StoreStatus Management::ensure_bootstrap_key(const std::string& secret) {
  const std::string hash = sha256_hex(secret);
  const Lookup<ApiKey> existing = store_.find_api_key_by_hash(hash);
  if (existing.status == StoreStatus::kUnavailable) return StoreStatus::kUnavailable;
  if (existing.value && existing.value->revoked_at_ms == 0) return StoreStatus::kOk;
  ApiKey k;
  k.id = new_id(kKeyPrefix);
  k.name = "bootstrap";
  k.plan = Plan::kEnterprise;
  k.scopes = kScopeAll;
  k.key_hash = hash;
  k.key_hint = hint_of(secret);
  k.created_at_ms = clock_.now_ms();
  const StoreStatus s = store_.insert_api_key(k);
  return s == StoreStatus::kConflict ? StoreStatus::kOk : s;
}

}  // namespace leadflow
