#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/domain/field_error.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/audit.hpp"

namespace leadflow {

/// An e-mail as users are found by: trimmed, ASCII lower case.
std::string normalise_email(std::string_view email);
/// Whether `email` (normalised) looks like an address: one @, a dotted domain, no blanks or
/// control characters, at most 254 bytes.
bool plausible_email(std::string_view email);

/// Appends a change of an account record to the change log `changes`: the fields of `before` and
/// `after` (the records' views, never a secret: diff_fields) that differ, and "password" marked
/// "(secret)" when `password` changed. An update that changed no field is not written. The
/// change itself is made already (this is called right after it, not in its transaction): when
/// the log cannot be written, it is logged ("change_log_unwritten") and counted in
/// leadflow_change_log_unwritten_total, and the change stands.
void record_change(AuditStore& changes, const Clock& clock, const ChangeActor& by,
                   std::string_view action, std::string_view kind, std::string_view id,
                   const nlohmann::json& before, const nlohmann::json& after,
                   bool password = false);

/// What a change asks of the version of the record it changes (a request's If-Match,
/// docs/versions.md): nothing (no If-Match, or "*": any existing record), or one of `versions`.
struct IfMatch {
  bool any = true;
  std::vector<std::int64_t> versions;  // with `any` false; empty: no version matches

  bool allows(std::int64_t version) const {
    return any || std::find(versions.begin(), versions.end(), version) != versions.end();
  }
};

/// How many times a change asking for any version is applied again to a record that others keep
/// changing under it (each time to the record as it then is) before it gives up.
inline constexpr int kChangeAttempts = 8;

/// Creating sellers, campaigns, API keys and dashboard users: shared by the /v1 management
/// endpoints and leadflow-admin, so both apply the same rules. Every change it makes is written
/// to the change log (`changes`) right after the change itself, naming `by`, the actor.
/// A re-offer policy member (`value`, named "reoffer") checked as LEADFLOW_VERTICALS's are
/// (read_reoffer_policy, none allowed): true with `out` set, or false with the refusal in
/// `errors` naming the member at fault ("reoffer.delays_seconds"). A campaign's own policy and a
/// vertical's set by the operator are read by this one function.
bool take_reoffer_policy(const nlohmann::json& value, ReofferPolicy& out, FieldErrors& errors);

/// Thread-safe (stateless over the store).
class Management {
 public:
  Management(AccountsStore& store, const VerticalRegistry& verticals, const Clock& clock,
             AuditStore& changes)
      : store_(store), verticals_(verticals), clock_(clock), changes_(changes) {}

  struct Created {
    StoreStatus status = StoreStatus::kOk;
    FieldErrors errors;
    nlohmann::json body;  // the created record; for keys, includes the secret once
    /// The record's version: the new one after a change, the current one when `stale`.
    std::int64_t version = 0;
    /// kConflict: the record is not at a version the IfMatch allows (`stale`, a 412), or others
    /// kept changing it for kChangeAttempts tries (not `stale`, a 409).
    bool stale = false;
    /// After a change: the record's view as it was read before it (null after a creation).
    nlohmann::json before;
  };

  /// record_change on this Management's change log and clock.
  void note_change(const ChangeActor& by, std::string_view action, std::string_view kind,
                   std::string_view id, const nlohmann::json& before, const nlohmann::json& after,
                   bool password = false) {
    record_change(changes_, clock_, by, action, kind, id, before, after, password);
  }

  /// {"name", "status", "payout": {"model": "revshare"|"fixed", "value"}} (default 70%
  /// revshare): the payout rule of the seller's Surface A leads.
  Created create_seller(const nlohmann::json& body, const ChangeActor& by = {});
  /// PUT: replaces the fields the body names ("name", "status", "payout") and keeps the rest;
  /// kNotFound when there is no such seller. A new payout rule prices the sales made after it.
  /// Every update below changes the record only at a version `if_match` allows, and writes it
  /// only if no other change came in between (the store compares versions); asked for any
  /// version, it applies the body again to the record as it then is, so the fields the body
  /// does not name keep what others wrote meanwhile.
  Created update_seller(const std::string& id, const nlohmann::json& body,
                        const IfMatch& if_match = {}, const ChangeActor& by = {});
  /// {"seller_id", "name", "vertical", "status", "mode", "sync_timeout_ms",
  ///  "rate_limit_per_minute", "payout": {"model": "revshare"|"fixed", "value"}}.
  Created create_campaign(const nlohmann::json& body, const ChangeActor& by = {});
  /// PUT: replaces the fields the body names ("name", "status", "mode", "sync_timeout_ms",
  /// "rate_limit_per_minute", "payout"), checked as create_campaign checks them, and keeps the
  /// rest. "seller_id", "vertical", "campaign_id", "created_at" and "campaign_key_hint" may be
  /// sent back as they read; a different value, or any "campaign_key", is a field error
  /// (code "read_only"). kNotFound when there is no such campaign.
  Created update_campaign(const std::string& id, const nlohmann::json& body,
                          const IfMatch& if_match = {}, const ChangeActor& by = {});
  /// {"name", "seller_id" or "buyer_id" (neither for an operator key), "plan", "scopes": [...]}.
  /// Seller keys may hold leads:write, leads:read and reports:read only; buyer keys leads:read,
  /// returns:write and reports:read (all three by default).
  Created create_api_key(const nlohmann::json& body, const ChangeActor& by = {});
  /// A dashboard user: {"email", "name", "password", "account": "operator"|"seller"|"buyer",
  /// "seller_id" (seller) or "buyer_id" (buyer), "active" (default true)}. The e-mail is kept in
  /// lower case and must be new; the password (passwords::problem_with) is kept only as its
  /// Argon2id hash. The body is the user, never the password or its hash.
  Created create_user(const nlohmann::json& body, const ChangeActor& by = {});
  /// PUT: "name", "active", "password", each optional; kNotFound when there is no such user.
  /// Making a user inactive or giving it a new password ends its sessions.
  Created update_user(const std::string& id, const nlohmann::json& body,
                      const IfMatch& if_match = {}, const ChangeActor& by = {});
  /// Revokes an API key at a version `if_match` allows (kConflict + `stale` when it is not);
  /// revoking a revoked key is kOk. `body` is the key as revoked.
  Created revoke_api_key(const std::string& id, const IfMatch& if_match = {},
                         const ChangeActor& by = {});
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
  /// Only the hash is written: nothing else of the `user` read before (its active flag above
  /// all) is written back; a user disabled meanwhile stays disabled (kNotFound).
  Created change_password(const User& user, const nlohmann::json& new_password,
                          const std::string& keep_session_hash, const ChangeActor& by = {});
  /// Sets a user's own time zone (PUT /v1/session/time-zone): `zone` must be an IANA name the
  /// zone database knows (TimeZone, docs/time-zones.md), else an error naming `time_zone`. Only
  /// the zone is written; a user disabled meanwhile stays disabled (kNotFound). `body` is the
  /// zone's name as stored.
  Created set_time_zone(const User& user, const nlohmann::json& zone);

  /// Sets a vertical's re-offer policy (PUT /v1/verticals/{name}/reoffer, docs/reoffers.md):
  /// `body` is {"reoffer": policy}, the policy checked as a campaign's (take_reoffer_policy;
  /// {"delays_seconds": []}: none); null is reset_vertical_reoffer. Stored, it replaces the
  /// configured one (LEADFLOW_VERTICALS) for the leads decided after the workers read it.
  /// Changed as a record is (change_record): only at a version `if_match` allows (the
  /// setting's, 0 for a vertical never set; stale: 412), written at the version read.
  /// kNotFound for no such vertical. `body` of the answer: the vertical's whole view
  /// (VerticalRegistry::to_json with its setting), `before` the view as it was read. The
  /// change is written to the change log: kind "vertical", its name as the id.
  Created set_vertical_reoffer(std::string_view vertical, const nlohmann::json& body,
                               const IfMatch& if_match = {}, const ChangeActor& by = {});
  /// Back to the configured policy (DELETE /v1/verticals/{name}/reoffer), versioned as a set
  /// is: the operator's one reset (its row kept, its version moved) and the change logged
  /// ("reset"); kOk and nothing written or logged when none was in force.
  Created reset_vertical_reoffer(std::string_view vertical, const IfMatch& if_match = {},
                                 const ChangeActor& by = {});

 private:
  AccountsStore& store_;
  const VerticalRegistry& verticals_;
  const Clock& clock_;
  AuditStore& changes_;
};

/// The one way a user, buyer, campaign or seller is changed (docs/versions.md): read it
/// (`read`: a Lookup), refuse it at a version `if_match` does not allow, apply the change to it
/// (`apply(record, errors)` appends field errors to refuse it), and write it only if it is still
/// at the version read (`write(record)`: the store compares versions in the write and sets the
/// new one). When another change came in between, all again from the read, so that the change
/// lands on what the other wrote instead of over it; asked for a version, the read then finds
/// it stale. On success the body is `view(record)`.
template <class Record, class Read, class Apply, class Write, class View>
Management::Created change_record(const IfMatch& if_match, Read&& read, Apply&& apply,
                                  Write&& write, View&& view) {
  Management::Created out;
  for (int attempt = 0; attempt < kChangeAttempts; ++attempt) {
    const Lookup<Record> found = read();
    if (!found.value) {
      out.status = found.status == StoreStatus::kOk ? StoreStatus::kNotFound : found.status;
      return out;
    }
    Record record = *found.value;
    if (!if_match.allows(record.version)) {
      out.status = StoreStatus::kConflict;
      out.stale = true;
      out.version = record.version;
      return out;
    }
    apply(record, out.errors);
    if (!out.errors.empty()) return out;
    out.status = write(record);
    if (out.status == StoreStatus::kConflict) continue;
    if (out.status == StoreStatus::kOk) {
      out.before = view(*found.value);
      out.body = view(record);
      out.version = record.version;
    }
    return out;
  }
  return out;  // kConflict, not stale: others kept changing it
}

}  // namespace leadflow
