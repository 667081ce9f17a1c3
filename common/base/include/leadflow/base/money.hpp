#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leadflow {

/// Money is integer cents everywhere inside; decimals exist only at the edges (JSON).
using Cents = std::int64_t;

inline constexpr Cents kMaxPriceCents =
    100'000'000;  // $1,000,000.00: above it is a typo, not a bid

/// A JSON number (dollars) to cents, rounded half away from zero. Refuses NaN, infinities,
/// negatives and amounts above kMaxPriceCents.
std::optional<Cents> cents_from_decimal(double dollars);

/// "14.25", "-3.10", "0.00".
std::string format_cents(Cents cents);

/// Cents as the JSON number a client sees (14.25). Exact for every value below 2^53 cents.
double cents_to_decimal(Cents cents);

/// `amount` * `basis_points` / 10000, rounded half up (a revshare payout).
Cents apply_basis_points(Cents amount, std::int64_t basis_points);

}  // namespace leadflow
