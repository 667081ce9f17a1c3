#include "leadflow/domain/accounts.hpp"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "leadflow/base/crypto.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {
namespace {

constexpr std::array<std::pair<std::string_view, Scope>, 7> kScopes = {{
    {"leads:write", kScopeLeadsWrite},
    {"leads:read", kScopeLeadsRead},
    {"buyers:read", kScopeBuyersRead},
    {"buyers:write", kScopeBuyersWrite},
    {"reports:read", kScopeReportsRead},
    {"admin", kScopeAdmin},
    {"returns:write", kScopeReturnsWrite},
}};

// 43 base62 characters carry 256 bits. Rejection sampling keeps every character uniform.
std::string base62_secret(std::string_view prefix) {
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out(prefix);
  while (out.size() < prefix.size() + 43) {
    for (unsigned char c : random_bytes(64)) {
      if (c >= 248) continue;  // 248 = 4 * 62: keeps c % 62 unbiased
      out.push_back(kAlphabet[c % 62]);
      if (out.size() == prefix.size() + 43) break;
    }
  }
  return out;
}

}  // namespace

std::optional<Scope> parse_scope(std::string_view s) {
  for (const auto& [name, scope] : kScopes)
    if (name == s) return scope;
  return std::nullopt;
}

std::string scopes_to_string(std::uint32_t scopes) {
  std::string out;
  for (const auto& [name, scope] : kScopes) {
    if ((scopes & scope) == 0) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out;
}

std::string_view to_string(Plan p) { return p == Plan::kEnterprise ? "enterprise" : "standard"; }

std::optional<Plan> parse_plan(std::string_view s) {
  if (s == "standard") return Plan::kStandard;
  if (s == "enterprise") return Plan::kEnterprise;
  return std::nullopt;
}

PlanLimits limits_of(Plan p) {
  return p == Plan::kEnterprise ? PlanLimits{1000, 100'000} : PlanLimits{100, 10'000};
}

nlohmann::json payout_to_json(bool fixed, std::int64_t value) {
  nlohmann::json payout = {{"model", fixed ? "fixed" : "revshare"}};
  if (fixed)
    payout["value"] = cents_to_decimal(value);
  else
    payout["value"] = static_cast<double>(value) / 100.0;  // percent
  return payout;
}

std::string new_api_key_secret() { return base62_secret("lfk_"); }
std::string new_campaign_key_secret() { return base62_secret("lfc_"); }

nlohmann::json seller_to_json(const Seller& s) {
  return {{"seller_id", s.id},
          {"name", s.name},
          {"status", s.active ? "active" : "paused"},
          {"payout", payout_to_json(s.payout_fixed, s.payout_value)},
          {"test_mode", s.test_mode},
          {"time_zone", s.time_zone},
          {"created_at", format_rfc3339_ms(s.created_at_ms)},
          {"version", s.version}};
}

nlohmann::json campaign_to_json(const Campaign& c) {
  const nlohmann::json payout = payout_to_json(c.payout_fixed, c.payout_value);
  return {{"campaign_id", c.id},
          {"seller_id", c.seller_id},
          {"name", c.name},
          {"vertical", c.vertical},
          {"status", c.active ? "active" : "paused"},
          {"mode", c.async_mode ? "async" : "sync"},
          {"sync_timeout_ms", c.sync_timeout_ms},
          {"rate_limit_per_minute", c.rate_limit_per_minute},
          {"payout", payout},
          {"test_mode", c.test_mode},
          {"reoffer", c.reoffer ? reoffer_policy_json(*c.reoffer) : nlohmann::json(nullptr)},
          {"campaign_key_hint", c.key_hint},
          {"created_at", format_rfc3339_ms(c.created_at_ms)},
          {"version", c.version}};
}

nlohmann::json api_key_to_json(const ApiKey& k) {
  nlohmann::json scopes = nlohmann::json::array();
  for (const auto& [name, scope] : kScopes)
    if (k.scopes & scope) scopes.push_back(name);
  const auto id_or_null = [](const std::string& id) {
    return id.empty() ? nlohmann::json(nullptr) : nlohmann::json(id);
  };
  return {{"key_id", k.id},
          {"account", k.is_buyer()      ? "buyer"
                      : k.is_operator() ? "operator"
                                        : "seller"},
          {"seller_id", id_or_null(k.seller_id)},
          {"buyer_id", id_or_null(k.buyer_id)},
          {"name", k.name},
          {"plan", to_string(k.plan)},
          {"scopes", scopes},
          {"key_hint", k.key_hint},
          {"created_at", format_rfc3339_ms(k.created_at_ms)},
          {"revoked_at", k.revoked_at_ms ? nlohmann::json(format_rfc3339_ms(k.revoked_at_ms))
                                         : nlohmann::json(nullptr)},
          {"last_used_at", k.last_used_at_ms ? nlohmann::json(format_rfc3339_ms(k.last_used_at_ms))
                                             : nlohmann::json(nullptr)},
          {"version", k.version}};
}

nlohmann::json user_to_json(const User& u) {
  const auto id_or_null = [](const std::string& id) {
    return id.empty() ? nlohmann::json(nullptr) : nlohmann::json(id);
  };
  return {
      {"id", u.id},
      {"email", u.email},
      {"name", u.name},
      {"account", u.account()},
      {"seller_id", id_or_null(u.seller_id)},
      {"buyer_id", id_or_null(u.buyer_id)},
      {"active", u.active},
      {"created_at", format_rfc3339_ms(u.created_at_ms)},
      {"last_login_at", u.last_login_at_ms ? nlohmann::json(format_rfc3339_ms(u.last_login_at_ms))
                                           : nlohmann::json(nullptr)},
      {"version", u.version}};
}

}  // namespace leadflow
