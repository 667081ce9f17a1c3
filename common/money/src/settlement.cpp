#include "leadflow/money/settlement.hpp"

namespace leadflow::money {

SettledSale settle_sold(const SalesHeld& held, Cents price, const PayoutOfTotal& payout_of_total) {
  SettledSale s;
  s.slot = held.count;
  s.price = price;
  s.lead_price = held.revenue + price;
  s.lead_payout = payout_of_total(s.lead_price);
  s.payout = s.lead_payout - held.payout;
  s.first = held.count == 0;
  return s;
}

}  // namespace leadflow::money
