#include "leadflow/base/money.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace leadflow {

std::optional<Cents> cents_from_decimal(double dollars) {
  if (!std::isfinite(dollars) || dollars < 0) return std::nullopt;
  const double cents = std::round(dollars * 100.0);
  if (cents > static_cast<double>(kMaxPriceCents)) return std::nullopt;
  return static_cast<Cents>(cents);
}

std::string format_cents(Cents cents) {
  const bool negative = cents < 0;
  const std::uint64_t abs = negative ? 0 - static_cast<std::uint64_t>(cents) : cents;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%llu.%02llu", negative ? "-" : "",
                static_cast<unsigned long long>(abs / 100),
                static_cast<unsigned long long>(abs % 100));
  return buf;
}

double cents_to_decimal(Cents cents) { return static_cast<double>(cents) / 100.0; }

Cents apply_basis_points(Cents amount, std::int64_t basis_points) {
  // Half up on the absolute value, in integers: no floating point touches money here.
  const __int128 product = static_cast<__int128>(amount) * basis_points;
  const __int128 magnitude = product < 0 ? -product : product;
  const __int128 rounded = (magnitude + 5000) / 10000;
  return static_cast<Cents>(product < 0 ? -rounded : rounded);
}

}  // namespace leadflow
