#pragma once
#include <cstdint>

#include "leadflow/base/money.hpp"

namespace leadflow::money {

/// A sale a buyer may return: what it was sold for and when.
struct ReturnableSale {
  Cents price = 0;
  Cents payout = 0;
  std::int64_t sold_at_ms = 0;
};

/// Whether a sale made at `sold_at_ms` may still be returned at `at_ms`: the window is open
/// while at_ms < sold_at_ms + window_ms (its end excluded).
bool return_window_open(std::int64_t sold_at_ms, std::int64_t window_ms, std::int64_t at_ms);

/// What a return takes back: exactly what the sale wrote, its price from the buyer's account
/// and its payout from the seller's (the return row keeps them, the ledger entry negates them:
/// ledger.hpp's return_entry).
struct Reversal {
  Cents price = 0;
  Cents payout = 0;
};
Reversal reverse(const ReturnableSale& sale);

}  // namespace leadflow::money
