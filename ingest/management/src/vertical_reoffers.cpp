// A vertical's re-offer policy as the operator sets and resets it (docs/reoffers.md): checked as
// a campaign's, kept in the store beside the configured one, each change in the change log.
// Declared in management.hpp.
#include <algorithm>
#include <string>

#include "leadflow/management/management.hpp"

namespace leadflow {

using nlohmann::json;

bool take_reoffer_policy(const json& value, ReofferPolicy& out, FieldErrors& errors) {
  ReofferPolicy p;
  const std::string error = read_reoffer_policy(value, p, "reoffer", true);
  if (error.empty()) {
    out = std::move(p);
    return true;
  }
  const auto colon = error.find(": ");
  errors.push_back({error.substr(0, colon), value.is_object() ? "invalid" : "invalid_type",
                    colon == std::string::npos ? error : error.substr(colon + 2)});
  return false;
}

namespace {

// What the change log keeps of a vertical's policy: its name, the policy it follows and where
// that comes from.
json logged(const json& view) {
  return {{"name", view.value("vertical", "")},
          {"reoffer", view.value("reoffer", json())},
          {"reoffer_source", view.value("reoffer_source", json())}};
}

// The vertical's setting as the store holds it, reset or not; never set: version 0, not in force.
Lookup<VerticalReoffer> setting_of(AccountsStore& store, std::string_view vertical) {
  const auto rows = store.list_vertical_reoffers();
  if (!rows) return {StoreStatus::kUnavailable, std::nullopt};
  if (const VerticalReoffer* found = vertical_setting(*rows, vertical))
    return {StoreStatus::kOk, *found};
  return {StoreStatus::kOk, VerticalReoffer{std::string(vertical), {}, 0, 0, false}};
}

}  // namespace

Management::Created Management::set_vertical_reoffer(std::string_view vertical, const json& body,
                                                     const IfMatch& if_match,
                                                     const ChangeActor& by) {
  Created out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  for (const auto& [k, v] : body.items())
    if (k != "reoffer") out.errors.push_back({k, "unknown_field", "unknown field"});
  const auto it = body.find("reoffer");
  if (it == body.end()) out.errors.push_back({"reoffer", "required", "is required"});
  if (it != body.end() && it->is_null() && out.errors.empty())
    return reset_vertical_reoffer(vertical, if_match, by);
  ReofferPolicy policy;
  if (it != body.end() && !it->is_null()) take_reoffer_policy(*it, policy, out.errors);
  if (!out.errors.empty()) return out;
  const Vertical* v = verticals_.find(vertical);
  if (!v) {
    out.status = StoreStatus::kNotFound;
    return out;
  }
  out = change_record<VerticalReoffer>(
      if_match, [&] { return setting_of(store_, vertical); },
      [&](VerticalReoffer& r, FieldErrors&) {
        r.policy = policy;
        r.set_at_ms = clock_.now_ms();
      },
      [&](VerticalReoffer& r) { return store_.set_vertical_reoffer(r); },
      [&](const VerticalReoffer& r) { return verticals_.to_json(*v, &r); });
  if (out.status == StoreStatus::kOk)
    note_change(by, "updated", "vertical", vertical, logged(out.before), logged(out.body));
  return out;
}

Management::Created Management::reset_vertical_reoffer(std::string_view vertical,
                                                       const IfMatch& if_match,
                                                       const ChangeActor& by) {
  Created out;
  const Vertical* v = verticals_.find(vertical);
  if (!v) {
    out.status = StoreStatus::kNotFound;
    return out;
  }
  bool was_set = false;  // none set (or reset already): nothing to write or log
  out = change_record<VerticalReoffer>(
      if_match, [&] { return setting_of(store_, vertical); },
      [&](VerticalReoffer& r, FieldErrors&) {
        was_set = r.active;
        r.active = false;
      },
      [&](VerticalReoffer& r) {
        if (!was_set) return StoreStatus::kOk;
        const StoreStatus s = store_.reset_vertical_reoffer(r.vertical, r.version);
        if (s == StoreStatus::kOk) ++r.version;
        return s;
      },
      [&](const VerticalReoffer& r) { return verticals_.to_json(*v, &r); });
  if (out.status == StoreStatus::kOk && was_set)
    note_change(by, "reset", "vertical", vertical, logged(out.before), logged(out.body));
  return out;
}

}  // namespace leadflow
