#pragma once
// What the buyer parser (buyer_config.cpp) and the buyer's API view (buyer_json.cpp) must agree
// on: the custom rule operators' names and which header values are secrets.
#include <array>
#include <string>
#include <string_view>

namespace leadflow {

/// The API names of CustomRule::Op, in the enum's order.
inline constexpr std::array<std::string_view, 9> kOpNames = {"eq",  "ne", "in",  "nin",   "gt",
                                                             "gte", "lt", "lte", "exists"};

/// Whether a header's value is a secret (Authorization, X-Api-Key, ...): shown masked.
bool is_secret_header(std::string_view name);

/// "****" + the last four characters, so an operator can tell keys apart without reading them.
/// Values under 12 bytes show nothing: four characters of an eight-character secret is half of it.
std::string mask_secret(std::string_view value);

}  // namespace leadflow
