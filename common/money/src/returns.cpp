#include "leadflow/money/returns.hpp"

namespace leadflow::money {

bool return_window_open(std::int64_t sold_at_ms, std::int64_t window_ms, std::int64_t at_ms) {
  return at_ms < sold_at_ms + window_ms;
}

Reversal reverse(const ReturnableSale& sale) { return {sale.price, sale.payout}; }

}  // namespace leadflow::money
