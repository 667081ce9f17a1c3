#include "leadflow/money/payout.hpp"

#include <algorithm>
#include <utility>

namespace leadflow::money {

std::optional<PayoutModel> payout_model_of(const Campaign* campaign, const Seller* seller) {
  if (campaign != nullptr) return PayoutModel{campaign->payout_fixed, campaign->payout_value};
  if (seller != nullptr) return PayoutModel{seller->payout_fixed, seller->payout_value};
  return std::nullopt;
}

Cents payout_of(const std::optional<PayoutModel>& model, Cents price) {
  if (!model) return 0;
  const Cents payout = model->fixed ? model->value : apply_basis_points(price, model->value);
  return std::min(payout, price);  // never pay a seller more than the sale brought
}

Cents seller_payout(const Campaign* campaign, const Seller* seller, Cents price) {
  return payout_of(payout_model_of(campaign, seller), price);
}

std::vector<Cents> split_payout(const std::vector<Cents>& prices, Cents payout) {
  std::vector<Cents> parts(prices.size(), 0);
  Cents total = 0;
  for (Cents p : prices) total += p;
  if (prices.empty()) return parts;
  if (total <= 0) {
    parts[0] = payout;
    return parts;
  }
  // Each part rounded down, then the cents left over (fewer than the sales) one each to the
  // parts with the largest fractions, earlier sales first among equals: no part ends above
  // its exact share rounded up, so none exceeds its sale's price.
  Cents given = 0;
  std::vector<std::pair<__int128, std::size_t>> fractions;
  for (std::size_t i = 0; i < prices.size(); ++i) {
    // 128-bit product: cents times cents overflows 64 bits only far beyond any real price, but
    // the ledger must be exact even then.
    const __int128 exact = static_cast<__int128>(payout) * prices[i];
    parts[i] = static_cast<Cents>(exact / total);
    fractions.emplace_back(exact % total, i);
    given += parts[i];
  }
  std::stable_sort(fractions.begin(), fractions.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (std::size_t k = 0; given < payout && k < fractions.size(); ++k, ++given)
    ++parts[fractions[k].second];
  return parts;
}

PricedSales price_sales(const std::vector<Cents>& prices, const std::optional<PayoutModel>& model) {
  PricedSales out;
  for (Cents p : prices) out.total += p;
  out.payout = payout_of(model, out.total);
  out.parts = split_payout(prices, out.payout);
  return out;
}

}  // namespace leadflow::money
