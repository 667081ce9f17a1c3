#include "leadflow/money/budget.hpp"

#include <algorithm>

namespace leadflow::money {

std::int64_t window_taking(bool budget, Cents price) { return budget ? price : 1; }

bool window_has_room(std::int64_t held, std::int64_t taking, std::int64_t limit) {
  return held + taking <= limit;
}

Cents least_sale_price(const Buyer& b) {
  return b.pricing == PricingModel::kFixed ? b.price : std::max<Cents>(1, b.min_bid);
}

}  // namespace leadflow::money
