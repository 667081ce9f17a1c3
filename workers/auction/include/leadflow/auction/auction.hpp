#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// One buyer's offer in an auction: a ping's bid, or a fixed price.
struct Bid {
  const Buyer* buyer = nullptr;
  Cents amount = 0;     // for the lead alone; 0: the buyer buys it shared only
  std::string ping_id;  // "" for buyers that were not pinged
  Cents shared = 0;     // for a share of it; 0: the buyer buys it exclusively only
};

/// Why `buyer` cannot take `lead` at `unix_s`, or "" when it can, judged on configuration alone
/// (active, vertical, states, ZIP prefixes, sources, custom rules, schedule). Caps and per-buyer
/// duplicates need the store and are checked by the distributor.
std::string static_ineligibility(const Buyer& buyer, const Lead& lead, std::int64_t unix_s);

/// Evaluates one custom rule against the lead's custom fields.
bool custom_rule_matches(const CustomRule& rule, const CustomFields& fields);

/// Orders bids for the post phase: amount descending, then priority descending, then a weighted
/// random draw among equals (a buyer of weight 3 comes first three times as often as one of
/// weight 1). Bids of 0 or below the buyer's min_bid are dropped.
std::vector<Bid> rank_bids(std::vector<Bid> bids, std::mt19937_64& rng);

/// The same order for shared purchases, by the shared amount; bids with none are dropped.
/// min_bid, a floor for exclusive bids, does not apply to a share.
std::vector<Bid> rank_shared_bids(std::vector<Bid> bids, std::mt19937_64& rng);
/// Ranks an aged lead's offers (docs/reoffers.md) as rank_bids does, but a buyer's aged price is
/// its own floor for an aged lead: min_bid, the floor of its live bids, does not drop it.
std::vector<Bid> rank_aged_bids(std::vector<Bid> bids, std::mt19937_64& rng);

/// Whether selling the lead to the best `max_sales` of `shared` (ranked) earns more than selling
/// it to the best of `exclusive` (ranked) alone. A tie goes to the exclusive sale, which the
/// buyer values more. False when the vertical sells exclusively (max_sales 1).
bool shared_earns_more(const std::vector<Bid>& exclusive, const std::vector<Bid>& shared,
                       int max_sales);

}  // namespace leadflow
