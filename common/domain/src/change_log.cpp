#include "leadflow/domain/change_log.hpp"

#include <algorithm>
#include <array>

#include "buyer_fields.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// Written anew by every write: a change of them says nothing the entry's time does not.
bool churns(std::string_view name) {
  return name == "version" || name == "updated_at" || name == "last_used_at";
}

// Public names that hold a secret-looking word: ids and hints of keys, shown everywhere.
bool public_name(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kPublic = {
      "key_id", "key_hint", "campaign_key_hint", "scopes",
      // A postback endpoint's rotation times (docs/postbacks.md): when, not what.
      "secret_rotated_at", "previous_secret_expires_at"};
  return std::find(kPublic.begin(), kPublic.end(), name) != kPublic.end();
}

json shown(const json& value, bool secret) {
  if (!secret || value.is_null()) return value;
  return "(secret)";
}

void diff_into(const json& before, const json& after, const std::string& path, bool secret,
               std::vector<FieldChange>& out) {
  if (before.is_object() || after.is_object()) {
    const json empty = json::object();
    const json& b = before.is_object() ? before : empty;
    const json& a = after.is_object() ? after : empty;
    // A scalar that became an object (or back) is one change of the whole field.
    if ((!before.is_object() && !before.is_null()) || (!after.is_object() && !after.is_null())) {
      out.push_back({path, shown(before, secret), shown(after, secret)});
      return;
    }
    // Both sides' members, each once (nlohmann's objects iterate in key order).
    for (const auto& [name, value] : b.items()) {
      if (path.empty() && churns(name)) continue;
      const bool hidden = secret || (!public_name(name) && is_secret_header(name));
      const auto other = a.find(name);
      diff_into(value, other == a.end() ? json() : *other, path.empty() ? name : path + "." + name,
                hidden, out);
    }
    for (const auto& [name, value] : a.items()) {
      if (b.contains(name) || (path.empty() && churns(name))) continue;
      const bool hidden = secret || (!public_name(name) && is_secret_header(name));
      diff_into(json(), value, path.empty() ? name : path + "." + name, hidden, out);
    }
    return;
  }
  if (before != after) out.push_back({path, shown(before, secret), shown(after, secret)});
}

}  // namespace

std::vector<FieldChange> diff_fields(const json& before, const json& after) {
  std::vector<FieldChange> out;
  diff_into(before, after, "", false, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const FieldChange& x, const FieldChange& y) { return x.field < y.field; });
  return out;
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}
}  // namespace

std::string change_search_text(const ChangeEntry& e) {
  return lower(e.object_id + "\n" + e.object_name + "\n" + e.actor.id + "\n" + e.actor.name);
}

std::string change_search_key(std::string_view q) {
  while (!q.empty() && (q.front() == ' ' || q.front() == '\t')) q.remove_prefix(1);
  while (!q.empty() && (q.back() == ' ' || q.back() == '\t')) q.remove_suffix(1);
  return lower(q);
}

json changes_to_json(const std::vector<FieldChange>& changes) {
  json out = json::array();
  for (const auto& c : changes)
    out.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}});
  return out;
}

std::vector<FieldChange> changes_from_json(const json& j) {
  std::vector<FieldChange> out;
  if (!j.is_array()) return out;
  for (const auto& c : j) {
    if (!c.is_object() || !c.contains("field") || !c["field"].is_string()) continue;
    out.push_back(
        {c["field"].get<std::string>(), c.value("before", json()), c.value("after", json())});
  }
  return out;
}

}  // namespace leadflow
