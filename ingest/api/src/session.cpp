// The dashboard's session cookie, its CSRF rule and its expiry (leadflow/api/session.hpp).
#include "leadflow/api/session.hpp"

#include <nlohmann/json.hpp>

#include "leadflow/base/crypto.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/management/passwords.hpp"

namespace leadflow::session {

std::string set_cookie(std::string_view token, std::int64_t max_age_s) {
  std::string c(kCookieName);
  c.append("=").append(token);
  c.append("; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=");
  c.append(std::to_string(max_age_s < 0 ? 0 : max_age_s));
  return c;
}

std::string clear_cookie() { return set_cookie("", 0); }

std::string_view token_of(const http::Request& req) {
  const std::size_t n = req.header_count("Cookie");
  for (std::size_t i = 0; i < n; ++i) {
    std::string_view rest = req.header("Cookie", i);
    while (!rest.empty()) {
      const std::size_t semi = rest.find(';');
      const std::string_view pair = trim(rest.substr(0, semi));
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      const std::size_t eq = pair.find('=');
      if (eq == std::string_view::npos || trim(pair.substr(0, eq)) != kCookieName) continue;
      return trim(pair.substr(eq + 1));
    }
  }
  return "";
}

bool changes_state(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

bool csrf_ok(const UserSession& s, std::string_view sent) {
  return !sent.empty() && !s.csrf_token.empty() && constant_time_equal(s.csrf_token, sent);
}

bool live(const UserSession& s, std::int64_t now_ms) {
  return now_ms < s.expires_at_ms && now_ms - s.last_seen_at_ms < kIdleMs;
}

UserSession make(std::string_view user_id, std::string_view token, std::int64_t now_ms) {
  UserSession s;
  s.token_hash = sha256_hex(token);
  s.user_id = user_id;
  s.csrf_token = passwords::new_token();
  s.created_at_ms = now_ms;
  s.expires_at_ms = now_ms + kAbsoluteMs;
  s.last_seen_at_ms = now_ms;
  return s;
}

std::uint32_t scopes_of(const User& u) {
  if (u.is_buyer()) return kBuyerScopes;
  if (!u.is_operator()) return kSellerScopes;
  return kScopeAll;
}

ApiKey as_api_key(const User& u) {
  ApiKey k;
  k.id = u.id;
  k.seller_id = u.seller_id;
  k.buyer_id = u.buyer_id;
  k.name = u.name;
  // A person at the console: the operator's pages (an overview, a buyer's form, the change log)
  // ask for more at once than a seller's, and no plan of its own caps it; a seller or buyer user
  // keeps its account's standard plan, so a session is no way around a seller's rate.
  k.plan = u.is_operator() ? Plan::kEnterprise : Plan::kStandard;
  k.scopes = scopes_of(u);
  k.created_at_ms = u.created_at_ms;
  k.time_zone = u.time_zone;
  return k;
}

nlohmann::json signed_in_user(const User& u) {
  const auto id_or_null = [](const std::string& id) {
    return id.empty() ? nlohmann::json(nullptr) : nlohmann::json(id);
  };
  return {{"id", u.id},
          {"email", u.email},
          {"name", u.name},
          {"account", u.account()},
          {"seller_id", id_or_null(u.seller_id)},
          {"buyer_id", id_or_null(u.buyer_id)},
          {"time_zone", u.time_zone}};
}

}  // namespace leadflow::session
