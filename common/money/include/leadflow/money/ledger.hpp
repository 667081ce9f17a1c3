#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow::money {

/// The kinds of ledger entry (the ledger's CHECK constraint holds the same two).
inline constexpr std::string_view kSaleEntry = "sale";
inline constexpr std::string_view kReturnEntry = "return";

/// One immutable movement of money (SPEC §7), in cents: written by the store in the transaction
/// of what it records, never updated or deleted. kind "sale": revenue = the price the buyer
/// owes, payout = what the seller is owed; kind "return": both reversed (negative). Per lead,
/// and in total, margin = revenue - payout.
struct LedgerEntry {
  std::int64_t id = 0;  // increasing in the order written (given by the store)
  std::string kind;
  std::string lead_id;
  std::string buyer_id;
  std::string seller_id;    // "" for a lead posted with an operator key
  std::string campaign_id;  // "" on Surface A
  Cents revenue = 0;
  Cents payout = 0;
  std::int64_t at_ms = 0;
};

/// The accounts a lead's money is booked to besides its buyers: its seller and its campaign
/// ("" when it has none).
struct LeadAccounts {
  std::string_view lead_id;
  std::string_view seller_id;
  std::string_view campaign_id;
};

/// The entry of one sale: the buyer owes the price, the seller is owed the sale's payout.
LedgerEntry sale_entry(const LeadAccounts& lead, const Sale& sale, std::int64_t sold_at_ms);

/// The entries of a lead's sales, one per sale in the order of `sales` (their slots), all at
/// the time the lead was sold.
std::vector<LedgerEntry> sale_entries(const LeadAccounts& lead, std::span<const Sale> sales,
                                      std::int64_t sold_at_ms);

/// The entry of a return: exactly the returned sale's price and payout, negated, at the time
/// of the return. `price` and `payout` are the sale's (see returns.hpp).
LedgerEntry return_entry(const LeadAccounts& lead, std::string_view buyer_id, Cents price,
                         Cents payout, std::int64_t returned_at_ms);

}  // namespace leadflow::money
