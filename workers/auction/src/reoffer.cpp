// The re-offer rules (leadflow/auction/reoffer.hpp).
#include "leadflow/auction/reoffer.hpp"
#include "leadflow/base/time_format.hpp"

#include <algorithm>

namespace leadflow::reoffer {

namespace {

std::int64_t consent_ends_ms(const Vertical& v, std::int64_t received_at_ms) {
  return received_at_ms + static_cast<std::int64_t>(std::max(1, v.consent_days)) * kDayMs;
}
}  // namespace

int room_left(const Vertical& v, int sales, bool sold_exclusively) {
  if (sold_exclusively) return 0;
  return std::max(0, std::max(1, v.max_sales) - sales);
}

std::optional<std::int64_t> next_offer_at(const Vertical& v, const LeadSoFar& lead) {
  return next_offer_at(v, v.reoffer, lead);
}

std::optional<std::int64_t> next_offer_at(const Vertical& v, const ReofferPolicy& policy,
                                          const LeadSoFar& lead) {
  const auto& delays = policy.delays_s;
  if (lead.offers_made < 0 || static_cast<std::size_t>(lead.offers_made) >= delays.size())
    return std::nullopt;
  if (room_left(v, lead.sales, lead.sold_exclusively) == 0) return std::nullopt;
  const std::int64_t at =
      lead.received_at_ms + delays[static_cast<std::size_t>(lead.offers_made)] * 1000;
  if (policy.window_s > 0 && at > lead.received_at_ms + policy.window_s * 1000) return std::nullopt;
  if (at >= consent_ends_ms(v, lead.received_at_ms)) return std::nullopt;
  return at;
}

bool within_consent(const Vertical& v, std::int64_t received_at_ms, std::int64_t now_ms) {
  return now_ms < consent_ends_ms(v, received_at_ms);
}

bool may_offer(const Buyer& b, const std::vector<Attempt>& history,
               const std::vector<Sale>& sales) {
  if (!b.accepts_aged) return false;
  for (const auto& a : history)
    if (a.kind == AttemptKind::kPost && a.buyer_id == b.id) return false;
  for (const auto& s : sales)
    if (s.buyer_id == b.id) return false;
  return true;
}

std::optional<Cents> aged_offer(const Buyer& b, std::optional<Cents> aged_bid) {
  if (b.aged_price > 0) return b.aged_price;
  if (!aged_bid || *aged_bid <= 0 || *aged_bid < b.min_bid) return std::nullopt;
  return aged_bid;
}

}  // namespace leadflow::reoffer
