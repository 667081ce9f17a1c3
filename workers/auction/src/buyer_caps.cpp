#include "buyer_caps.hpp"

#include <algorithm>

#include "leadflow/base/tz.hpp"
#include "leadflow/money/budget.hpp"

namespace leadflow {

// The buyer's cap and budget windows now, in the buyer's own time zone (a day and a month start
// at the buyer's local midnight).
std::vector<NamedCap> cap_windows(const Buyer& b, std::int64_t unix_s) {
  std::vector<NamedCap> caps;
  if (!b.caps.is_object()) return caps;
  std::string zone = "UTC";
  if (b.schedule.is_object() && b.schedule.contains("timezone") &&
      b.schedule["timezone"].is_string())
    zone = b.schedule["timezone"].get<std::string>();
  auto tz = TimeZone::cached(zone);
  if (!tz) tz = TimeZone::cached("UTC");
  struct Window {
    const char* name;
    std::int64_t (TimeZone::*start)(std::int64_t) const;
  };
  static constexpr Window kWindows[] = {{"hourly", &TimeZone::start_of_hour},
                                        {"daily", &TimeZone::start_of_day},
                                        {"weekly", &TimeZone::start_of_week},
                                        {"monthly", &TimeZone::start_of_month}};
  for (const auto& w : kWindows) {
    auto it = b.caps.find(w.name);
    if (it == b.caps.end() || !it->is_number_integer()) continue;
    caps.push_back({w.name, {((*tz).*(w.start))(unix_s)*1000, it->get<std::int64_t>()}});
  }
  // Budgets: cents of sales, stored as "daily_budget_cents" and "monthly_budget_cents".
  static constexpr Window kBudgets[] = {{"daily", &TimeZone::start_of_day},
                                        {"monthly", &TimeZone::start_of_month}};
  for (const auto& w : kBudgets) {
    auto it = b.caps.find(std::string(w.name) + "_budget_cents");
    if (it == b.caps.end() || !it->is_number_integer()) continue;
    caps.push_back(
        {w.name, {((*tz).*(w.start))(unix_s)*1000, it->get<std::int64_t>(), CapUnit::kCents}});
  }
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
