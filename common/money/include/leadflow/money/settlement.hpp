#pragma once
#include <cstdint>
#include <functional>

#include "leadflow/base/money.hpp"

namespace leadflow::money {

/// What a lead's sales hold before a settlement (a shared sale is settled buyer by buyer, so
/// earlier settlements may have sold shares already).
struct SalesHeld {
  std::int64_t count = 0;
  Cents revenue = 0;
  Cents payout = 0;
};

/// The sale an operator's settlement "sold at `price`" writes, and the lead after it.
struct SettledSale {
  std::int64_t slot = 0;  // after the lead's sales so far
  Cents price = 0;
  Cents payout = 0;       // what the seller's payout on the lead's new total grows by
  Cents lead_price = 0;   // the lead's total revenue after the sale
  Cents lead_payout = 0;  // the seller's whole payout after the sale
  bool first = false;     // the lead's first sale: the lead names this buyer
};

/// What the seller earns of sales totalling the argument (its payout rule, payout.hpp).
using PayoutOfTotal = std::function<Cents(Cents total)>;

/// Settles one buyer's post as sold at `price`: the seller is paid by its rule on the lead's
/// whole total, and this sale carries what that payout grows by, so the lead's payout is the
/// rule on its total however many shares were settled and in whatever order.
SettledSale settle_sold(const SalesHeld& held, Cents price, const PayoutOfTotal& payout_of_total);

}  // namespace leadflow::money
