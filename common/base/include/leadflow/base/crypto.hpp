#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace leadflow {

/// `bytes` in lower-case hex, two digits a byte.
std::string hex_of(std::string_view bytes);
/// Lower-case hex SHA-256.
std::string sha256_hex(std::string_view data);
/// HMAC-SHA256 of `data` under `key`: the 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view data);
/// HMAC-SHA1 of `data` under `key`: the 20 raw bytes. Only for TOTP (RFC 6238), whose
/// authenticator apps compute SHA-1; HMAC-SHA1 has no known weakness as a MAC.
std::string hmac_sha1(std::string_view key, std::string_view data);
/// Constant-time equality for secrets and their hashes.
bool constant_time_equal(std::string_view a, std::string_view b);
/// `n` bytes from the OS CSPRNG.
std::string random_bytes(std::size_t n);

}  // namespace leadflow
