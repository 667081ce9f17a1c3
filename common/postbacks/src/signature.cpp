#include "leadflow/postbacks/signature.hpp"

#include <charconv>
#include <vector>

#include "leadflow/base/crypto.hpp"

namespace leadflow::postbacks {

namespace {

std::string mac_hex(std::string_view secret, std::int64_t unix_s, std::string_view body) {
  std::string signed_text = std::to_string(unix_s);
  signed_text += '.';
  signed_text += body;
  return hex_of(hmac_sha256(secret, signed_text));
}

}  // namespace

std::string sign(std::string_view secret, std::int64_t unix_s, std::string_view body) {
  return "t=" + std::to_string(unix_s) + ",v1=" + mac_hex(secret, unix_s, body);
}

std::string sign(std::span<const std::string> secrets, std::int64_t unix_s, std::string_view body) {
  std::string out = "t=" + std::to_string(unix_s);
  for (const std::string& secret : secrets) out += ",v1=" + mac_hex(secret, unix_s, body);
  return out;
}

bool verify(std::string_view header, std::string_view secret, std::string_view body,
            std::int64_t now_s, std::int64_t tolerance_s) {
  std::int64_t t = -1;
  std::vector<std::string_view> v1s;
  while (!header.empty()) {
    const auto comma = header.find(',');
    const std::string_view part = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    if (part.starts_with("t=")) {
      const auto [end, ec] = std::from_chars(part.data() + 2, part.data() + part.size(), t);
      if (ec != std::errc{} || end != part.data() + part.size()) return false;
    } else if (part.starts_with("v1=") && part.size() > 3) {
      v1s.push_back(part.substr(3));
    }
  }
  if (t < 0 || v1s.empty()) return false;
  if (t > now_s + tolerance_s || t < now_s - tolerance_s) return false;
  const std::string expected = mac_hex(secret, t, body);
  bool any = false;
  for (std::string_view v1 : v1s) any = constant_time_equal(v1, expected) || any;  // all compared
  return any;
}

}  // namespace leadflow::postbacks
