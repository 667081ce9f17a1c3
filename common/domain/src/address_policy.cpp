// Where a buyer URL may point: http(s) only, no credentials, and a host that resolves only to
// public addresses, so that a buyer configuration cannot aim the workers at the service's own
// network (loopback, private ranges, link-local, cloud metadata). Checked when a buyer is saved
// and again on every outbound connection.
#include "leadflow/domain/address_policy.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "http_url.hpp"
#include "leadflow/base/text.hpp"

namespace leadflow {
namespace {}  // namespace

std::optional<HttpUrl> parse_http_url(std::string_view url, std::string* why) {
  auto fail = [&](const char* reason) -> std::optional<HttpUrl> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  if (url.size() > kMaxUrl) return fail("URL is too long");
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7F || c == '\\')
      return fail("URL must be ASCII without spaces, control characters or backslashes");
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) return fail("URL must start with http:// or https://");
  HttpUrl out;
  out.scheme = ascii_lower(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https") return fail("scheme must be http or https");
  const std::string_view rest = url.substr(sep + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos)
    return fail("credentials in the URL (user:password@) are not allowed; use headers");
  if (authority.empty()) return fail("URL has no host");

  std::string_view host;
  std::string_view after;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated IPv6 literal");
    host = authority.substr(1, close - 1);
    after = authority.substr(close + 1);
    in6_addr addr{};
    if (host.empty() || host.size() >= INET6_ADDRSTRLEN ||
        inet_pton(AF_INET6, std::string(host).c_str(), &addr) != 1)
      return fail("invalid IPv6 literal");
  } else {
    const auto colon = authority.find(':');
    host = authority.substr(0, colon);
    after = colon == std::string_view::npos ? std::string_view{} : authority.substr(colon);
    if (host.empty()) return fail("URL has no host");
    if (host.size() > 253) return fail("host name is too long");
    // Labels of letters, digits, '-' and '_'; one trailing dot (a rooted name) is allowed.
    std::size_t label = 0;
    for (std::size_t i = 0; i < host.size(); ++i) {
      const char c = host[i];
      if (c == '.') {
        if (label == 0) return fail("host has an empty label");
        label = 0;
        continue;
      }
      if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_') return fail("invalid host name");
      if (++label > 63) return fail("host label is too long");
    }
  }
  if (!after.empty()) {
    if (after.front() != ':' || after.size() < 2 || after.size() > 6) return fail("invalid port");
    int port = 0;
    for (char c : after.substr(1)) {
      if (!is_digit(c)) return fail("invalid port");
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return fail("port out of range");
    out.port = port;
  }
  out.host = ascii_lower(host);
  return out;
}

namespace {

// "" for a public IPv4 address (host byte order), else what it is: the special-purpose blocks of
// RFC 6890 and its successors that are not globally reachable unicast.
const char* ipv4_kind(std::uint32_t a) {
  if ((a >> 24) == 0) return "unspecified";  // 0.0.0.0/8 "this network"
  if ((a >> 24) == 10) return "private";
  if ((a >> 24) == 127) return "loopback";
  if ((a & 0xFFC00000u) == 0x64400000u) return "carrier-grade NAT";  // 100.64/10
  if ((a & 0xFFFF0000u) == 0xA9FE0000u) return "link-local";         // 169.254/16, metadata
  if ((a & 0xFFF00000u) == 0xAC100000u) return "private";            // 172.16/12
  if ((a & 0xFFFFFF00u) == 0xC0000000u) return "reserved";           // 192.0.0/24
  if ((a & 0xFFFFFF00u) == 0xC0000200u) return "documentation";      // 192.0.2/24
  if ((a & 0xFFFFFF00u) == 0xC0586300u) return "reserved";           // 192.88.99/24 6to4 relay
  if ((a & 0xFFFF0000u) == 0xC0A80000u) return "private";            // 192.168/16
  if ((a & 0xFFFE0000u) == 0xC6120000u) return "reserved";           // 198.18/15 benchmarking
  if ((a & 0xFFFFFF00u) == 0xC6336400u) return "documentation";      // 198.51.100/24
  if ((a & 0xFFFFFF00u) == 0xCB007100u) return "documentation";      // 203.0.113/24
  if ((a & 0xF0000000u) == 0xE0000000u) return "multicast";          // 224/4
  if ((a & 0xF0000000u) == 0xF0000000u) return "reserved";           // 240/4, broadcast
  return "";
}

std::uint32_t ipv4_at(const unsigned char* b) {
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

bool all_zero(const unsigned char* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != 0) return false;
  return true;
}

// IPv6: only global unicast (2000::/3) is public, less its special-purpose blocks. The forms that
// embed an IPv4 address and reach it through a translator or a relay are judged by that address:
// ::ffff:127.0.0.1 reaches 127.0.0.1, and so does 64:ff9b::7f00:1 through a NAT64.
const char* ipv6_kind(const unsigned char* b) {
  if (b[0] == 0x00) {
    // ::/8, reserved by IANA, holds the unspecified and loopback addresses and the IPv4 forms.
    if (all_zero(b, 10) && b[10] == 0xFF && b[11] == 0xFF)
      return ipv4_kind(ipv4_at(b + 12));  // ::ffff:0:0/96, IPv4-mapped
    if (all_zero(b, 8) && b[8] == 0xFF && b[9] == 0xFF && b[10] == 0 && b[11] == 0)
      return ipv4_kind(ipv4_at(b + 12));  // ::ffff:0:0:0/96, IPv4-translated (SIIT)
    if (b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B) {
      if (all_zero(b + 4, 8)) return ipv4_kind(ipv4_at(b + 12));  // 64:ff9b::/96, NAT64
      if (b[4] == 0 && b[5] == 1) return "private";               // 64:ff9b:1::/48, local-use NAT64
    }
    if (all_zero(b, 16)) return "unspecified";
    if (all_zero(b, 15) && b[15] == 1) return "loopback";
    if (all_zero(b, 12)) return "IPv4-compatible";  // ::a.b.c.d, deprecated and never public
    return "reserved";
  }
  if ((b[0] & 0xFE) == 0xFC) return "private";                     // fc00::/7
  if (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) return "link-local";  // fe80::/10
  if (b[0] == 0xFE && (b[1] & 0xC0) == 0xC0) return "site-local";  // fec0::/10
  if (b[0] == 0xFF) return "multicast";
  if ((b[0] & 0xE0) != 0x20) return "reserved";  // outside 2000::/3: 100::/64 discard, ...
  if (b[0] == 0x20 && b[1] == 0x02) return ipv4_kind(ipv4_at(b + 2));  // 2002::/16, 6to4
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
    // 2001::/32, Teredo: the server's address in bits 32-63, the client's inverted in the last
    // 32. Refused when either is not public.
    if (*ipv4_kind(ipv4_at(b + 4)) != '\0') return "Teredo to a non-public";
    const std::uint32_t client = ~ipv4_at(b + 12);
    if (*ipv4_kind(client) != '\0') return "Teredo to a non-public";
    return "";
  }
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8)
    return "documentation";  // 2001:db8::/32
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] < 0x02)
    return "reserved";  // the rest of 2001::/23, IETF protocol assignments (benchmarking, ORCHID)
  if (b[0] == 0x3F && b[1] == 0xFF && (b[2] & 0xF0) == 0) return "documentation";  // 3fff::/20
  return "";
}

}  // namespace

const char* non_public_address_kind(const sockaddr* address) {
  if (address == nullptr) return "missing";
  if (address->sa_family == AF_INET)
    return ipv4_kind(ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr));
  if (address->sa_family == AF_INET6)
    return ipv6_kind(reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr.s6_addr);
  return "unsupported address family";
}

bool is_public_http_url(const std::string& url, std::string* why) {
  auto refuse = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  const auto parsed = parse_http_url(url, why);
  if (!parsed) return false;
  std::string host = parsed->host;
  if (!host.empty() && host.back() == '.') host.pop_back();  // "localhost." is localhost
  if (host == "localhost" || host.ends_with(".localhost") || host == "metadata.google.internal")
    return refuse("host " + host + " is not allowed (loopback or cloud metadata)");

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(parsed->host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr)
    return refuse("cannot resolve host");
  std::string refused;
  for (const addrinfo* ai = res; ai != nullptr && refused.empty(); ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const char* kind = "unsupported address family";
    if (ai->ai_family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      kind = ipv4_kind(ntohl(sin->sin_addr.s_addr));
      inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
    } else if (ai->ai_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      kind = ipv6_kind(sin6->sin6_addr.s6_addr);
      inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof text);
    }
    if (*kind != '\0')
      refused = std::string("host resolves to a ") + kind + " address (" + text + ")";
  }
  freeaddrinfo(res);
  if (!refused.empty()) return refuse(refused);
  if (why != nullptr) why->clear();
  return true;
}

}  // namespace leadflow
