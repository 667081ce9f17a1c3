#pragma once
// Dashboard passwords and session secrets, on libsodium.
//
// Passwords are hashed with Argon2id (crypto_pwhash_str): 3 passes over 64 MiB, one step above
// libsodium's "interactive" limits (2 passes, 64 MiB). On the two cores leadflow is sized for a
// hash or a check takes about 0.18 s: slow for someone trying passwords offline against a
// stolen hash, unnoticeable at sign-in. At most kMaxConcurrentHashes run at once (the
// others wait their turn), so a burst of sign-ins holds at most that many times 64 MiB. A hash
// made with other limits (older or weaker) is still checked, and reported by needs_rehash() so
// that the next sign-in stores a new one.
#include <cstddef>
#include <string>
#include <string_view>

namespace leadflow::passwords {

inline constexpr std::size_t kMinLength = 12;   // bytes of UTF-8
inline constexpr std::size_t kMaxLength = 128;  // bounds what one sign-in may make us hash
inline constexpr unsigned long long kOpsLimit = 3;
inline constexpr std::size_t kMemLimit = 64u * 1024u * 1024u;
inline constexpr int kMaxConcurrentHashes = 2;

/// Why a new password is refused ("" when it is acceptable): too short, too long, or holding a
/// NUL or other control character.
std::string_view problem_with(std::string_view password);
/// The Argon2id hash string ("$argon2id$v=19$m=65536,t=3,p=1$..."); "" if libsodium could not
/// make one (out of memory).
std::string hash(std::string_view password);
/// Whether `password` matches `hash_string` (in constant time for a given hash). False for a
/// password longer than kMaxLength, without hashing it.
bool verify(std::string_view hash_string, std::string_view password);
/// Whether `hash_string` was made with limits other than today's.
bool needs_rehash(std::string_view hash_string);
/// Checks `password` against a hash of no account, at the cost of a real check: answering an
/// unknown e-mail takes as long as answering a wrong password.
void verify_nothing(std::string_view password);
/// Makes the hash verify_nothing() checks against, so that the first unknown e-mail is not
/// answered later than the rest (it costs one hash). Called once before serving.
void prepare();

/// 32 bytes from libsodium's CSPRNG (randombytes_buf), base64url without padding: 43 characters.
std::string new_token();
/// Whether `token` has the form new_token() gives (43 base64url characters).
bool is_token(std::string_view token);

}  // namespace leadflow::passwords
