// Two-factor sign-in's primitives: base32 against RFC 4648's vectors, HOTP against RFC 4226's,
// TOTP against RFC 6238's (SHA-1) on a simulated clock, the drift window, the otpauth URI,
// recovery codes and their hashes, and the sealing of secrets.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "leadflow/management/two_factor.hpp"
#include "simulated_clock.hpp"

namespace leadflow {
namespace {

namespace tf = two_factor;

TEST(TwoFactor, Base32MatchesRfc4648) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "MY"},
                                                         {"fo", "MZXQ"},
                                                         {"foo", "MZXW6"},
                                                         {"foob", "MZXW6YQ"},
                                                         {"fooba", "MZXW6YTB"},
                                                         {"foobar", "MZXW6YTBOI"}};
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(tf::base32_encode(bytes), text) << bytes;
    const auto back = tf::base32_decode(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(*back, bytes);
  }
  // Padding, lower case and spaces are read as authenticator apps write them.
  EXPECT_EQ(tf::base32_decode("mzxw 6ytb oi======").value_or("?"), "foobar");
  EXPECT_FALSE(tf::base32_decode("MZXW1"));   // 1 is not base32
  EXPECT_FALSE(tf::base32_decode("MZX"));     // no byte count encodes to 3 characters
  EXPECT_FALSE(tf::base32_decode("MY==MY"));  // data after padding
  EXPECT_EQ(tf::base32_encode(std::string(20, '\xff')).size(), 32u);  // a secret: 32 characters
}

// RFC 4226 appendix D: the secret "12345678901234567890", counters 0 to 9.
TEST(TwoFactor, HotpMatchesRfc4226) {
  const std::string secret = "12345678901234567890";
  const char* expected[] = {"755224", "287082", "359152", "969429", "338314",
                            "254676", "287922", "162583", "399871", "520489"};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(tf::code_at(secret, i), expected[i]) << i;
}

// RFC 6238 appendix B, the SHA-1 rows (8 digits), with the time taken from a simulated clock.
TEST(TwoFactor, TotpMatchesRfc6238OnASimulatedClock) {
  const std::string secret = "12345678901234567890";
  const std::pair<std::int64_t, std::string> vectors[] = {{59, "94287082"},
                                                          {1111111109, "07081804"},
                                                          {1111111111, "14050471"},
                                                          {1234567890, "89005924"},
                                                          {2000000000, "69279037"}};
  for (const auto& [seconds, code] : vectors) {
    testing::SimulatedClock clock(SystemTime{std::chrono::seconds{seconds}});
    EXPECT_EQ(tf::code_at(secret, tf::step_at(clock.now_ms()), 8), code) << seconds;
  }
  // The table's last row, year 2603, is past what a nanosecond system clock holds: its step is
  // computed from the milliseconds directly.
  EXPECT_EQ(tf::code_at(secret, tf::step_at(20'000'000'000'000), 8), "65353130");
}

TEST(TwoFactor, ACodeIsAcceptedOneStepEitherSideAndNoFurther) {
  const std::string secret = "12345678901234567890";
  testing::SimulatedClock clock(SystemTime{std::chrono::seconds{1'700'000'000}});
  const std::int64_t now = tf::step_at(clock.now_ms());
  for (std::int64_t d : {-1, 0, 1}) {
    const auto step = tf::matching_step(secret, tf::code_at(secret, now + d), clock.now_ms());
    ASSERT_TRUE(step) << d;
    EXPECT_EQ(*step, now + d);
  }
  for (std::int64_t d : {-3, -2, 2, 3}) {
    const std::string code = tf::code_at(secret, now + d);
    // A code that happens to equal one inside the window would match; these do not.
    bool inside = false;
    for (std::int64_t w : {-1, 0, 1}) inside = inside || tf::code_at(secret, now + w) == code;
    if (!inside) {
      EXPECT_FALSE(tf::matching_step(secret, code, clock.now_ms())) << d;
    }
  }
  // One period later the code is the previous step's, still accepted; two later it is not.
  const std::string current = tf::code_at(secret, now);
  clock.advance(std::chrono::milliseconds{tf::kPeriodMs});
  EXPECT_EQ(tf::matching_step(secret, current, clock.now_ms()).value_or(-1), now);
  clock.advance(std::chrono::milliseconds{tf::kPeriodMs});
  const bool again = tf::code_at(secret, now + 1) == current ||
                     tf::code_at(secret, now + 2) == current ||
                     tf::code_at(secret, now + 3) == current;
  if (!again) {
    EXPECT_FALSE(tf::matching_step(secret, current, clock.now_ms()));
  }
  EXPECT_FALSE(tf::matching_step(secret, "12345", clock.now_ms()));
  EXPECT_FALSE(tf::matching_step(secret, "12345a", clock.now_ms()));
  EXPECT_FALSE(tf::matching_step(secret, "1234567", clock.now_ms()));
}

TEST(TwoFactor, SecretsAreRandomAndTheUriCarriesThem) {
  const std::string a = tf::new_secret(), b = tf::new_secret();
  EXPECT_EQ(a.size(), 20u);
  EXPECT_NE(a, b);
  EXPECT_EQ(tf::otpauth_uri("ops+1@example.com", "12345678901234567890"),
            "otpauth://totp/leadflow:ops%2B1@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
            "&issuer=leadflow&algorithm=SHA1&digits=6&period=30");
}

TEST(TwoFactor, RecoveryCodesAreTenDistinctAndHashPerUser) {
  const auto codes = tf::new_recovery_codes();
  ASSERT_EQ(codes.size(), 10u);
  std::set<std::string> distinct(codes.begin(), codes.end());
  EXPECT_EQ(distinct.size(), 10u);
  for (const auto& c : codes) {
    EXPECT_EQ(c.size(), 19u) << c;  // four groups of four
    EXPECT_EQ(c[4], '-');
  }
  const std::string h = tf::recovery_code_hash("us_1", codes[0]);
  EXPECT_EQ(h.size(), 64u);
  std::string typed;
  for (char c : codes[0])
    if (c != '-') typed.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  EXPECT_EQ(tf::recovery_code_hash("us_1", typed), h);  // typed without dashes, in lower case
  EXPECT_NE(tf::recovery_code_hash("us_2", codes[0]), h);
  EXPECT_EQ(tf::recovery_code_hash("us_1", "ABCD-EFGH"), "");
  EXPECT_EQ(tf::recovery_code_hash("us_1", "ABCD-EFGH-IJKL-MN01"), "");
}

TEST(TwoFactor, SecretsAreSealedUnderTheKeyAndPlainWithout) {
  const std::string secret = tf::new_secret();
  const tf::SecretBox sealed(std::string(32, 'k'));
  const std::string stored = sealed.seal(secret);
  EXPECT_TRUE(stored.starts_with("sealed:"));
  EXPECT_EQ(stored.find(tf::base32_encode(secret)), std::string::npos);
  EXPECT_NE(sealed.seal(secret), stored);  // a fresh nonce each time
  EXPECT_EQ(sealed.open(stored).value_or(""), secret);
  EXPECT_FALSE(tf::SecretBox(std::string(32, 'x')).open(stored));  // another key
  EXPECT_FALSE(tf::SecretBox("").open(stored));                    // no key
  std::string tampered = stored;
  tampered[tampered.size() - 3] = tampered[tampered.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(sealed.open(tampered));

  const tf::SecretBox plain("");
  const std::string kept = plain.seal(secret);
  EXPECT_EQ(kept, "plain:" + tf::base32_encode(secret));
  EXPECT_EQ(plain.open(kept).value_or(""), secret);
  EXPECT_EQ(sealed.open(kept).value_or(""), secret);  // a key set later still reads it
}

}  // namespace
}  // namespace leadflow
