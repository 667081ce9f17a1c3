#pragma once
// The change log (docs/security.md): who changed which seller, campaign, API key, buyer or
// dashboard user, when, through which surface, and each field from what to what. Account
// objects, and the erasure of a lead's personal data (kind "lead": its id, never the person,
// leadflow/erasure/erasure.hpp); never a secret.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace leadflow {

/// One field of a change: its path in the object's JSON form ("payout.value",
/// "delivery.headers.X-Token") and its value before and after (null: absent).
struct FieldChange {
  std::string field;
  nlohmann::json before;
  nlohmann::json after;
};

/// Who made a change: a dashboard user (us_...) or an API key (key_...), its name at the time,
/// and the surface: "api" (an API key), "dashboard" (a signed-in user), "admin" (leadflow-admin,
/// no actor id).
struct ChangeActor {
  std::string id;
  std::string name;
  std::string surface;
};

/// One entry of the change log, as it is stored: append-only.
struct ChangeEntry {
  std::string id;  // ch_ + a sortable id: newer entries sort after older ones
  std::int64_t at_ms = 0;
  ChangeActor actor;
  std::string action;       // "created", "updated", "revoked", "password_changed", "erased"
  std::string object_kind;  // "seller", "campaign", "api_key", "buyer", "user", "lead"
  std::string object_id;
  std::string object_name;
  std::vector<FieldChange> changes;
};

/// The fields of an object's JSON form that differ between `before` and `after` (an object
/// made: `before` null; every field then is new), in the order of their paths. Nested objects
/// are compared member by member (paths joined with "."); arrays and scalars as wholes. Fields
/// that change with every write ("version", "updated_at", "last_used_at") are left out. A
/// field whose name looks secret (is_secret_header's words: key, token, secret, password, ...,
/// but the public "key_id", "key_hint" and "campaign_key_hint") is never quoted: it reads
/// "(secret)" on either side when it has a value. Pure.
std::vector<FieldChange> diff_fields(const nlohmann::json& before, const nlohmann::json& after);

/// What a search of the log matches an entry by: its object's id and name and its actor's id
/// and name, ASCII lower case, one a line.
std::string change_search_text(const ChangeEntry& e);
/// A search as change_search_text's text is matched (a part of it): ASCII lower case, trimmed.
std::string change_search_key(std::string_view q);

/// The changes as stored and answered: [{"field", "before", "after"}, ...].
nlohmann::json changes_to_json(const std::vector<FieldChange>& changes);
/// changes_to_json's inverse; entries of another shape are skipped.
std::vector<FieldChange> changes_from_json(const nlohmann::json& j);

}  // namespace leadflow
