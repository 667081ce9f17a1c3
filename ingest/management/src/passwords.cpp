// Argon2id password hashes and random session secrets, on libsodium.
#include "leadflow/management/passwords.hpp"

#include <sodium.h>

#include <cstdlib>
#include <semaphore>
#include <string>

namespace leadflow::passwords {
namespace {

// sodium_init() once, before anything else of libsodium; it fails only without a random source,
// and then nothing here could be trusted.
void ensure_sodium() {
  static const bool ready = [] {
    if (sodium_init() < 0) std::abort();
    return true;
  }();
  (void)ready;
}

std::counting_semaphore<kMaxConcurrentHashes>& hash_slots() {
  static std::counting_semaphore<kMaxConcurrentHashes> slots(kMaxConcurrentHashes);
  return slots;
}

// One of the kMaxConcurrentHashes slots while it lives.
class HashSlot {
 public:
  HashSlot() { hash_slots().acquire(); }
  ~HashSlot() { hash_slots().release(); }
  HashSlot(const HashSlot&) = delete;
  HashSlot& operator=(const HashSlot&) = delete;
};

// The hash verify_nothing() checks against: made once, of a password nobody knows.
const std::string& dummy_hash() {
  static const std::string h = hash(new_token());
  return h;
}

}  // namespace

std::string_view problem_with(std::string_view password) {
  if (password.size() < kMinLength) return "must be at least 12 characters";
  if (password.size() > kMaxLength) return "must be at most 128 bytes";
  for (unsigned char c : password)
    if (c < 0x20 || c == 0x7f) return "must not hold control characters";
  return "";
}

std::string hash(std::string_view password) {
  ensure_sodium();
  char out[crypto_pwhash_STRBYTES];
  HashSlot slot;
  if (crypto_pwhash_str(out, password.data(), password.size(), kOpsLimit, kMemLimit) != 0)
    return "";
  return out;
}

bool verify(std::string_view hash_string, std::string_view password) {
  ensure_sodium();
  if (password.size() > kMaxLength || hash_string.size() >= crypto_pwhash_STRBYTES) return false;
  const std::string h(hash_string);  // NUL-terminated for libsodium
  HashSlot slot;
  return crypto_pwhash_str_verify(h.c_str(), password.data(), password.size()) == 0;
}

bool needs_rehash(std::string_view hash_string) {
  ensure_sodium();
  const std::string h(hash_string);
  // 1: other limits; -1: not an Argon2id string at all (replace it too).
  return crypto_pwhash_str_needs_rehash(h.c_str(), kOpsLimit, kMemLimit) != 0;
}

void verify_nothing(std::string_view password) {
  // verify() answers an over-long password at once, for a real hash as for this one.
  (void)verify(dummy_hash(), password);
}

void prepare() { (void)dummy_hash(); }

std::string new_token() {
  ensure_sodium();
  unsigned char bytes[32];
  randombytes_buf(bytes, sizeof bytes);
  char out[sodium_base64_ENCODED_LEN(sizeof bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(out, sizeof out, bytes, sizeof bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(bytes, sizeof bytes);
  return out;
}

bool is_token(std::string_view token) {
  if (token.size() != 43) return false;
  for (char c : token) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace leadflow::passwords
