#pragma once
// The signature of a postback (docs/postbacks.md): the header
//   Leadflow-Signature: t=1700000000,v1=<64 hex digits>
// where v1 is the HMAC-SHA256, under the endpoint's secret, of the timestamp, a dot and the raw
// body ("1700000000.{...}"). A receiver recomputes it, compares in constant time, and refuses a
// timestamp further than kToleranceSeconds from its own clock (a replayed capture).
#include <cstdint>
#include <string>
#include <string_view>

namespace leadflow::postbacks {

inline constexpr std::string_view kSignatureHeader = "Leadflow-Signature";
inline constexpr std::string_view kEventIdHeader = "Leadflow-Event-Id";
inline constexpr std::int64_t kToleranceSeconds = 300;

/// "t=<unix_s>,v1=<hex>" for `body` under `secret`.
std::string sign(std::string_view secret, std::int64_t unix_s, std::string_view body);

/// Whether `header` signs `body` under `secret` at a time within `tolerance_s` of `now_s`.
/// What a receiver does; leadflow's tests verify with it as a receiver would.
bool verify(std::string_view header, std::string_view secret, std::string_view body,
            std::int64_t now_s, std::int64_t tolerance_s = kToleranceSeconds);

}  // namespace leadflow::postbacks
