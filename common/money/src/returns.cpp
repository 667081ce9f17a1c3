#include "leadflow/money/returns.hpp"
#include "leadflow/base/time_format.hpp"

#include <algorithm>

namespace leadflow::money {

bool return_window_open(std::int64_t sold_at_ms, std::int64_t window_ms, std::int64_t at_ms) {
  return at_ms < sold_at_ms + window_ms;
}

Reversal reverse(const ReturnableSale& sale) { return {sale.price, sale.payout}; }

std::int64_t return_window_ms(int days) { return days * kDayMs; }

Returner returner_of(const Distribution& sold, std::string_view asking_buyer_id,
                     std::string_view named_buyer_id) {
  if (!asking_buyer_id.empty()) {
    const bool bought = sold.buyer_id == asking_buyer_id ||
                        std::any_of(sold.sales.begin(), sold.sales.end(),
                                    [&](const Sale& s) { return s.buyer_id == asking_buyer_id; });
    if (!bought) return {ReturnerStatus::kNotBought, ""};
    return {ReturnerStatus::kFound, std::string(asking_buyer_id)};
  }
  if (!named_buyer_id.empty()) return {ReturnerStatus::kFound, std::string(named_buyer_id)};
  if (sold.sales.size() > 1) return {ReturnerStatus::kBuyerNeeded, ""};
  if (sold.buyer_id.empty()) return {ReturnerStatus::kNotSold, ""};
  return {ReturnerStatus::kFound, sold.buyer_id};
}

std::string_view to_string(ReturnStanding s) {
  switch (s) {
    case ReturnStanding::kOpen:
      return "open";
    case ReturnStanding::kNoReturns:
      return "no_returns";
    case ReturnStanding::kWindowEnded:
      return "window_ended";
    case ReturnStanding::kReturned:
      break;
  }
  return "returned";
}

ReturnOutlook return_outlook(int window_days, std::int64_t sold_at_ms, bool returned,
                             std::int64_t now_ms) {
  if (returned) {
    const std::int64_t end = window_days > 0 ? sold_at_ms + return_window_ms(window_days) : 0;
    return {ReturnStanding::kReturned, end};
  }
  if (window_days <= 0) return {ReturnStanding::kNoReturns, 0};
  const std::int64_t window = return_window_ms(window_days);
  return {return_window_open(sold_at_ms, window, now_ms) ? ReturnStanding::kOpen
                                                         : ReturnStanding::kWindowEnded,
          sold_at_ms + window};
}

}  // namespace leadflow::money
