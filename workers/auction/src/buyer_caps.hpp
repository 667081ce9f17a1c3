#pragma once
// A buyer's caps and budgets at an instant: the windows they count over (in the buyer's own time
// zone) and the first look at them before a buyer is pinged. The guarantee is the store's post
// intent reservation (DistributionStore::record_post_intent), which takes these windows.
#include <cstdint>
#include <string>
#include <vector>

#include "leadflow/domain/buyer.hpp"
#include "leadflow/store/distribution.hpp"

namespace leadflow {

/// One cap or budget of a buyer and the window it counts in now.
struct NamedCap {
  const char* name;  // the window: hourly, daily, weekly, monthly
  CapWindow window;
};

/// The buyer's cap and budget windows at `unix_s`, in the buyer's schedule's time zone (UTC
/// without one): an hour, a day, a week and a month start as TimeZone says they do locally.
std::vector<NamedCap> cap_windows(const Buyer& b, std::int64_t unix_s);

/// "cap:<window>" or "budget:<window>" (":unknown" when the store cannot count) for a buyer with
/// no room left in `caps`, else "".
std::string cap_ineligibility(DistributionStore& store, const Buyer& b,
                              const std::vector<NamedCap>& caps);

/// Why a post intent's reservation was refused, from what the buyer limits.
const char* limit_reached_reason(const Buyer& b, std::int64_t unix_s);

}  // namespace leadflow
