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

// The vertical's view with the policy the operator set (none: nullopt), or kUnavailable.
StoreStatus view_of(AccountsStore& store, const VerticalRegistry& verticals, const Vertical& v,
                    json& out) {
  const auto set = store.list_vertical_reoffers();
  if (!set) return StoreStatus::kUnavailable;
  const auto it = std::find_if(set->begin(), set->end(),
                               [&](const VerticalReoffer& r) { return r.vertical == v.name; });
  out = verticals.to_json(v, it == set->end() ? nullptr : &*it);
  return StoreStatus::kOk;
}

}  // namespace

Management::Created Management::set_vertical_reoffer(std::string_view vertical, const json& body,
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
    return reset_vertical_reoffer(vertical, by);
  VerticalReoffer set{std::string(vertical), {}, clock_.now_ms()};
  if (it != body.end() && !it->is_null()) take_reoffer_policy(*it, set.policy, out.errors);
  if (!out.errors.empty()) return out;
  const Vertical* v = verticals_.find(vertical);
  if (!v) {
    out.status = StoreStatus::kNotFound;
    return out;
  }
  if ((out.status = view_of(store_, verticals_, *v, out.before)) != StoreStatus::kOk) return out;
  if ((out.status = store_.set_vertical_reoffer(set)) != StoreStatus::kOk) return out;
  out.body = verticals_.to_json(*v, &set);
  note_change(by, "updated", "vertical", vertical, logged(out.before), logged(out.body));
  return out;
}

Management::Created Management::reset_vertical_reoffer(std::string_view vertical,
                                                       const ChangeActor& by) {
  Created out;
  const Vertical* v = verticals_.find(vertical);
  if (!v) {
    out.status = StoreStatus::kNotFound;
    return out;
  }
  if ((out.status = view_of(store_, verticals_, *v, out.before)) != StoreStatus::kOk) return out;
  out.status = store_.delete_vertical_reoffer(vertical);
  if (out.status == StoreStatus::kNotFound) out.status = StoreStatus::kOk;  // none was set
  if (out.status != StoreStatus::kOk) return out;
  out.body = verticals_.to_json(*v, nullptr);
  note_change(by, "reset", "vertical", vertical, logged(out.before), logged(out.body));
  return out;
}

}  // namespace leadflow
