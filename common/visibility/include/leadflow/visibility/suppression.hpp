#pragma once
// Who may see and manage which suppression list (docs/suppression.md): the one visibility model's
// answer for lists, which the API's routes and the console's pages ask.
#include <string_view>

#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// Whether `viewer` may see, fill and delete the list of `owner_buyer_id` ("" = the operator's):
/// the operator every list; a buyer its own lists only (neither the operator's nor another
/// buyer's); a seller none, nor may it learn that lists exist (a buyer's list names a buyer).
bool may_manage_suppression_list(const Viewer& viewer, std::string_view owner_buyer_id);

/// Whether `viewer` may make or hold lists at all: the operator and buyers, never a seller.
bool may_hold_suppression_lists(const Viewer& viewer);

}  // namespace leadflow
