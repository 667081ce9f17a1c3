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
  Cents amount = 0;
  std::string ping_id;  // "" for buyers that were not pinged
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

}  // namespace leadflow
