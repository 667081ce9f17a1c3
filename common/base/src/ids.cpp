#include "leadflow/base/ids.hpp"

#include <array>
#include <chrono>
#include <mutex>

#include "leadflow/base/crypto.hpp"

namespace leadflow {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

int decode_char(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  for (int i = 10; i < 32; ++i)
    if (kAlphabet[i] == c) return i;
  return -1;
}

// Monotonic state: within one millisecond the 80 random bits are incremented instead of redrawn,
// so ids made later in this process always sort after earlier ones.
struct Generator {
  std::mutex mu;
  std::int64_t last_ms = -1;
  std::array<unsigned char, 10> random{};
};

Generator& generator() {
  static Generator g;
  return g;
}

}  // namespace

std::string new_id(std::string_view prefix, std::int64_t unix_ms) {
  std::array<unsigned char, 16> raw{};
  {
    auto& g = generator();
    std::lock_guard lock(g.mu);
    if (unix_ms <= g.last_ms) {
      unix_ms = g.last_ms;
      for (int i = 9; i >= 0; --i)
        if (++g.random[i] != 0) break;
    } else {
      g.last_ms = unix_ms;
      const std::string fresh = random_bytes(10);
      for (int i = 0; i < 10; ++i) g.random[i] = static_cast<unsigned char>(fresh[i]);
      g.random[0] &= 0x7f;  // headroom so increments inside one millisecond never wrap
    }
    for (int i = 0; i < 6; ++i) raw[i] = static_cast<unsigned char>(unix_ms >> (8 * (5 - i)));
    for (int i = 0; i < 10; ++i) raw[6 + i] = g.random[i];
  }
  // 128 bits -> 26 base32 characters, most significant first (the first char holds 3 bits).
  std::string out(prefix);
  out.resize(prefix.size() + 26);
  unsigned __int128 v = 0;
  for (unsigned char b : raw) v = (v << 8) | b;
  for (int i = 25; i >= 0; --i) {
    out[prefix.size() + i] = kAlphabet[static_cast<int>(v & 31)];
    v >>= 5;
  }
  return out;
}

std::string new_id(std::string_view prefix) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return new_id(prefix, ms);
}

bool is_valid_id(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + 26 || id.substr(0, prefix.size()) != prefix) return false;
  if (decode_char(id[prefix.size()]) > 7) return false;  // would overflow 128 bits
  for (char c : id.substr(prefix.size()))
    if (decode_char(c) < 0) return false;
  return true;
}

std::int64_t id_time_ms(std::string_view id, std::string_view prefix) {
  if (!is_valid_id(id, prefix)) return -1;
  std::int64_t ms = 0;
  for (int i = 0; i < 10; ++i) ms = (ms << 5) | decode_char(id[prefix.size() + i]);
  return ms;  // 10 chars = 50 bits: two leading zero bits, then the 48-bit timestamp
}

}  // namespace leadflow
