// TOTP codes, their secrets and recovery codes (leadflow/management/two_factor.hpp).
#include "leadflow/management/two_factor.hpp"

#include <sodium.h>

#include <cstdlib>

#include "leadflow/base/crypto.hpp"

namespace leadflow::two_factor {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr std::string_view kSealed = "sealed:";
constexpr std::string_view kPlain = "plain:";
constexpr std::size_t kRecoveryChars = 16;

void ensure_sodium() {
  static const bool ready = [] {
    if (sodium_init() < 0) std::abort();
    return true;
  }();
  (void)ready;
}

int base32_value(char c) {
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  const std::size_t at = kAlphabet.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

std::string random_string(std::size_t n) {
  ensure_sodium();
  std::string out(n, '\0');
  randombytes_buf(out.data(), n);
  return out;
}

}  // namespace

std::string base32_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 8 + 4) / 5);
  unsigned buffer = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  return out;
}

std::optional<std::string> base32_decode(std::string_view text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  std::size_t chars = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = base32_value(c);
    if (v < 0 || padding) return std::nullopt;
    ++chars;
    buffer = (buffer << 5) | static_cast<unsigned>(v);
    bits += 5;
    if (bits >= 8) {
      out.push_back(static_cast<char>((buffer >> (bits - 8)) & 0xff));
      bits -= 8;
    }
  }
  // 1, 3 and 6 characters past a whole group of 8 are lengths no byte count encodes to.
  const std::size_t rest = chars % 8;
  if (rest == 1 || rest == 3 || rest == 6) return std::nullopt;
  return out;
}

std::int64_t step_at(std::int64_t unix_ms) { return unix_ms < 0 ? -1 : unix_ms / kPeriodMs; }

std::string code_at(std::string_view secret, std::int64_t step, int digits) {
  std::string counter(8, '\0');
  auto c = static_cast<std::uint64_t>(step);
  for (int i = 7; i >= 0; --i) {
    counter[static_cast<std::size_t>(i)] = static_cast<char>(c & 0xff);
    c >>= 8;
  }
  const std::string mac = hmac_sha1(secret, counter);
  // Dynamic truncation (RFC 4226 §5.3): the low nibble of the last byte picks 4 bytes.
  const auto at = static_cast<std::size_t>(mac.back() & 0x0f);
  const std::uint32_t binary = (static_cast<std::uint32_t>(mac[at] & 0x7f) << 24) |
                               (static_cast<std::uint32_t>(mac[at + 1] & 0xff) << 16) |
                               (static_cast<std::uint32_t>(mac[at + 2] & 0xff) << 8) |
                               static_cast<std::uint32_t>(mac[at + 3] & 0xff);
  std::uint32_t modulus = 1;
  for (int i = 0; i < digits; ++i) modulus *= 10;
  std::string out = std::to_string(binary % modulus);
  if (out.size() < static_cast<std::size_t>(digits))
    out.insert(0, static_cast<std::size_t>(digits) - out.size(), '0');
  return out;
}

bool is_code(std::string_view code) {
  if (code.size() != static_cast<std::size_t>(kDigits)) return false;
  for (char c : code)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<std::int64_t> matching_step(std::string_view secret, std::string_view code,
                                          std::int64_t now_ms) {
  if (!is_code(code)) return std::nullopt;
  const std::int64_t now = step_at(now_ms);
  std::optional<std::int64_t> found;
  // Every candidate is computed and compared, so the time taken says nothing of which matched.
  for (std::int64_t step = now - kDriftSteps; step <= now + kDriftSteps; ++step)
    if (step >= 0 && constant_time_equal(code_at(secret, step), code)) found = step;
  return found;
}

std::string new_secret() { return random_string(kSecretBytes); }

std::string otpauth_uri(std::string_view email, std::string_view secret) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string label;
  for (unsigned char c : email) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '@';
    if (plain) {
      label.push_back(static_cast<char>(c));
    } else {
      label.push_back('%');
      label.push_back(kHex[c >> 4]);
      label.push_back(kHex[c & 15]);
    }
  }
  return "otpauth://totp/leadflow:" + label + "?secret=" + base32_encode(secret) +
         "&issuer=leadflow&algorithm=SHA1&digits=6&period=30";
}

std::vector<std::string> new_recovery_codes() {
  std::vector<std::string> codes;
  for (int i = 0; i < kRecoveryCodes; ++i) {
    // 10 random bytes are exactly 16 base32 characters.
    const std::string chars = base32_encode(random_string(kRecoveryChars * 5 / 8));
    std::string code;
    for (std::size_t at = 0; at < chars.size(); at += 4) {
      if (!code.empty()) code.push_back('-');
      code.append(chars, at, 4);
    }
    codes.push_back(std::move(code));
  }
  return codes;
}

std::string recovery_code_hash(std::string_view user_id, std::string_view code) {
  std::string normal;
  for (char c : code) {
    if (c == '-' || c == ' ') continue;
    if (base32_value(c) < 0) return "";
    normal.push_back(kAlphabet[static_cast<std::size_t>(base32_value(c))]);
  }
  if (normal.size() != kRecoveryChars) return "";
  std::string message(user_id);
  message.push_back('\n');
  message += normal;
  return sha256_hex(message);
}

SecretBox::SecretBox(std::string key) : key_(std::move(key)) {
  if (!key_.empty() && key_.size() != crypto_secretbox_KEYBYTES) std::abort();
}

std::string SecretBox::seal(std::string_view secret) const {
  if (key_.empty()) return std::string(kPlain) + base32_encode(secret);
  ensure_sodium();
  std::string box(crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + secret.size(), '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(box.data());
  randombytes_buf(bytes, crypto_secretbox_NONCEBYTES);
  crypto_secretbox_easy(bytes + crypto_secretbox_NONCEBYTES,
                        reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), bytes,
                        reinterpret_cast<const unsigned char*>(key_.data()));
  std::string out(sodium_base64_ENCODED_LEN(box.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes, box.size(), sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // the terminating NUL
  return std::string(kSealed) + out;
}

std::optional<std::string> SecretBox::open(std::string_view stored) const {
  if (stored.starts_with(kPlain)) return base32_decode(stored.substr(kPlain.size()));
  if (!stored.starts_with(kSealed) || key_.empty()) return std::nullopt;
  ensure_sodium();
  const std::string_view text = stored.substr(kSealed.size());
  std::string box(text.size(), '\0');
  std::size_t size = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(box.data()), box.size(), text.data(),
                        text.size(), nullptr, &size, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0 ||
      size < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES)
    return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(box.data());
  std::string secret(size - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES, '\0');
  if (crypto_secretbox_open_easy(reinterpret_cast<unsigned char*>(secret.data()),
                                 bytes + crypto_secretbox_NONCEBYTES,
                                 size - crypto_secretbox_NONCEBYTES, bytes,
                                 reinterpret_cast<const unsigned char*>(key_.data())) != 0)
    return std::nullopt;
  return secret;
}

}  // namespace leadflow::two_factor
