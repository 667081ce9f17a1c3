// SHA-256 and HMAC-SHA256 against published vectors (FIPS 180-2, RFC 4231), including a thread
// switching keys back and forth, since each thread keeps a context keyed with its last key.
#include "leadflow/base/crypto.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace leadflow {
namespace {

std::string hex(const std::string& raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

constexpr const char* kJefe = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
constexpr const char* kLongKey = "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";

TEST(Crypto, Sha256MatchesThePublishedVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Crypto, HmacSha256MatchesRfc4231WhateverKeyCameBefore) {
  const std::string long_key(131, '\xaa');
  const std::string long_data = "Test Using Larger Than Block-Size Key - Hash Key First";
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")), kJefe);
    EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")), kJefe);
    EXPECT_EQ(hex(hmac_sha256(long_key, long_data)), kLongKey);
  }
  EXPECT_NE(hmac_sha256("Jefe", "a"), hmac_sha256("Jeff", "a"));
  EXPECT_EQ(hmac_sha256("", "").size(), 32u);
}

TEST(Crypto, HmacSha256IsTheSameOnEveryThread) {
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      const std::string long_key(131, '\xaa');
      for (int i = 0; i < 200; ++i) {
        if (hex(hmac_sha256("Jefe", "what do ya want for nothing?")) != kJefe) ++wrong[t];
        if ((i + t) % 3 == 0 &&
            hex(hmac_sha256(long_key, "Test Using Larger Than Block-Size Key - Hash Key First")) !=
                kLongKey)
          ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int w : wrong) EXPECT_EQ(w, 0);
}

}  // namespace
}  // namespace leadflow
