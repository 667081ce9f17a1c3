#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/field_error.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow {

/// An e-mail as users are found by: trimmed, ASCII lower case.
std::string normalise_email(std::string_view email);
/// Whether `email` (normalised) looks like an address: one @, a dotted domain, no blanks or
/// control characters, at most 254 bytes.
bool plausible_email(std::string_view email);

/// Creating sellers, campaigns, API keys and dashboard users: shared by the /v1 management
/// endpoints and leadflow-admin, so both apply the same rules. Thread-safe (stateless over the
/// store).
class Management {
 public:
  Management(Store& store, const VerticalRegistry& verticals, const Clock& clock)
      : store_(store), verticals_(verticals), clock_(clock) {}

  struct Created {
    StoreStatus status = StoreStatus::kOk;
    FieldErrors errors;
    nlohmann::json body;  // the created record; for keys, includes the secret once
  };

  /// {"name", "status", "payout": {"model": "revshare"|"fixed", "value"}} (default 70%
  /// revshare): the payout rule of the seller's Surface A leads.
  Created create_seller(const nlohmann::json& body);
  /// PUT: replaces the fields the body names ("name", "status", "payout") and keeps the rest;
  /// kNotFound when there is no such seller. A new payout rule prices the sales made after it.
  Created update_seller(const std::string& id, const nlohmann::json& body);
  /// {"seller_id", "name", "vertical", "status", "mode", "sync_timeout_ms",
  ///  "rate_limit_per_minute", "payout": {"model": "revshare"|"fixed", "value"}}.
  Created create_campaign(const nlohmann::json& body);
  /// PUT: replaces the fields the body names ("name", "status", "mode", "sync_timeout_ms",
  /// "rate_limit_per_minute", "payout"), checked as create_campaign checks them, and keeps the
  /// rest. "seller_id", "vertical", "campaign_id", "created_at" and "campaign_key_hint" may be
  /// sent back as they read; a different value, or any "campaign_key", is a field error
  /// (code "read_only"). kNotFound when there is no such campaign.
  Created update_campaign(const std::string& id, const nlohmann::json& body);
  /// {"name", "seller_id" or "buyer_id" (neither for an operator key), "plan", "scopes": [...]}.
  /// Seller keys may hold leads:write, leads:read and reports:read only; buyer keys leads:read,
  /// returns:write and reports:read (all three by default).
  Created create_api_key(const nlohmann::json& body);
  /// A dashboard user: {"email", "name", "password", "account": "operator"|"seller"|"buyer",
  /// "seller_id" (seller) or "buyer_id" (buyer), "active" (default true)}. The e-mail is kept in
  /// lower case and must be new; the password (passwords::problem_with) is kept only as its
  /// Argon2id hash. The body is the user, never the password or its hash.
  Created create_user(const nlohmann::json& body);
  /// PUT: "name", "active", "password", each optional; kNotFound when there is no such user.
  /// Making a user inactive or giving it a new password ends its sessions.
  Created update_user(const std::string& id, const nlohmann::json& body);
  /// Makes sure an operator key with every scope and the enterprise plan exists whose secret is
  /// exactly `secret` (LEADFLOW_BOOTSTRAP_KEY). Idempotent.
  StoreStatus ensure_bootstrap_key(const std::string& secret);
  /// What ensure_bootstrap_operator did.
  enum class Bootstrap { kCreated, kUsersExist, kInvalid, kUnavailable };
  /// Makes the first operator user (LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL and _PASSWORD_FILE) when
  /// the store has no user at all; kUsersExist (nothing done) otherwise. Idempotent, and safe
  /// when several processes start at once: the e-mail is unique, so a second insert of it fails
  /// and is taken for kUsersExist. kInvalid (with `why`) for an implausible e-mail or a
  /// password passwords::problem_with refuses.
  Bootstrap ensure_bootstrap_operator(const std::string& email, const std::string& password,
                                      std::string& why);
  /// Changes a user's own password (POST /v1/session/password): `new_password` is checked as a
  /// user's password is at creation, then hashed and stored; every session of the user but
  /// `keep_session_hash` (the caller's) ends. The current password is the caller's to check.
  Created change_password(const User& user, const nlohmann::json& new_password,
                          const std::string& keep_session_hash);

 private:
  Store& store_;
  const VerticalRegistry& verticals_;
  const Clock& clock_;
};

}  // namespace leadflow
