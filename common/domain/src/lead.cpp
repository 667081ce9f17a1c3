#include "leadflow/domain/lead.hpp"

#include <array>

namespace leadflow {
namespace {

template <typename E, std::size_t N>
std::optional<E> parse_enum(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 8> kStatusNames = {
    "pending", "delivered", "unsold", "duplicate", "rejected", "failed", "returned", "test"};
constexpr std::array<std::string_view, 2> kKindNames = {"ping", "post"};
constexpr std::array<std::string_view, 7> kOutcomeNames = {
    "bid", "no_bid", "accepted", "rejected", "timeout", "error", "skipped"};

}  // namespace

std::string_view to_string(DeliveryStatus s) { return kStatusNames[static_cast<std::size_t>(s)]; }
std::optional<DeliveryStatus> parse_delivery_status(std::string_view s) {
  return parse_enum<DeliveryStatus>(kStatusNames, s);
}
std::string_view to_string(AttemptKind k) { return kKindNames[static_cast<std::size_t>(k)]; }
std::string_view to_string(AttemptOutcome o) { return kOutcomeNames[static_cast<std::size_t>(o)]; }
std::optional<AttemptKind> parse_attempt_kind(std::string_view s) {
  return parse_enum<AttemptKind>(kKindNames, s);
}
std::optional<AttemptOutcome> parse_attempt_outcome(std::string_view s) {
  return parse_enum<AttemptOutcome>(kOutcomeNames, s);
}

}  // namespace leadflow
