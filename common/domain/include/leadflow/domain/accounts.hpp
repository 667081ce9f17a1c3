#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/verticals.hpp"

namespace leadflow {

/// A seller: posts leads through API keys (Surface A) and campaigns (Surface B). Its payout
/// rule prices its Surface A leads (a campaign's own rule prices its Surface B leads).
struct Seller {
  std::string id;
  std::string name;
  bool active = true;
  bool payout_fixed = false;         // payout model: revshare (percent of price) or fixed
  std::int64_t payout_value = 7000;  // revshare: basis points (7000 = 70%); fixed: cents
  /// Every lead of the seller is a test lead (leadflow/domain/test_mode.hpp).
  bool test_mode = false;
  /// The IANA zone its payout statements are cut in (docs/statements.md), checked by
  /// leadflow/domain/time_zone.hpp; UTC until the operator sets another.
  std::string time_zone = "UTC";
  std::int64_t created_at_ms = 0;
  std::int64_t version = 1;  // one more with every change (docs/versions.md)
};

/// A seller's posting channel on Surface B. The campaign key is shown once at creation and
/// stored only as its SHA-256.
struct Campaign {
  std::string id;
  std::string seller_id;
  std::string name;
  std::string vertical;
  bool active = true;
  bool async_mode = false;  // mode "async": always 202
  int sync_timeout_ms = 3000;
  int rate_limit_per_minute = 600;
  bool payout_fixed = false;      // payout model: revshare (percent of price) or fixed
  std::int64_t payout_value = 0;  // revshare: basis points (7000 = 70%); fixed: cents
  std::string key_hash;           // hex SHA-256 of the campaign key
  std::string key_hint;           // first characters of the key, for people
  /// Every lead posted to the campaign is a test lead (leadflow/domain/test_mode.hpp).
  bool test_mode = false;
  /// Its own re-offer policy, replacing its vertical's (reoffer_policy_of); none: the vertical's.
  std::optional<ReofferPolicy> reoffer;
  /// Not stored with the campaign: its seller's test_mode, read with it, so that a post learns
  /// both from the one campaign lookup the front caches.
  bool seller_test_mode = false;
  std::int64_t created_at_ms = 0;
  std::int64_t version = 1;  // one more with every change (docs/versions.md)
};

/// What an API key may do.
enum Scope : std::uint32_t {
  kScopeLeadsWrite = 1u << 0,
  kScopeLeadsRead = 1u << 1,
  kScopeBuyersRead = 1u << 2,
  kScopeBuyersWrite = 1u << 3,
  kScopeReportsRead = 1u << 4,
  kScopeAdmin = 1u << 5,
  kScopeReturnsWrite = 1u << 6,
  kScopeAll = 0x7f,
};
/// The scopes a seller's key may hold, and a buyer's. A buyer's `buyers:write` reaches its own
/// account only (pause, resume, the changes the operator opened to it: /v1/account); every
/// other buyer route is the operator's.
inline constexpr std::uint32_t kSellerScopes =
    kScopeLeadsWrite | kScopeLeadsRead | kScopeReportsRead;
inline constexpr std::uint32_t kBuyerScopes =
    kScopeLeadsRead | kScopeReturnsWrite | kScopeReportsRead | kScopeBuyersWrite;
std::optional<Scope> parse_scope(std::string_view s);
std::string scopes_to_string(std::uint32_t scopes);  // "leads:write leads:read"

enum class Plan { kStandard, kEnterprise };
std::string_view to_string(Plan p);
std::optional<Plan> parse_plan(std::string_view s);
struct PlanLimits {
  int per_minute;
  int per_day;
};
PlanLimits limits_of(Plan p);

/// A Surface A key of one of three accounts: the operator's (no seller_id, no buyer_id), a
/// seller's (seller_id) or a buyer's (buyer_id: sees and returns only the leads it bought).
struct ApiKey {
  std::string id;
  std::string seller_id;
  std::string buyer_id;
  std::string name;
  Plan plan = Plan::kStandard;
  std::uint32_t scopes = 0;
  std::string key_hash;  // hex SHA-256 of the key
  std::string key_hint;  // "lfk_Ab12…"
  std::int64_t created_at_ms = 0;
  std::int64_t revoked_at_ms = 0;  // 0: live
  /// When a request last authenticated with it (written at most once a minute); 0: never.
  std::int64_t last_used_at_ms = 0;
  /// One more with every change (a revocation); a use does not move it (docs/versions.md).
  std::int64_t version = 1;
  /// Not stored with the key: its seller's test_mode, read with it (false for a key of no
  /// seller), so that a post learns it from the key lookup the front caches.
  bool seller_test_mode = false;
  /// Not stored: a dashboard session acting as a key (session::as_api_key) carries its user's
  /// time zone, the default of whole-day ranges; a key's is empty, read as UTC.
  std::string time_zone;

  bool is_operator() const { return seller_id.empty() && buyer_id.empty(); }
  bool is_buyer() const { return !buyer_id.empty(); }
  bool has(Scope s) const { return (scopes & s) != 0; }
};

/// A person who signs in to the dashboard with e-mail and password, in one of the three accounts
/// an API key belongs to: the operator's (no seller_id, no buyer_id), a seller's or a buyer's.
/// The password is kept only as an Argon2id hash string (libsodium's crypto_pwhash_str).
struct User {
  std::string id;     // "us_..."
  std::string email;  // lower case; unique
  std::string name;
  std::string seller_id;
  std::string buyer_id;
  std::string password_hash;
  bool active = true;
  std::int64_t created_at_ms = 0;
  std::int64_t last_login_at_ms = 0;  // 0: never signed in
  /// The IANA zone the user reads times and whole days in (docs/time-zones.md); the user's own
  /// choice (PUT /v1/session/time-zone), so setting it does not move `version`.
  std::string time_zone = "UTC";
  /// One more with every change (name, active, password); a sign-in does not move it.
  std::int64_t version = 1;

  bool is_operator() const { return seller_id.empty() && buyer_id.empty(); }
  bool is_buyer() const { return !buyer_id.empty(); }
  /// "operator", "seller" or "buyer".
  std::string_view account() const {
    return is_operator() ? "operator" : (is_buyer() ? "buyer" : "seller");
  }
};

/// A signed-in user's session. The token itself is only in the browser's cookie; the store keeps
/// its SHA-256. It ends at `expires_at_ms` (absolute), or once unused for the idle time.
struct UserSession {
  std::string token_hash;  // hex SHA-256 of the cookie's token
  std::string user_id;
  std::string csrf_token;  // sent back in X-CSRF-Token on every state-changing call
  std::int64_t created_at_ms = 0;
  std::int64_t expires_at_ms = 0;
  std::int64_t last_seen_at_ms = 0;
};

/// A dashboard user's second factor (TOTP, docs/two-factor.md). While `enabled` is false it is an
/// enrolment waiting for its first code. The secret is sealed (leadflow/management/two_factor.hpp);
/// `last_step` is the time step of the last code accepted, so that no code is accepted twice.
struct UserTotp {
  std::string user_id;
  std::string sealed_secret;
  bool enabled = false;
  std::int64_t last_step = 0;
  std::int64_t created_at_ms = 0;
  /// The pending sign-in between its password and its code: the SHA-256 of its challenge token
  /// ("" for none) and when it ends.
  std::string challenge_hash;
  std::int64_t challenge_expires_at_ms = 0;
  int recovery_codes_left = 0;  // read only: the recovery codes not yet used
};

/// A payout rule as the API shows it: {"model": "revshare", "value": percent} or
/// {"model": "fixed", "value": dollars}.
nlohmann::json payout_to_json(bool fixed, std::int64_t value);

/// Fresh secrets: "lfk_" + 43 base62 characters (256 bits) for API keys, "lfc_" + the same for
/// campaign keys.
std::string new_api_key_secret();
std::string new_campaign_key_secret();

nlohmann::json seller_to_json(const Seller& s);
nlohmann::json campaign_to_json(const Campaign& c);
nlohmann::json api_key_to_json(const ApiKey& k);  // masked: never the secret
/// {"id", "email", "name", "account", "seller_id", "buyer_id", "active", "created_at",
/// "last_login_at", "version"}: never the password hash.
nlohmann::json user_to_json(const User& u);

}  // namespace leadflow
