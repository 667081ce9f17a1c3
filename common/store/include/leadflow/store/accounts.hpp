#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

struct BuyerQuery {
  std::optional<bool> active;
  std::string vertical;
  std::string after_id;  // cursor: only ids > this (oldest first)
  int limit = 25;
};

/// The accounts port: the operator's records (sellers, campaigns, API keys, buyers and dashboard
/// users), for management, leadflow-admin, the API's authentication and the auction's directories.
class AccountsStore : public virtual StorePort {
 public:
  // --- accounts -------------------------------------------------------------------------------
  virtual StoreStatus insert_seller(const Seller& s) = 0;
  /// The seller (kOk), none (kNotFound), or kUnavailable when the store could not read it.
  virtual Lookup<Seller> get_seller(std::string_view id) = 0;
  /// Replaces a seller's name, status and payout rule if it is still at `s.version` (or any
  /// version with kAnyVersion): kOk with `s.version` the new one, kConflict when another change
  /// came first, kNotFound if absent. The other versioned updates below answer alike.
  virtual StoreStatus update_seller(Seller& s) = 0;
  /// The lists below (by id) answer nullopt when the store could not read them: never an empty
  /// list for an outage.
  virtual std::optional<std::vector<Seller>> list_sellers() = 0;

  virtual StoreStatus insert_campaign(const Campaign& c) = 0;
  /// The campaign (kOk), none (kNotFound), or kUnavailable when the store could not read it.
  virtual Lookup<Campaign> get_campaign(std::string_view id) = 0;
  virtual Lookup<Campaign> find_campaign_by_key_hash(std::string_view key_hash) = 0;
  /// Replaces a campaign's name, status, mode, sync timeout, per-minute ceiling and payout rule;
  /// its seller, vertical, key and creation time stay as they were. Versioned as update_seller.
  virtual StoreStatus update_campaign(Campaign& c) = 0;
  virtual std::optional<std::vector<Campaign>> list_campaigns(
      std::string_view seller_id) = 0;  // "" = all

  virtual StoreStatus insert_api_key(const ApiKey& k) = 0;  // kConflict if the hash exists
  virtual Lookup<ApiKey> find_api_key_by_hash(std::string_view key_hash) = 0;
  virtual std::optional<std::vector<ApiKey>> list_api_keys() = 0;
  virtual Lookup<ApiKey> get_api_key(std::string_view id) = 0;
  /// Revokes the key if it is at `if_version` (or any with kAnyVersion; kConflict if not):
  /// kOk also for a key revoked before, which keeps its first revocation time and version.
  virtual StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms,
                                     std::int64_t if_version) = 0;
  /// Records a use of the key at `at_ms` (a later one only); kNotFound when nothing changed.
  virtual StoreStatus touch_api_key(std::string_view id, std::int64_t at_ms) = 0;

  // --- dashboard users and their sessions ----------------------------------------------------
  /// kConflict if the id or the e-mail exists, or the seller or buyer named does not.
  virtual StoreStatus insert_user(const User& u) = 0;
  virtual Lookup<User> get_user(std::string_view id) = 0;
  virtual Lookup<User> find_user_by_email(std::string_view email) = 0;  // e-mail in lower case
  virtual std::optional<std::vector<User>> list_users() = 0;
  /// Replaces a user's name, active flag and password hash; versioned as update_seller. A user
  /// made inactive, or given a new password hash, loses its sessions in the same transaction:
  /// all of them, but for `keep_session` (a token hash: the session that changed its own
  /// password).
  virtual StoreStatus update_user(User& u, std::string_view keep_session = {}) = 0;
  /// Sets an active user's password hash and nothing else of it (a user's own password change),
  /// and ends its sessions but `keep_session`, in one transaction; kNotFound if there is no such
  /// user or it is inactive (disabling a user wins over its concurrent password change).
  virtual StoreStatus set_user_password(std::string_view user_id, std::string_view password_hash,
                                        std::string_view keep_session) = 0;
  /// Sets an active user's time zone (an IANA name the caller has checked) and nothing else of
  /// it, leaving its version; kNotFound if there is no such user or it is inactive.
  virtual StoreStatus set_user_time_zone(std::string_view user_id, std::string_view zone) = 0;

  // --- buyers ---------------------------------------------------------------------------------
  virtual StoreStatus insert_buyer(const Buyer& b) = 0;
  virtual StoreStatus update_buyer(Buyer& b) = 0;  // versioned as update_seller
  /// The buyer (kOk), none (kNotFound), or kUnavailable when the store could not read it.
  virtual Lookup<Buyer> get_buyer(std::string_view id) = 0;
  /// Oldest first; nullopt when the store cannot say (never an empty page for an outage).
  virtual std::optional<std::vector<Buyer>> list_buyers(const BuyerQuery& q) = 0;
  /// A number that changes whenever any buyer changes: workers reload their cache when it moves.
  virtual std::int64_t buyers_version() = 0;

  // --- verticals' re-offer policies set by the operator (docs/reoffers.md) --------------------
  /// Every vertical's setting the operator made, by vertical name, reset ones too (`active`
  /// false: operator_policy finds only the others); nullopt when the store could not read them
  /// (never an empty list for an outage). A vertical absent has its configured policy.
  virtual std::optional<std::vector<VerticalReoffer>> list_vertical_reoffers() = 0;
  /// Sets the operator's policy of `v.vertical` if its setting is still at the version read
  /// (`v.version`; 0: never set): kOk with `v.version` the new one and `v` active, kConflict
  /// when another change came first (docs/versions.md).
  virtual StoreStatus set_vertical_reoffer(VerticalReoffer& v) = 0;
  /// Resets it (back to the configured policy) at `version`, the row kept, its version moved:
  /// kOk, or kConflict when it is at another version or not set.
  virtual StoreStatus reset_vertical_reoffer(std::string_view vertical, std::int64_t version) = 0;
};

}  // namespace leadflow
