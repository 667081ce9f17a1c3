#pragma once
// What a buyer may change of its own configuration (docs/api.md, "A buyer's own account"): its
// status (pause and resume) always; its caps and filters where the operator opened them
// (Buyer::self_caps, Buyer::self_filters); nothing else.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/field_error.hpp"

namespace leadflow {

/// The verdict on a buyer's own change.
enum class SelfChange {
  kAllowed,     // every field it names is one the buyer may change
  kReadOnly,    // a field no buyer changes itself (`errors` names each, code "read_only")
  kNotAllowed,  // a field the operator did not open to this buyer (`field` names the first)
};

struct SelfChangeVerdict {
  SelfChange verdict = SelfChange::kAllowed;
  std::string field;  // kNotAllowed: "caps" or "filters"
};

/// Judges the body of a buyer's own PUT against what `b` lets it change. `version` (the view's
/// own figure) passes. Every read-only field is added to `errors`; they are judged before the
/// operator's choice, so a body naming `priority` is a 400 whatever the buyer is allowed.
SelfChangeVerdict judge_self_change(const nlohmann::json& body, const Buyer& b,
                                    FieldErrors& errors);

/// The change of status a buyer makes itself: `active` true resumes its buying, false pauses it.
/// Returns whether anything changes.
bool set_buying(Buyer& b, bool active);

}  // namespace leadflow
