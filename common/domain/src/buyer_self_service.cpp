// A buyer's own changes: the allow-list of the fields it may write, on the operator's choice.
#include "leadflow/domain/buyer_self_service.hpp"

#include <nlohmann/json.hpp>

namespace leadflow {

SelfChangeVerdict judge_self_change(const nlohmann::json& body, const Buyer& b,
                                    FieldErrors& errors) {
  SelfChangeVerdict out;
  if (!body.is_object()) {
    errors.push_back({"body", "invalid_type", "the body must be a JSON object"});
    out.verdict = SelfChange::kReadOnly;
    return out;
  }
  std::string refused;
  for (const auto& [name, value] : body.items()) {
    if (name == "version") continue;
    if (name == "caps") {
      if (!b.self_caps && refused.empty()) refused = name;
      continue;
    }
    if (name == "filters") {
      if (!b.self_filters && refused.empty()) refused = name;
      continue;
    }
    errors.push_back({name, "read_only",
                      name == "status" ? "pause or resume with POST /v1/account/pause or /resume"
                                       : "is set by the operator"});
  }
  if (!errors.empty()) {
    out.verdict = SelfChange::kReadOnly;
  } else if (!refused.empty()) {
    out.verdict = SelfChange::kNotAllowed;
    out.field = refused;
  }
  return out;
}

bool set_buying(Buyer& b, bool active) {
  if (b.active == active) return false;
  b.active = active;
  return true;
}

}  // namespace leadflow
