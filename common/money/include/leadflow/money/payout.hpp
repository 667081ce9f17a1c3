#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/accounts.hpp"

namespace leadflow::money {

/// A seller's payout model: revshare (`value` in basis points of the price, 7000 = 70%) or
/// fixed (`value` in cents per sale).
struct PayoutModel {
  bool fixed = false;
  std::int64_t value = 0;
};

/// The model a lead's sale pays its seller by: the lead's campaign's (Surface B), else its
/// seller's own (Surface A); nullopt for a lead of neither (posted with an operator key), which
/// earns no one anything.
std::optional<PayoutModel> payout_model_of(const Campaign* campaign, const Seller* seller);

/// What the seller earns of sales totalling `price` under `model`: revshare rounded half up, or
/// the fixed amount, never more than the price; 0 without a model.
Cents payout_of(const std::optional<PayoutModel>& model, Cents price);

/// payout_of(payout_model_of(campaign, seller), price).
Cents seller_payout(const Campaign* campaign, const Seller* seller, Cents price);

/// The parts of a payout of `payout` over sales at `prices`, in proportion to the prices and to
/// the cent: they add up to `payout` exactly (the cents rounding leaves go to the largest
/// fractions, earlier sales first among equals), and with a payout no more than the total no
/// part exceeds its price. A total of zero books the whole payout on the first sale.
std::vector<Cents> split_payout(const std::vector<Cents>& prices, Cents payout);

/// A lead sold to one or more buyers, priced: the total the buyers pay, the seller's payout by
/// its model on that total, and each sale's part of the payout (split_payout), in the order of
/// `prices`.
struct PricedSales {
  Cents total = 0;
  Cents payout = 0;
  std::vector<Cents> parts;
};
PricedSales price_sales(const std::vector<Cents>& prices, const std::optional<PayoutModel>& model);

}  // namespace leadflow::money
