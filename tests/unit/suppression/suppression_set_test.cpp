#include "leadflow/suppression/suppression_set.hpp"

#include <gtest/gtest.h>

#include <random>
#include <unordered_set>

namespace leadflow {
namespace {

TEST(SuppressionFingerprint, IsTheFirstEightBytesOfTheSha256OfTheNormalisedValue) {
  // sha256("jane@example.com") = 8c87b489ce35cf2e2f39f80e282cb2e804932a56a213983eeeb428407d43b52d
  EXPECT_EQ(fingerprint_of_value("jane@example.com"), 0x8c87b489ce35cf2eULL);
  EXPECT_EQ(
      fingerprint_of_sha256_hex("8C87B489CE35CF2E2F39F80E282CB2E804932A56A213983EEEB428407D43B52D"),
      0x8c87b489ce35cf2eULL);
  EXPECT_EQ(fingerprint_of_value(""), std::nullopt);
}

TEST(SuppressionFingerprint, RefusesWhatIsNoSha256) {
  EXPECT_EQ(fingerprint_of_sha256_hex(""), std::nullopt);
  EXPECT_EQ(fingerprint_of_sha256_hex(std::string(63, 'a')), std::nullopt);
  EXPECT_EQ(fingerprint_of_sha256_hex(std::string(65, 'a')), std::nullopt);
  EXPECT_EQ(fingerprint_of_sha256_hex(std::string(63, 'a') + "g"), std::nullopt);
  EXPECT_EQ(fingerprint_of_sha256_hex("jane@example.com"), std::nullopt);
}

TEST(SuppressionSet, AnEmptySetHoldsNothing) {
  const SuppressionSet set;
  EXPECT_FALSE(set.contains(0));
  EXPECT_FALSE(set.contains(~0ULL));
  EXPECT_EQ(set.size(), 0u);
  EXPECT_FALSE(SuppressionSet(std::vector<SuppressionFingerprint>{}).contains(42));
}

TEST(SuppressionSet, FindsEveryEntryAndNoOther) {
  std::mt19937_64 random(7);
  std::vector<SuppressionFingerprint> entries;
  std::unordered_set<SuppressionFingerprint> held;
  for (int i = 0; i < 100000; ++i) {
    entries.push_back(random());
    held.insert(entries.back());
  }
  // The edges of the range and repeats.
  for (const SuppressionFingerprint f : {0ULL, 1ULL, ~0ULL, ~0ULL - 1, 1ULL << 63}) {
    entries.push_back(f);
    entries.push_back(f);
    held.insert(f);
  }
  const SuppressionSet set(entries);
  EXPECT_EQ(set.size(), held.size());
  for (const auto f : held) EXPECT_TRUE(set.contains(f)) << f;
  int found = 0;
  for (int i = 0; i < 100000; ++i) {
    const auto f = random();
    if (set.contains(f) != held.contains(f)) ++found;
  }
  EXPECT_EQ(found, 0);
  EXPECT_FALSE(set.contains(2));
}

TEST(SuppressionSet, OfOneEntry) {
  const SuppressionSet set(std::vector<SuppressionFingerprint>{0x8000000000000000ULL});
  EXPECT_TRUE(set.contains(0x8000000000000000ULL));
  EXPECT_FALSE(set.contains(0x7fffffffffffffffULL));
  EXPECT_FALSE(set.contains(0x8000000000000001ULL));
}

TEST(SuppressionSet, SuppressesAPersonByTheirEmailOrPhone) {
  const SuppressionSet set(std::vector<SuppressionFingerprint>{
      *fingerprint_of_value("jane@example.com"), *fingerprint_of_value("+12125550123")});
  EXPECT_TRUE(set.suppresses(person_fingerprints("jane@example.com", "+13105550100")));
  EXPECT_TRUE(set.suppresses(person_fingerprints("joe@example.com", "+12125550123")));
  EXPECT_FALSE(set.suppresses(person_fingerprints("joe@example.com", "+13105550100")));
  EXPECT_FALSE(set.suppresses(person_fingerprints("", "")));
}

TEST(SuppressionSet, MemoryIsEightBytesAnEntryAndItsIndex) {
  std::vector<SuppressionFingerprint> entries(1 << 20);
  std::mt19937_64 random(1);
  for (auto& e : entries) e = random();
  const SuppressionSet set(std::move(entries));
  // 2^20 entries: 8 MiB of fingerprints and 2^20 + 1 bucket starts of 4 bytes (a bucket for
  // one to two entries: at most half the fingerprints' bytes again).
  EXPECT_LE(set.memory_bytes(), (8u << 20) + (4u << 20) + 4);
  EXPECT_GE(set.memory_bytes(), 8u << 20);
}

}  // namespace
}  // namespace leadflow
