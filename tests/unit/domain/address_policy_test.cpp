// Where a buyer URL may point, range by range: the IPv6 forms that embed or reach an IPv4 address
// are judged by that address, and the special-purpose ranges that are not public are refused,
// both when a buyer is saved (is_public_http_url) and when a connection is opened
// (non_public_address_kind).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "leadflow/domain/address_policy.hpp"

namespace leadflow {
namespace {

// What the connection-time check says of an address literal ("" for public).
std::string kind_of(const std::string& literal) {
  sockaddr_in6 v6{};
  if (inet_pton(AF_INET6, literal.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    return non_public_address_kind(reinterpret_cast<const sockaddr*>(&v6));
  }
  sockaddr_in v4{};
  EXPECT_EQ(inet_pton(AF_INET, literal.c_str(), &v4.sin_addr), 1) << literal;
  v4.sin_family = AF_INET;
  return non_public_address_kind(reinterpret_cast<const sockaddr*>(&v4));
}

// Both checks refuse the literal, and say why.
void expect_refused(const std::string& literal) {
  EXPECT_NE(kind_of(literal), "") << literal;
  const bool v6 = literal.find(':') != std::string::npos;
  const std::string url = v6 ? "http://[" + literal + "]/post" : "http://" + literal + "/post";
  std::string why;
  EXPECT_FALSE(is_public_http_url(url, &why)) << url;
  EXPECT_FALSE(why.empty()) << url;
}

void expect_public(const std::string& literal) {
  EXPECT_EQ(kind_of(literal), "") << literal;
  const bool v6 = literal.find(':') != std::string::npos;
  const std::string url = v6 ? "http://[" + literal + "]/post" : "http://" + literal + "/post";
  std::string why;
  EXPECT_TRUE(is_public_http_url(url, &why)) << url << ": " << why;
}

// ::ffff:0:0/96, IPv4-mapped: the address is the IPv4 one.
TEST(AddressPolicy, Ipv4MappedIsJudgedByItsIpv4Address) {
  for (const char* a : {"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:172.16.0.1",
                        "::ffff:192.168.1.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1",
                        "::ffff:0.0.0.0", "::ffff:0:0", "::ffff:255.255.255.255"})
    expect_refused(a);
  expect_public("::ffff:93.184.216.34");
}

// ::ffff:0:0:0/96, IPv4-translated (SIIT, RFC 2765): the embedded address is the IPv4 one.
TEST(AddressPolicy, Ipv4TranslatedIsJudgedByItsIpv4Address) {
  for (const char* a : {"::ffff:0:7f00:1", "::ffff:0:a00:1", "::ffff:0:c0a8:101",
                        "::ffff:0:a9fe:a9fe", "::ffff:0:0:0", "::ffff:0:ac10:1"})
    expect_refused(a);
  expect_public("::ffff:0:5db8:d822");  // 93.184.216.34
}

// 64:ff9b::/96, the NAT64 well-known prefix: the translator reaches the embedded address.
TEST(AddressPolicy, Nat64WellKnownPrefixIsJudgedByItsIpv4Address) {
  for (const char* a : {"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe",
                        "64:ff9b::c0a8:1", "64:ff9b::0:0"})
    expect_refused(a);
  expect_public("64:ff9b::5db8:d822");
}

// 64:ff9b:1::/48, local-use NAT64 (RFC 8215): a network's own translator, never public.
TEST(AddressPolicy, LocalUseNat64IsRefused) {
  for (const char* a : {"64:ff9b:1::5db8:d822", "64:ff9b:1::a00:1", "64:ff9b:1:ffff::1"})
    expect_refused(a);
}

// 2002::/16, 6to4: the relay reaches the IPv4 address in bits 16-47.
TEST(AddressPolicy, SixToFourIsJudgedByItsIpv4Address) {
  for (const char* a : {"2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1", "2002:a9fe:a9fe::"})
    expect_refused(a);
  expect_public("2002:5db8:d822::1");
}

// 2001::/32, Teredo (RFC 4380): the server address in bits 32-63, the client's obfuscated
// (inverted) in the last 32 bits. A private address in either is refused.
TEST(AddressPolicy, TeredoIsRefusedWhenItEmbedsAPrivateAddress) {
  expect_refused("2001:0:a00:1::1");                       // server 10.0.0.1
  expect_refused("2001:0:4136:e378:8000:63bf:f5ff:fffe");  // client 10.0.0.1
  expect_refused("2001:0:4136:e378:8000:63bf:80ff:fffe");  // client 127.0.0.1
  expect_refused("2001:0:4136:e378:8000:63bf:5601:5601");  // client 169.254.169.254 (~0x56015601)
}

// ::/8 beyond the forms above (IPv4-compatible, unspecified, loopback, whatever else IANA keeps
// there) is never a public address; neither are the other special-purpose blocks outside
// 2000::/3 nor the documentation and benchmarking blocks inside it.
TEST(AddressPolicy, ReservedIpv6BlocksAreRefused) {
  for (const char* a : {"::",          "::1",       "::127.0.0.1",      "::a00:1",
                        "0:0:0:1::",   "::1:0:0:0", "64:ff9b:0:0:1::1", "100::1",
                        "2001:db8::1", "2001:2::1", "2001:10::1",       "2001:20::1",
                        "3fff::1",     "fc00::1",   "fd00::1",          "fe80::1",
                        "fec0::1",     "ff02::1",   "4000::1",          "8000::1",
                        "e000::1"})
    expect_refused(a);
  for (const char* a : {"2606:2800:220:1:248:1893:25c8:1946", "2a00:1450:4001:81b::200e",
                        "2001:4860:4860::8888", "2400:cb00::1"})
    expect_public(a);
}

TEST(AddressPolicy, ReservedIpv4BlocksAreRefused) {
  for (const char* a :
       {"0.0.0.0", "10.0.0.1", "100.64.0.1", "127.0.0.1", "169.254.169.254", "172.16.0.1",
        "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.0.1", "198.18.0.1", "198.51.100.1",
        "203.0.113.1", "224.0.0.1", "240.0.0.1", "255.255.255.255"})
    expect_refused(a);
  for (const char* a : {"93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1"})
    expect_public(a);
}

}  // namespace
}  // namespace leadflow
