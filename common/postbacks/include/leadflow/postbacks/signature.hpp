#pragma once
// The signature of a postback (docs/postbacks.md): the header
//   Leadflow-Signature: t=1700000000,v1=<64 hex digits>
// where v1 is the HMAC-SHA256, under the endpoint's secret, of the timestamp, a dot and the raw
// body ("1700000000.{...}"). A receiver recomputes it, compares in constant time, and refuses a
// timestamp further than kToleranceSeconds from its own clock (a replayed capture).
// While an endpoint's secret is being rotated the header carries one v1 per secret, over the
// same timestamp and body (the new secret's first):
//   Leadflow-Signature: t=1700000000,v1=<new secret's>,v1=<previous secret's>
// and a receiver accepts the request when any v1 matches the secret it holds, so it keeps
// working with either secret through the overlap.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace leadflow::postbacks {

inline constexpr std::string_view kSignatureHeader = "Leadflow-Signature";
inline constexpr std::string_view kEventIdHeader = "Leadflow-Event-Id";
inline constexpr std::int64_t kToleranceSeconds = 300;

/// "t=<unix_s>,v1=<hex>" for `body` under `secret`.
std::string sign(std::string_view secret, std::int64_t unix_s, std::string_view body);
/// "t=<unix_s>,v1=<hex>,v1=<hex>...": one v1 per secret, in their order (at least one).
std::string sign(std::span<const std::string> secrets, std::int64_t unix_s, std::string_view body);

/// Whether `header` signs `body` under `secret` at a time within `tolerance_s` of `now_s`: any
/// of its v1 values matches (the others may be of a secret the receiver does not hold).
/// What a receiver does; leadflow's tests verify with it as a receiver would.
bool verify(std::string_view header, std::string_view secret, std::string_view body,
            std::int64_t now_s, std::int64_t tolerance_s = kToleranceSeconds);

}  // namespace leadflow::postbacks
