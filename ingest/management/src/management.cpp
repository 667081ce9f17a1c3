#include "leadflow/management/management.hpp"

#include <cmath>

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/domain/time_zone.hpp"
#include "leadflow/management/passwords.hpp"

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
// (code points, so any script counts as a person would), under the one free-text rule
// (refuse_free_text: no control character, which could cut a record short, forge a log line or
// repaint a terminal, and no bidi override or other hidden formatting character).
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
  if (auto refused = refuse_free_text(out, max)) {
    errors.push_back({name, refused->code,
                      refused->code == "too_long"
                          ? "must be 1 to " + std::to_string(max) + " characters"
                          : refused->message});
    return false;
  }
  if (out.empty()) {
    errors.push_back({name, "required", "must be 1 to " + std::to_string(max) + " characters"});
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

// "test_mode": true | false, when present (leadflow/domain/test_mode.hpp).
void take_test_mode(const json& body, bool& test_mode, FieldErrors& errors) {
  auto it = body.find("test_mode");
  if (it == body.end()) return;
  if (!it->is_boolean())
    errors.push_back({"test_mode", "invalid_type", "must be true or false"});
  else
    test_mode = it->get<bool>();
}

// "reoffer": a campaign's own re-offer policy, when present, checked as a vertical's is
// (read_reoffer_policy): null for its vertical's, {"delays_seconds": []} for none. A refusal names
// the member at fault ("reoffer.delays_seconds").
void take_reoffer(const json& body, std::optional<ReofferPolicy>& reoffer, FieldErrors& errors) {
  auto it = body.find("reoffer");
  if (it == body.end()) return;
  if (it->is_null()) return reoffer.reset();
  if (ReofferPolicy p; take_reoffer_policy(*it, p, errors)) reoffer = std::move(p);
}

// "time_zone": an IANA zone, when present, by the rule buyers' zones meet
// (leadflow/domain/time_zone.hpp).
void take_time_zone(const json& body, std::string& zone, FieldErrors& errors) {
  auto it = body.find("time_zone");
  if (it == body.end()) return;
  if (!it->is_string())
    errors.push_back({"time_zone", "invalid_type", "must be a string"});
  else if (!valid_time_zone(it->get_ref<const std::string&>()))
    errors.push_back({"time_zone", "invalid_format", std::string(kTimeZoneRule)});
  else
    zone = it->get<std::string>();
}

// A field of a view that PUT may send back as it was read, but never change.
void keep_read_only(const json& body, const char* name, const std::string& current,
                    FieldErrors& errors) {
  const auto it = body.find(name);
  if (it == body.end() || (it->is_string() && it->get_ref<const std::string&>() == current)) return;
  errors.push_back({name, "read_only", "cannot be changed"});
}

// The view's `version`, which a PUT may send back as it read it (If-Match says which version a
// change expects): of the view's type, or a 400 naming it.
void keep_version_type(const json& body, FieldErrors& errors) {
  const auto it = body.find("version");
  if (it != body.end() && !it->is_number_integer())
    errors.push_back({"version", "invalid_type", "must be an integer"});
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

Management::Created Management::create_seller(const json& body, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body, {"name", "status", "payout", "test_mode", "time_zone"}, out.errors);
  Seller s;
  take_string(body, "name", kMaxName, true, s.name, out.errors);
  take_status(body, s.active, out.errors);
  take_payout(body, s.payout_fixed, s.payout_value, out.errors);
  take_test_mode(body, s.test_mode, out.errors);
  take_time_zone(body, s.time_zone, out.errors);
  if (!out.errors.empty()) return out;
  s.id = new_id(kSellerPrefix);
  s.created_at_ms = clock_.now_ms();
  out.status = store_.insert_seller(s);
  out.body = seller_to_json(s);
  if (out.status == StoreStatus::kOk) note_change(by, "created", "seller", s.id, {}, out.body);
  return out;
}

Management::Created Management::update_seller(const std::string& id, const json& body,
                                              const IfMatch& if_match, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  out = change_record<Seller>(
      if_match, [&] { return store_.get_seller(id); },
      [&](Seller& s, FieldErrors& errors) {
        // Read-only fields of the view may be sent back as they were read.
        unknown_fields(body,
                       {"name", "status", "payout", "test_mode", "time_zone", "seller_id",
                        "created_at", "version"},
                       errors);
        keep_read_only(body, "seller_id", s.id, errors);
        keep_version_type(body, errors);
        if (body.contains("created_at") && body["created_at"] != seller_to_json(s)["created_at"])
          errors.push_back({"created_at", "read_only", "cannot be changed"});
        if (body.contains("name")) take_string(body, "name", kMaxName, true, s.name, errors);
        take_status(body, s.active, errors);
        take_payout(body, s.payout_fixed, s.payout_value, errors);
        take_test_mode(body, s.test_mode, errors);
        take_time_zone(body, s.time_zone, errors);
      },
      [&](Seller& s) { return store_.update_seller(s); }, seller_to_json);
  if (out.status == StoreStatus::kOk)
    note_change(by, "updated", "seller", id, out.before, out.body);
  return out;
}

Management::Created Management::create_campaign(const json& body, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body,
                 {"seller_id", "name", "vertical", "status", "mode", "sync_timeout_ms",
                  "rate_limit_per_minute", "payout", "test_mode", "reoffer"},
                 out.errors);
  Campaign c;
  if (take_string(body, "seller_id", 64, true, c.seller_id, out.errors)) {
    const StoreStatus seller = store_.get_seller(c.seller_id).status;
    if (seller == StoreStatus::kUnavailable) {  // our outage, not the caller's mistake
      out.status = seller;
      return out;
    }
    if (seller == StoreStatus::kNotFound)
      out.errors.push_back({"seller_id", "not_found", "no such seller"});
  }
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
  take_test_mode(body, c.test_mode, out.errors);
  take_reoffer(body, c.reoffer, out.errors);
  if (!out.errors.empty()) return out;
  const std::string secret = new_campaign_key_secret();
  c.id = new_id(kCampaignPrefix);
  c.key_hash = sha256_hex(secret);
  c.key_hint = hint_of(secret);
  c.created_at_ms = clock_.now_ms();
  out.status = store_.insert_campaign(c);
  out.body = campaign_to_json(c);
  if (out.status == StoreStatus::kOk) note_change(by, "created", "campaign", c.id, {}, out.body);
  out.body["campaign_key"] = secret;
  return out;
}

namespace {
// A PUT's body applied to a campaign as it is now (Management::update_campaign).
void apply_campaign(const json& body, Campaign& c, FieldErrors& errors) {
  unknown_fields(body,
                 {"name", "status", "mode", "sync_timeout_ms", "rate_limit_per_minute", "payout",
                  "test_mode", "reoffer", "seller_id", "vertical", "campaign_id", "created_at",
                  "campaign_key_hint", "campaign_key", "version"},
                 errors);
  keep_read_only(body, "seller_id", c.seller_id, errors);
  keep_version_type(body, errors);
  keep_read_only(body, "vertical", c.vertical, errors);
  keep_read_only(body, "campaign_id", c.id, errors);
  keep_read_only(body, "campaign_key_hint", c.key_hint, errors);
  if (body.contains("created_at") && body["created_at"] != campaign_to_json(c)["created_at"])
    errors.push_back({"created_at", "read_only", "cannot be changed"});
  if (body.contains("campaign_key"))
    errors.push_back(
        {"campaign_key", "read_only", "cannot be changed: create a new campaign for a new key"});
  if (body.contains("name")) take_string(body, "name", kMaxName, true, c.name, errors);
  take_status(body, c.active, errors);
  if (body.contains("mode")) {
    const auto& m = body["mode"];
    if (m == "sync")
      c.async_mode = false;
    else if (m == "async")
      c.async_mode = true;
    else
      errors.push_back({"mode", "not_allowed", "must be sync or async"});
  }
  take_int(body, "sync_timeout_ms", 100, 60000, c.sync_timeout_ms, errors);
  take_int(body, "rate_limit_per_minute", 1, 10'000'000, c.rate_limit_per_minute, errors);
  take_payout(body, c.payout_fixed, c.payout_value, errors);
  take_test_mode(body, c.test_mode, errors);
  take_reoffer(body, c.reoffer, errors);
}
}  // namespace

Management::Created Management::update_campaign(const std::string& id, const json& body,
                                                const IfMatch& if_match, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  out = change_record<Campaign>(
      if_match, [&] { return store_.get_campaign(id); },
      [&](Campaign& c, FieldErrors& errors) { apply_campaign(body, c, errors); },
      [&](Campaign& c) { return store_.update_campaign(c); }, campaign_to_json);
  if (out.status == StoreStatus::kOk)
    note_change(by, "updated", "campaign", id, out.before, out.body);
  return out;
}

Management::Created Management::create_api_key(const json& body, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body, {"name", "seller_id", "buyer_id", "plan", "scopes"}, out.errors);
  ApiKey k;
  take_string(body, "name", kMaxName, false, k.name, out.errors);
  if (body.contains("seller_id") && !body["seller_id"].is_null()) {
    if (take_string(body, "seller_id", 64, true, k.seller_id, out.errors)) {
      const StoreStatus seller = store_.get_seller(k.seller_id).status;
      if (seller == StoreStatus::kUnavailable) {
        out.status = seller;
        return out;
      }
      if (seller == StoreStatus::kNotFound)
        out.errors.push_back({"seller_id", "not_found", "no such seller"});
    }
  }
  if (body.contains("buyer_id") && !body["buyer_id"].is_null()) {
    if (!k.seller_id.empty())
      out.errors.push_back({"buyer_id", "not_allowed", "a key belongs to a seller or a buyer"});
    else if (take_string(body, "buyer_id", 64, true, k.buyer_id, out.errors) &&
             !store_.get_buyer(k.buyer_id).value)
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
  if (out.status == StoreStatus::kOk) note_change(by, "created", "api_key", k.id, {}, out.body);
  out.body["key"] = secret;
  return out;
}

// --- dashboard users
// ------------------------------------------------------------------------------

std::string normalise_email(std::string_view email) { return ascii_lower(trim(email)); }

bool plausible_email(std::string_view e) {
  if (e.size() < 3 || e.size() > 254) return false;
  const std::size_t at = e.find('@');
  if (at == std::string_view::npos || at == 0 || e.find('@', at + 1) != std::string_view::npos)
    return false;
  const std::string_view domain = e.substr(at + 1);
  if (domain.empty() || domain.find('.') == std::string_view::npos || domain.front() == '.' ||
      domain.back() == '.')
    return false;
  for (unsigned char c : e)
    if (c <= 0x20 || c == 0x7f) return false;
  return true;
}

namespace {

// A new password from the body: checked, then hashed. False (with a field error) when refused.
bool take_password(const json& body, bool required, std::string& hash_out, FieldErrors& errors) {
  auto it = body.find("password");
  if (it == body.end() || (it->is_null() && required)) {
    if (required) errors.push_back({"password", "required", "is required"});
    return false;
  }
  // A null password is no password: refused, never taken for "unchanged".
  if (!it->is_string()) {
    errors.push_back({"password", "invalid_type", "must be a string"});
    return false;
  }
  const std::string& password = it->get_ref<const std::string&>();
  if (const std::string_view problem = passwords::problem_with(password); !problem.empty()) {
    errors.push_back({"password",
                      password.size() > passwords::kMaxLength ? "too_long" : "invalid_format",
                      std::string(problem)});
    return false;
  }
  if (!errors.empty()) return false;  // the request is refused anyway: spare the hashing
  hash_out = passwords::hash(password);
  return !hash_out.empty();
}

bool take_active(const json& body, bool& active, FieldErrors& errors) {
  auto it = body.find("active");
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    errors.push_back({"active", "invalid_type", "must be true or false"});
    return false;
  }
  active = it->get<bool>();
  return true;
}

}  // namespace

Management::Created Management::create_user(const json& body, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body, {"email", "name", "password", "account", "seller_id", "buyer_id", "active"},
                 out.errors);
  User u;
  std::string email;
  if (take_string(body, "email", 254, true, email, out.errors)) {
    u.email = normalise_email(email);
    if (!plausible_email(u.email)) {
      out.errors.push_back({"email", "invalid_format", "must be an e-mail address"});
    } else {
      const Lookup<User> existing = store_.find_user_by_email(u.email);
      if (existing.status == StoreStatus::kUnavailable) {
        out.status = StoreStatus::kUnavailable;
        return out;
      }
      if (existing.value) out.errors.push_back({"email", "not_allowed", "already has a user"});
    }
  }
  take_string(body, "name", kMaxName, true, u.name, out.errors);
  std::string account;
  if (take_string(body, "account", 16, true, account, out.errors)) {
    const bool has_seller = body.contains("seller_id") && !body["seller_id"].is_null();
    const bool has_buyer = body.contains("buyer_id") && !body["buyer_id"].is_null();
    if (account == "operator") {
      if (has_seller) out.errors.push_back({"seller_id", "not_allowed", "an operator has none"});
      if (has_buyer) out.errors.push_back({"buyer_id", "not_allowed", "an operator has none"});
    } else if (account == "seller") {
      if (take_string(body, "seller_id", 64, true, u.seller_id, out.errors)) {
        const StoreStatus seller = store_.get_seller(u.seller_id).status;
        if (seller == StoreStatus::kUnavailable) {
          out.status = seller;
          return out;
        }
        if (seller == StoreStatus::kNotFound)
          out.errors.push_back({"seller_id", "not_found", "no such seller"});
      }
      if (has_buyer) out.errors.push_back({"buyer_id", "not_allowed", "a seller user has none"});
    } else if (account == "buyer") {
      if (take_string(body, "buyer_id", 64, true, u.buyer_id, out.errors) &&
          !store_.get_buyer(u.buyer_id).value)
        out.errors.push_back({"buyer_id", "not_found", "no such buyer"});
      if (has_seller) out.errors.push_back({"seller_id", "not_allowed", "a buyer user has none"});
    } else {
      out.errors.push_back({"account", "not_allowed", "must be operator, seller or buyer"});
    }
  }
  take_active(body, u.active, out.errors);
  const bool hashed = take_password(body, true, u.password_hash, out.errors);
  if (!out.errors.empty()) return out;
  if (!hashed) {
    out.status = StoreStatus::kUnavailable;  // libsodium could not hash (out of memory)
    return out;
  }
  u.id = new_id(kUserPrefix);
  u.created_at_ms = clock_.now_ms();
  out.status = store_.insert_user(u);
  out.body = user_to_json(u);
  if (out.status == StoreStatus::kOk) note_change(by, "created", "user", u.id, {}, out.body, true);
  return out;
}

Management::Created Management::update_user(const std::string& id, const json& body,
                                            const IfMatch& if_match, const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  unknown_fields(body, {"name", "active", "password"}, out.errors);
  // The body is checked, and a new password hashed, once: neither depends on the record.
  User patch;
  const bool new_name =
      body.contains("name") && take_string(body, "name", kMaxName, true, patch.name, out.errors);
  const bool new_active = take_active(body, patch.active, out.errors);
  std::string new_hash;
  const bool new_password = take_password(body, false, new_hash, out.errors);
  if (!out.errors.empty()) return out;
  if (body.contains("password") && !new_password) {
    out.status = StoreStatus::kUnavailable;
    return out;
  }
  out = change_record<User>(
      if_match, [&] { return store_.get_user(id); },
      [&](User& u, FieldErrors&) {
        if (new_name) u.name = patch.name;
        if (new_active) u.active = patch.active;
        if (new_password) u.password_hash = new_hash;
      },
      // Inactive, or with a new password, its sessions end with the change.
      [&](User& u) { return store_.update_user(u); }, user_to_json);
  if (out.status == StoreStatus::kOk)
    note_change(by, "updated", "user", id, out.before, out.body, new_password);
  return out;
}

Management::Created Management::revoke_api_key(const std::string& id, const IfMatch& if_match,
                                               const ChangeActor& by) {
  Created out;
  const Lookup<ApiKey> found = store_.get_api_key(id);
  if (!found.value) {
    out.status = found.status == StoreStatus::kOk ? StoreStatus::kNotFound : found.status;
    return out;
  }
  // One write: the store revokes the key only at a version the If-Match allows.
  std::int64_t expected = kAnyVersion;
  if (!if_match.any) {
    if (!if_match.allows(found.value->version)) {
      out.status = StoreStatus::kConflict;
      out.stale = true;
      out.version = found.value->version;
      return out;
    }
    expected = found.value->version;
  }
  out.status = store_.revoke_api_key(id, clock_.now_ms(), expected);
  if (out.status == StoreStatus::kConflict) {
    // Changed between the read and the write: the version it is at now.
    const Lookup<ApiKey> now = store_.get_api_key(id);
    out.stale = true;
    out.version = now.value ? now.value->version : found.value->version;
    return out;
  }
  if (out.status != StoreStatus::kOk) return out;
  const Lookup<ApiKey> revoked = store_.get_api_key(id);
  const ApiKey& k = revoked.value ? *revoked.value : *found.value;
  out.body = api_key_to_json(k);
  out.version = k.version;
  // A key revoked before changes nothing, and so is not noted again.
  note_change(by, "revoked", "api_key", id, api_key_to_json(*found.value), out.body);
  return out;
}

Management::Bootstrap Management::ensure_bootstrap_operator(const std::string& email,
                                                            const std::string& password,
                                                            std::string& why) {
  User u;
  u.email = normalise_email(email);
  if (!plausible_email(u.email)) {
    why = "not an e-mail address";
    return Bootstrap::kInvalid;
  }
  if (const std::string_view problem = passwords::problem_with(password); !problem.empty()) {
    why = "the password " + std::string(problem);
    return Bootstrap::kInvalid;
  }
  if (!store_.healthy()) return Bootstrap::kUnavailable;
  // An outage is not "no users yet": that would let a second operator be made.
  const auto users = store_.list_users();
  if (!users) return Bootstrap::kUnavailable;
  if (!users->empty()) return Bootstrap::kUsersExist;
  u.name = "Operator";
  u.password_hash = passwords::hash(password);
  if (u.password_hash.empty()) return Bootstrap::kUnavailable;
  u.id = new_id(kUserPrefix);
  u.created_at_ms = clock_.now_ms();
  switch (store_.insert_user(u)) {
    case StoreStatus::kOk:
      return Bootstrap::kCreated;
    case StoreStatus::kConflict:  // another process made it first
      return Bootstrap::kUsersExist;
    default:
      return Bootstrap::kUnavailable;
  }
}

Management::Created Management::change_password(const User& user, const json& new_password,
                                                const std::string& keep_session_hash,
                                                const ChangeActor& by) {
  Created out;
  std::string hash;
  const bool hashed = take_password(json{{"password", new_password}}, true, hash, out.errors);
  for (auto& e : out.errors) e.field = "new_password";
  if (!out.errors.empty()) return out;
  if (!hashed) {
    out.status = StoreStatus::kUnavailable;
    return out;
  }
  // Only the hash: the rest of `user` was read before and may be stale (an operator may have
  // disabled the user meanwhile). The other sessions end with the change, in its transaction;
  // the caller's stays.
  out.status = store_.set_user_password(user.id, hash, keep_session_hash);
  if (out.status == StoreStatus::kOk) {
    const json view = user_to_json(user);
    note_change(by, "password_changed", "user", user.id, view, view, true);
  }
  return out;
}

Management::Created Management::set_time_zone(const User& user, const json& zone) {
  Created out;
  if (!zone.is_string()) {
    out.errors.push_back({"time_zone", "invalid_type", "is required, as a string"});
    return out;
  }
  const auto& name = zone.get_ref<const std::string&>();
  // The zone database is the one TimeZone reads: a name it cannot load could never be used.
  const auto tz = TimeZone::cached(name);
  if (!tz) {
    out.errors.push_back(
        {"time_zone", "not_allowed", "an IANA time zone, such as America/New_York"});
    return out;
  }
  out.status = store_.set_user_time_zone(user.id, tz->name());
  out.body = tz->name();
  return out;
}

void record_change(AuditStore& changes, const Clock& clock, const ChangeActor& by,
                   std::string_view action, std::string_view kind, std::string_view id,
                   const json& before, const json& after, bool password) {
  ChangeEntry e;
  e.changes = diff_fields(before, after);
  if (password)
    e.changes.push_back({"password", before.is_null() ? json() : json("(secret)"), "(secret)"});
  if (e.changes.empty()) return;  // nothing changed: nothing to note
  e.at_ms = clock.now_ms();
  e.id = new_id(kChangePrefix, e.at_ms);
  e.actor = by;
  e.action = action;
  e.object_kind = kind;
  e.object_id = id;
  const json& named = after.is_object() ? after : before;
  if (auto it = named.find("name"); it != named.end() && it->is_string()) e.object_name = *it;
  if (const StoreStatus s = changes.append_change(e); s != StoreStatus::kOk) {
    static prometheus::Counter& unwritten = prometheus::BuildCounter()
                                                .Name("leadflow_change_log_unwritten_total")
                                                .Help(
                                                    "Changes of account records made but not "
                                                    "written to the change log (store failure)")
                                                .Register(*metrics_registry())
                                                .Add({});
    unwritten.Increment();
    log(LogLevel::kError, "change_log_unwritten",
        {{"object_kind", e.object_kind}, {"object_id", e.object_id}, {"action", e.action}});
  }
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
