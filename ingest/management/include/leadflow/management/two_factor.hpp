#pragma once
// Two-factor sign-in for dashboard users (docs/two-factor.md): time-based one-time codes
// (TOTP, RFC 6238, over HOTP, RFC 4226), their secrets, and the recovery codes.
//
// A secret is 20 random bytes (160 bits, RFC 4226's recommendation), shown once as base32
// (RFC 4648) in an otpauth:// URI. Codes are 6 digits, a new one every 30 s, HMAC-SHA1: what
// every authenticator app computes from such a URI. A code is accepted for the current time step
// or one either side (clock drift), and the caller records the step it matched so that no code
// is accepted twice.
//
// In the store a secret is sealed (XSalsa20-Poly1305, libsodium's secretbox) under the key of
// LEADFLOW_TOTP_KEY_FILE, so a copy of the database alone gives no codes; without that key it
// is kept plain, marked as such, and opened again under a key set later.
//
// Recovery codes are 16 base32 characters (80 bits) shown as four groups of four; the store
// keeps the SHA-256 of the user's id and the normalised code: a guess costs as much as guessing
// 80 random bits, so a slow hash would add nothing.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leadflow::two_factor {

inline constexpr std::size_t kSecretBytes = 20;
inline constexpr int kDigits = 6;
inline constexpr std::int64_t kPeriodMs = 30'000;
inline constexpr std::int64_t kDriftSteps = 1;
inline constexpr int kRecoveryCodes = 10;
/// How long the challenge between the password and the code lives.
inline constexpr std::int64_t kChallengeMs = 5 * 60'000;

/// RFC 4648 base32, upper case, without padding.
std::string base32_encode(std::string_view bytes);
/// The bytes of base32 `text` (case and spaces ignored, "=" padding allowed); nullopt for any
/// other character or a length no encoding gives.
std::optional<std::string> base32_decode(std::string_view text);

/// The time step of `unix_ms`: whole periods since the Unix epoch (T0 = 0).
std::int64_t step_at(std::int64_t unix_ms);
/// HOTP (RFC 4226) of `secret` at counter `step`: HMAC-SHA1, dynamic truncation, `digits`
/// decimal digits with leading zeros.
std::string code_at(std::string_view secret, std::int64_t step, int digits = kDigits);
/// The step within kDriftSteps of `now_ms` whose code is `code` (6 digits), compared in constant
/// time; nullopt when none is. The latest matching step wins.
std::optional<std::int64_t> matching_step(std::string_view secret, std::string_view code,
                                          std::int64_t now_ms);
/// Whether `code` has the form of a TOTP code: exactly kDigits ASCII digits.
bool is_code(std::string_view code);

/// A new secret: kSecretBytes from libsodium's CSPRNG.
std::string new_secret();
/// otpauth://totp/leadflow:<email>?secret=<BASE32>&issuer=leadflow&algorithm=SHA1&digits=6
/// &period=30, the e-mail percent-encoded.
std::string otpauth_uri(std::string_view email, std::string_view secret);

/// kRecoveryCodes new recovery codes, "ABCD-EFGH-JKLM-NPQR" (base32).
std::vector<std::string> new_recovery_codes();
/// The stored form of user `user_id`'s recovery code `code`: hex SHA-256 of the id and the code
/// in upper case without dashes or spaces; "" when `code` is not 16 base32 characters then.
std::string recovery_code_hash(std::string_view user_id, std::string_view code);

/// Seals secrets for the store under a 32-byte key, or keeps them plain under none.
class SecretBox {
 public:
  /// `key`: 32 bytes (Config::totp_key), or empty for no sealing.
  explicit SecretBox(std::string key);
  bool seals() const { return !key_.empty(); }
  /// "sealed:" and base64 of a fresh nonce and the box; "plain:" and base32 without a key.
  std::string seal(std::string_view secret) const;
  /// The secret `stored` holds; nullopt when it is sealed and this key cannot open it.
  std::optional<std::string> open(std::string_view stored) const;

 private:
  std::string key_;
};

}  // namespace leadflow::two_factor
