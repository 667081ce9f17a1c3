#pragma once
// The parts of a buyer URL that the address policy judges, for the buyer parser and the policy.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace leadflow {

/// The longest buyer URL accepted.
inline constexpr std::size_t kMaxUrl = 2048;

struct HttpUrl {
  std::string scheme;  // "http" | "https"
  std::string host;    // lower-cased; an IPv6 literal without brackets
  int port = 0;        // 0: scheme default
};

/// `url` split into scheme, host and port, or nullopt with the reason in `why` (if not null):
/// http or https, ASCII without spaces or control characters, no credentials, at most 2048 bytes.
std::optional<HttpUrl> parse_http_url(std::string_view url, std::string* why);

}  // namespace leadflow
