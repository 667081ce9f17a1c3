#include "leadflow/visibility/suppression.hpp"

namespace leadflow {

bool may_manage_suppression_list(const Viewer& viewer, std::string_view owner_buyer_id) {
  if (viewer.is_operator()) return true;
  // A list belongs to its buyer as its identity does: a buyer sees its own, a seller none.
  return !owner_buyer_id.empty() &&
         may_see(viewer, FieldClass::kBuyerIdentity, std::string_view(), owner_buyer_id);
}

bool may_hold_suppression_lists(const Viewer& viewer) {
  return viewer.is_operator() || viewer.is_buyer();
}

}  // namespace leadflow
