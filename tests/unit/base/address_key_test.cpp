// The one key every per-address limit uses: IPv4 as it is, IPv6 by its /64.
#include <gtest/gtest.h>

#include "leadflow/base/address_key.hpp"

namespace leadflow {
namespace {

TEST(AddressLimitKey, Ipv6IsKeyedByItsSlashSixtyFour) {
  EXPECT_EQ(address_limit_key("2001:db8:1:2::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(address_limit_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(address_limit_key("2001:DB8:1:2:0:0:0:7"), "2001:db8:1:2::/64") << "one spelling";
  EXPECT_NE(address_limit_key("2001:db8:1:3::1"), address_limit_key("2001:db8:1:2::1"));
  EXPECT_EQ(address_limit_key("::1"), "::/64");
}

TEST(AddressLimitKey, Ipv4StaysAsItIsAndMappedIpv6BecomesIpv4) {
  EXPECT_EQ(address_limit_key("203.0.113.7"), "203.0.113.7");
  EXPECT_NE(address_limit_key("203.0.113.8"), address_limit_key("203.0.113.7"));
  EXPECT_EQ(address_limit_key("::ffff:203.0.113.7"), "203.0.113.7");
}

TEST(AddressLimitKey, WhatIsNotAnAddressComesBackUnchanged) {
  EXPECT_EQ(address_limit_key("unknown"), "unknown");
  EXPECT_EQ(address_limit_key(""), "");
}

}  // namespace
}  // namespace leadflow
