#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace leadflow {

/// Identifier prefixes: every id in a body says what it names.
inline constexpr std::string_view kLeadPrefix = "ld_";
inline constexpr std::string_view kBuyerPrefix = "by_";
inline constexpr std::string_view kSellerPrefix = "sl_";
inline constexpr std::string_view kCampaignPrefix = "cp_";
inline constexpr std::string_view kKeyPrefix = "key_";
inline constexpr std::string_view kPingPrefix = "pg_";
inline constexpr std::string_view kRequestPrefix = "rq_";
inline constexpr std::string_view kUserPrefix = "us_";
inline constexpr std::string_view kChangePrefix = "ch_";  // an entry of the change log
inline constexpr std::string_view kSuppressionListPrefix = "sup_";

/// A new sortable identifier: prefix + 26 Crockford base32 characters holding a 48-bit
/// millisecond timestamp and 80 random bits (ULID layout). Ids made later in one process sort
/// after earlier ones, even within one millisecond. Thread-safe.
std::string new_id(std::string_view prefix, std::int64_t unix_ms);
std::string new_id(std::string_view prefix);

/// True when `id` is `prefix` followed by 26 valid Crockford base32 characters.
bool is_valid_id(std::string_view id, std::string_view prefix);

/// The millisecond timestamp inside a valid id, or -1.
std::int64_t id_time_ms(std::string_view id, std::string_view prefix);

}  // namespace leadflow
