#pragma once
// Second chances (docs/reoffers.md): when a lead nobody bought live is offered again, to whom and
// at what price. Pure functions on plain values, so every rule is tested without a store.
#include <cstdint>
#include <optional>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/verticals.hpp"

namespace leadflow::reoffer {

/// Where a lead stands when its next re-offer is weighed.
struct LeadSoFar {
  std::int64_t received_at_ms = 0;
  int offers_made = 0;  // re-offers already run (0 right after the live auction)
  int sales = 0;        // its sales so far (aged shares sold by earlier re-offers)
  bool sold_exclusively = false;
};

/// When the lead's next re-offer is due, or nullopt when it is offered no more: the vertical
/// has no policy or no delay left, the lead was sold exclusively or holds max_sales shares, or
/// the next time is past the policy's window or the vertical's consent window (both counted
/// from its receipt; a re-offer due exactly at the consent window's end is past it).
/// Example: delays 900 s and 7,200 s, received at 12:00 → 12:15, then 14:00, then none.
std::optional<std::int64_t> next_offer_at(const Vertical& v, const LeadSoFar& lead);
/// The same by `policy` in place of the vertical's: the one the lead follows, its campaign's own
/// where it has one (reoffer_policy_of, leadflow/domain/verticals.hpp). The vertical still gives
/// max_sales and the consent window.
std::optional<std::int64_t> next_offer_at(const Vertical& v, const ReofferPolicy& policy,
                                          const LeadSoFar& lead);

/// Whether the lead may still be sold at `now_ms` (before its consent window ends): a re-offer
/// claimed late (a worker was down for days) past it is dropped, not run.
bool within_consent(const Vertical& v, std::int64_t received_at_ms, std::int64_t now_ms);

/// Whether `b` may be offered the aged lead: it takes aged leads, and the lead was never posted
/// to it (live or in an earlier re-offer) nor sold to it.
bool may_offer(const Buyer& b, const std::vector<Attempt>& history, const std::vector<Sale>& sales);

/// Whether the buyer's aged price is known without a ping: its pricing.aged_price.
inline bool priced_without_ping(const Buyer& b) { return b.aged_price > 0; }

/// The buyer's price for the aged lead: its pricing.aged_price, else the aged bid of its answer
/// to the aged ping (nullopt: no offer; an aged bid under its min_bid is no offer either).
std::optional<Cents> aged_offer(const Buyer& b, std::optional<Cents> aged_bid);

/// How many more buyers may buy the lead: max_sales less its sales, or 0 once sold
/// exclusively (a lead sold whole is never offered again).
int room_left(const Vertical& v, int sales, bool sold_exclusively);

}  // namespace leadflow::reoffer
