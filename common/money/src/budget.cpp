#include "leadflow/money/budget.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "leadflow/base/tz.hpp"

namespace leadflow::money {

std::int64_t window_taking(bool budget, Cents price) { return budget ? price : 1; }

bool window_has_room(std::int64_t held, std::int64_t taking, std::int64_t limit) {
  return held + taking <= limit;
}

Cents least_sale_price(const Buyer& b) {
  return b.pricing == PricingModel::kFixed ? b.price : std::max<Cents>(1, b.min_bid);
}

std::vector<LimitWindow> limit_windows(const Buyer& b, std::int64_t unix_s) {
  std::vector<LimitWindow> out;
  if (!b.caps.is_object()) return out;
  std::string zone = "UTC";
  if (b.schedule.is_object() && b.schedule.contains("timezone") &&
      b.schedule["timezone"].is_string())
    zone = b.schedule["timezone"].get<std::string>();
  auto tz = TimeZone::cached(zone);
  if (!tz) tz = TimeZone::cached("UTC");
  // `past` is a time inside the next period, whatever its local length: half an hour past the
  // hour, a day and a half past a day's start (a day is 23 to 25 hours), and so on.
  struct Period {
    const char* name;
    std::int64_t (TimeZone::*start)(std::int64_t) const;
    std::int64_t past;
  };
  static constexpr Period kCaps[] = {{"hourly", &TimeZone::start_of_hour, 5'400},
                                     {"daily", &TimeZone::start_of_day, 129'600},
                                     {"weekly", &TimeZone::start_of_week, 648'000},
                                     {"monthly", &TimeZone::start_of_month, 2'764'800}};
  const auto window = [&](const Period& p, bool budget, std::int64_t limit) {
    const std::int64_t since = ((*tz).*(p.start))(unix_s);
    const std::int64_t until = ((*tz).*(p.start))(since + p.past);
    out.push_back({p.name, budget, since * 1000, until * 1000, limit});
  };
  for (const auto& p : kCaps) {
    auto it = b.caps.find(p.name);
    if (it != b.caps.end() && it->is_number_integer()) window(p, false, it->get<std::int64_t>());
  }
  // Budgets: cents of sales, stored as "daily_budget_cents" and "monthly_budget_cents".
  for (const auto& p : {kCaps[1], kCaps[3]}) {
    auto it = b.caps.find(std::string(p.name) + "_budget_cents");
    if (it != b.caps.end() && it->is_number_integer()) window(p, true, it->get<std::int64_t>());
  }
  return out;
}

}  // namespace leadflow::money
