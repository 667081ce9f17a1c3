#pragma once
// The key a client address is limited under, the same for every per-address limit: the
// connection cap, failed authentications, sign-ins.
#include <string>
#include <string_view>

namespace leadflow {

/// IPv4 as it is (an IPv4-mapped IPv6 address too, as its IPv4 form); IPv6 by its /64
/// ("2001:db8:1:2::/64"), the block one subscriber is given and can pick addresses from at will,
/// so that walking through one's own /64 gains nothing. Anything that is not an IP address comes
/// back unchanged. Thread-safe.
std::string address_limit_key(std::string_view address);

}  // namespace leadflow
