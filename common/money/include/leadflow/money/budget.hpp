#pragma once
#include <cstdint>
#include <vector>

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

/// One cap or budget of a buyer in the period it counts now: leads sold (a cap) or cents of
/// their prices (a budget, `budget` true) since `since_ms`, at most `limit`, until the next
/// period starts at `until_ms`.
struct LimitWindow {
  const char* name = "";  // the period: hourly, daily, weekly, monthly
  bool budget = false;
  std::int64_t since_ms = 0;
  std::int64_t until_ms = 0;
  std::int64_t limit = 0;
};

/// The buyer's caps and budgets at `unix_s`, in its schedule's time zone (UTC without one): an
/// hour, a day, a week and a month start and end as TimeZone says they do locally, so a day where
/// the clocks change is 23 or 25 hours long. Caps first (hourly to monthly), then budgets.
std::vector<LimitWindow> limit_windows(const Buyer& b, std::int64_t unix_s);

}  // namespace leadflow::money
