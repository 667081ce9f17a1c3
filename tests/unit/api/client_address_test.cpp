// Whose address a request is: the peer's, unless the peer is a trusted proxy, and then the last
// hop in X-Forwarded-For that is not a trusted proxy itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "leadflow/api/http_util.hpp"

namespace leadflow::http {
namespace {

const std::vector<std::string> kProxies = {"10.0.0.0/8", "::1/128"};

TEST(ClientAddress, ThePeerWhenItIsNoTrustedProxy) {
  EXPECT_EQ(client_address("198.51.100.7", {}, kProxies), "198.51.100.7");
  // A client cannot choose its address by sending the header itself.
  EXPECT_EQ(client_address("198.51.100.7", {"203.0.113.1"}, kProxies), "198.51.100.7");
  EXPECT_EQ(client_address("198.51.100.7", {"203.0.113.1"}, {}), "198.51.100.7");
}

TEST(ClientAddress, TheLastUntrustedHopBehindTrustedProxies) {
  EXPECT_EQ(client_address("10.1.1.1", {"198.51.100.7"}, kProxies), "198.51.100.7");
  // Whatever the client put first is not believed: the proxy appended the address it saw.
  EXPECT_EQ(client_address("10.1.1.1", {"1.2.3.4, 198.51.100.7"}, kProxies), "198.51.100.7");
  // Two trusted proxies in a row.
  EXPECT_EQ(client_address("10.1.1.1", {"198.51.100.7, 10.2.2.2"}, kProxies), "198.51.100.7");
  // Several header fields read as one list, in order.
  EXPECT_EQ(client_address("10.1.1.1", {"1.2.3.4", "198.51.100.9"}, kProxies), "198.51.100.9");
  EXPECT_EQ(client_address("::1", {"2001:4860::1"}, kProxies), "2001:4860::1");
}

TEST(ClientAddress, PortsAndBracketsAreDropped) {
  EXPECT_EQ(client_address("10.1.1.1", {"198.51.100.7:4711"}, kProxies), "198.51.100.7");
  EXPECT_EQ(client_address("10.1.1.1", {"[2001:4860::1]:443"}, kProxies), "2001:4860::1");
}

TEST(ClientAddress, AHopThatIsNoAddressStopsTheWalk) {
  // Garbage where an address should be: the hop that wrote it is the client as far as we know.
  EXPECT_EQ(client_address("10.1.1.1", {"unknown"}, kProxies), "10.1.1.1");
  EXPECT_EQ(client_address("10.1.1.1", {"198.51.100.7, junk, 10.2.2.2"}, kProxies), "10.2.2.2");
  EXPECT_EQ(client_address("10.1.1.1", {""}, kProxies), "10.1.1.1");
  // Only trusted hops: the first of them.
  EXPECT_EQ(client_address("10.1.1.1", {"10.3.3.3, 10.2.2.2"}, kProxies), "10.3.3.3");
}

}  // namespace
}  // namespace leadflow::http
