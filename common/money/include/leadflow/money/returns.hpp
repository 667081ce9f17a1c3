#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/lead.hpp"

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

/// A buyer's return window, in milliseconds, from its `return_window_days`. A window of 0 days
/// means its purchases cannot be returned at all.
std::int64_t return_window_ms(int days);

/// Where a buyer's purchase stands for a return, as its lead page shows it before asking.
enum class ReturnStanding {
  kOpen,         // it may be returned until `window_ends_at_ms`
  kNoReturns,    // the buyer's window is 0 days: it takes no returns
  kWindowEnded,  // the window ended at `window_ends_at_ms`
  kReturned,     // it was returned already
};
struct ReturnOutlook {
  ReturnStanding standing = ReturnStanding::kNoReturns;
  std::int64_t window_ends_at_ms = 0;  // sold_at + the window (0 for kNoReturns)
};

/// "open", "no_returns", "window_ended", "returned".
std::string_view to_string(ReturnStanding s);

/// The standing at `now_ms` of a sale made at `sold_at_ms` to a buyer whose window is
/// `window_days`: the same rule a return meets (return_window_open), told in advance.
ReturnOutlook return_outlook(int window_days, std::int64_t sold_at_ms, bool returned,
                             std::int64_t now_ms);

/// Whom a return is for, or why it is for no one.
enum class ReturnerStatus {
  kFound,        // `buyer_id` returns it
  kNotBought,    // the asking buyer did not buy the lead
  kBuyerNeeded,  // the operator named no buyer, and the lead was sold to several
  kNotSold,      // the operator named no buyer, and the lead was not sold
};
struct Returner {
  ReturnerStatus status = ReturnerStatus::kNotSold;
  std::string buyer_id;
};

/// Who returns the lead `sold`: a buyer (`asking_buyer_id`, "" when the operator asks) returns
/// only a lead it bought, one of its sales or the summary of a one-sale outcome; the operator
/// returns for the buyer it names (`named_buyer_id`), else for the lead's one buyer. Whether a
/// named buyer bought the lead is left to the store, which answers it in the transaction that
/// records the return.
Returner returner_of(const Distribution& sold, std::string_view asking_buyer_id,
                     std::string_view named_buyer_id);

}  // namespace leadflow::money
