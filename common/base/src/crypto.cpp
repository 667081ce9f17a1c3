#include "leadflow/base/crypto.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <stdexcept>

namespace leadflow {

namespace {

// OpenSSL 3 looks an algorithm up by name on every one-shot call (SHA256(), HMAC()): a fetch
// through its provider store and its locks, which perf put at about 2% of a key-authenticated
// read each for the key's hash and a buyer's source code. Fetched once, kept for the process.
const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

EVP_MAC* hmac_algorithm() {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

// One thread's HMAC-SHA256 context keyed with the last key it was asked for (the deployment's
// visibility secret, in practice): each MAC then starts from a copy of it, not from the key.
struct KeyedHmac {
  std::string key;
  EVP_MAC_CTX* ctx = nullptr;
  KeyedHmac() = default;
  KeyedHmac(const KeyedHmac&) = delete;
  KeyedHmac& operator=(const KeyedHmac&) = delete;
  ~KeyedHmac() { EVP_MAC_CTX_free(ctx); }

  EVP_MAC_CTX* keyed(std::string_view k) {
    if (ctx != nullptr && key == k) return ctx;
    EVP_MAC_CTX_free(ctx);
    ctx = hmac_algorithm() ? EVP_MAC_CTX_new(hmac_algorithm()) : nullptr;
    key.assign(k);
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (ctx == nullptr || EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(k.data()),
                                       k.size(), params) != 1) {
      EVP_MAC_CTX_free(ctx);
      ctx = nullptr;
    }
    return ctx;
  }
};

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (sha256_md() == nullptr ||
      EVP_Digest(data.data(), data.size(), digest, &size, sha256_md(), nullptr) != 1 ||
      size != SHA256_DIGEST_LENGTH)
    throw std::runtime_error("SHA-256 failed");
  return hex_of(std::string_view(reinterpret_cast<const char*>(digest), SHA256_DIGEST_LENGTH));
}

std::string hex_of(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * bytes.size(), '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 15];
  }
  return out;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  thread_local KeyedHmac keyed;
  EVP_MAC_CTX* base = keyed.keyed(key);
  EVP_MAC_CTX* ctx = base ? EVP_MAC_CTX_dup(base) : nullptr;
  unsigned char mac[EVP_MAX_MD_SIZE];
  std::size_t size = 0;
  const bool ok =
      ctx != nullptr &&
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1 &&
      EVP_MAC_final(ctx, mac, &size, sizeof mac) == 1;
  EVP_MAC_CTX_free(ctx);
  if (!ok) throw std::runtime_error("HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(mac), size);
}

std::string hmac_sha1(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &size) == nullptr)
    throw std::runtime_error("HMAC-SHA1 failed");
  return std::string(reinterpret_cast<const char*>(mac), size);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("the system random generator failed");
  return out;
}

}  // namespace leadflow
