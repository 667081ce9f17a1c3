#include "leadflow/money/ledger.hpp"

namespace leadflow::money {

LedgerEntry sale_entry(const LeadAccounts& lead, const Sale& sale, std::int64_t sold_at_ms) {
  return {0,
          std::string(kSaleEntry),
          std::string(lead.lead_id),
          sale.buyer_id,
          std::string(lead.seller_id),
          std::string(lead.campaign_id),
          sale.price,
          sale.payout,
          sold_at_ms};
}

std::vector<LedgerEntry> sale_entries(const LeadAccounts& lead, std::span<const Sale> sales,
                                      std::int64_t sold_at_ms) {
  std::vector<LedgerEntry> entries;
  entries.reserve(sales.size());
  for (const Sale& s : sales) entries.push_back(sale_entry(lead, s, sold_at_ms));
  return entries;
}

LedgerEntry return_entry(const LeadAccounts& lead, std::string_view buyer_id, Cents price,
                         Cents payout, std::int64_t returned_at_ms) {
  // A return undoes the sale to the cent: no fee, no proration.
  return {0,
          std::string(kReturnEntry),
          std::string(lead.lead_id),
          std::string(buyer_id),
          std::string(lead.seller_id),
          std::string(lead.campaign_id),
          -price,
          -payout,
          returned_at_ms};
}

}  // namespace leadflow::money
