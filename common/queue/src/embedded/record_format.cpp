#include "embedded/record_format.hpp"

#include <cstdio>
#include <cstring>

#include "embedded/crc32c.hpp"

namespace leadflow::embedded {

std::size_t decode_record(const char* data, std::size_t avail, DecodedRecord& out) {
  if (avail < kUntimedHeaderBytes) return 0;
  const std::uint32_t magic = get_u32(data);
  if (magic != kMagic && magic != kMagicUntimed) return 0;
  // The first format has no time: its fields after the offset sit 8 bytes earlier.
  const std::size_t header = magic == kMagic ? kHeaderBytes : kUntimedHeaderBytes;
  const std::size_t fields = header - 14;  // partition, key_len, payload_len, topic_len
  if (avail < header) return 0;
  const std::uint32_t len = get_u32(data + 4);
  if (len < header || len > avail || len > kMaxRecordBytes) return 0;
  const std::uint32_t key_len = get_u32(data + fields + 4);
  const std::uint32_t payload_len = get_u32(data + fields + 8);
  const std::uint16_t topic_len = get_u16(data + fields + 12);
  if (std::uint64_t(header) + topic_len + key_len + payload_len != len) return 0;
  if (crc32c(data + kCrcStart, len - kCrcStart) != get_u32(data + 8)) return 0;
  out.offset = static_cast<std::int64_t>(get_u64(data + 12));
  out.produced_ms = std::nullopt;
  if (magic == kMagic) out.produced_ms = static_cast<std::int64_t>(get_u64(data + 20));
  out.partition = get_u32(data + fields);
  const char* p = data + header;
  out.topic = {p, topic_len};
  out.key = {p + topic_len, key_len};
  out.payload = {p + topic_len + key_len, payload_len};
  return len;
}

std::string encode_record(std::string_view topic, int partition, std::string_view key,
                          std::string_view payload, std::int64_t produced_ms) {
  std::string out(kHeaderBytes + topic.size() + key.size() + payload.size(), '\0');
  char* p = out.data();
  put_u32(p, kMagic);
  put_u32(p + 4, static_cast<std::uint32_t>(out.size()));
  put_u64(p + 20, static_cast<std::uint64_t>(produced_ms));
  put_u32(p + 28, static_cast<std::uint32_t>(partition));
  put_u32(p + 32, static_cast<std::uint32_t>(key.size()));
  put_u32(p + 36, static_cast<std::uint32_t>(payload.size()));
  put_u16(p + 40, static_cast<std::uint16_t>(topic.size()));
  p += kHeaderBytes;
  std::memcpy(p, topic.data(), topic.size());
  std::memcpy(p + topic.size(), key.data(), key.size());
  std::memcpy(p + topic.size() + key.size(), payload.data(), payload.size());
  return out;
}

std::optional<std::int64_t> record_produced_ms(const char* data, std::size_t avail) {
  if (avail < kHeaderBytes || get_u32(data) != kMagic) return std::nullopt;
  return static_cast<std::int64_t>(get_u64(data + 20));
}

std::string to_hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

bool from_hex(std::string_view s, std::string& out) {
  if (s.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out.clear();
  for (std::size_t i = 0; i < s.size(); i += 2) {
    const int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}

std::string segment_name(std::uint32_t id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "seg-%020u.log", id);
  return buf;
}

// The group's name is also stored inside the file; the file name only has to be unique and short.
std::string offsets_file_name(std::string_view group) {
  std::string hex = to_hex(group);
  if (hex.size() > 160) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : group) h = (h ^ c) * 1099511628211ull;
    hex = hex.substr(0, 120) + "-" + to_hex(std::string_view(reinterpret_cast<const char*>(&h), 8));
  }
  return "group-" + hex + ".offsets";
}

}  // namespace leadflow::embedded
