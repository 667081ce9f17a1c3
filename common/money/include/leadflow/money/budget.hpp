#pragma once
#include <cstdint>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/buyer.hpp"

namespace leadflow::money {

/// What one more sale takes from a buyer's window: one lead from a cap, its price from a
/// budget (cents).
std::int64_t window_taking(bool budget, Cents price);

/// Whether a window already holding `held` (leads sold and reserved, or cents spent and
/// reserved, returns given back) has room for `taking` more under `limit`: a window is full
/// once one more would pass its limit, so a limit of 10 admits the tenth.
bool window_has_room(std::int64_t held, std::int64_t taking, std::int64_t limit);

/// The least a sale to the buyer can cost it: its fixed price, or a bid at its floor (at least
/// one cent). A budget without room for it has no room at all.
Cents least_sale_price(const Buyer& b);

}  // namespace leadflow::money
