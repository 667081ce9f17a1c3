#pragma once
// Where the workers may connect on a buyer's behalf: only public addresses over http(s).
#include <string>

struct sockaddr;

namespace leadflow {

/// True when the URL is http(s) and its host resolves only to public addresses.
bool is_public_http_url(const std::string& url, std::string* why);

/// "" for a public address, else what it is ("loopback", "private", "link-local", ...). Used when
/// saving a buyer and again on every outbound connection (a name may resolve differently later).
const char* non_public_address_kind(const ::sockaddr* address);

}  // namespace leadflow
