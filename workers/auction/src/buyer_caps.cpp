#include "buyer_caps.hpp"

#include <algorithm>

#include "leadflow/money/budget.hpp"

namespace leadflow {

// The buyer's cap and budget windows now, in the buyer's own time zone (a day and a month start
// at the buyer's local midnight): money::limit_windows, as the store's reservation takes them.
std::vector<NamedCap> cap_windows(const Buyer& b, std::int64_t unix_s) {
  std::vector<NamedCap> caps;
  for (const auto& w : money::limit_windows(b, unix_s))
    caps.push_back({w.name, {w.since_ms, w.limit, w.budget ? CapUnit::kCents : CapUnit::kLeads}});
  return caps;
}

// A cheap first look at the caps, so a full buyer is not pinged. It is not the guarantee: the
// post intent reserves the slot atomically (DistributionStore::record_post_intent), because several
// workers may pass this check for the last slot at once.
std::string cap_ineligibility(DistributionStore& store, const Buyer& b,
                              const std::vector<NamedCap>& caps) {
  for (const auto& c : caps) {
    // A count the store cannot give is treated as full: better unsold than over a cap.
    if (c.window.unit == CapUnit::kCents) {
      // A budget with no room for the cheapest sale the buyer could make.
      const auto spent = store.sales_cents(b.id, c.window.since_ms);
      if (!spent) return std::string("budget:") + c.name + ":unknown";
      if (!money::window_has_room(*spent, money::least_sale_price(b), c.window.limit))
        return std::string("budget:") + c.name;
      continue;
    }
    const auto sold = store.count_sales(b.id, c.window.since_ms);
    if (!sold) return std::string("cap:") + c.name + ":unknown";
    if (!money::window_has_room(*sold, money::window_taking(false, 0), c.window.limit))
      return std::string("cap:") + c.name;
  }
  return "";
}

// Why a post intent's reservation was refused, from what the buyer limits.
const char* limit_reached_reason(const Buyer& b, std::int64_t unix_s) {
  bool caps = false, budgets = false;
  for (const auto& c : cap_windows(b, unix_s))
    (c.window.unit == CapUnit::kCents ? budgets : caps) = true;
  if (caps && budgets) return "cap or budget reached";
  return budgets ? "budget reached" : "cap reached";
}

}  // namespace leadflow
