#pragma once
// The embedded queue's on-disk format: the record (little-endian, CRC32C over bytes [12, len)),
//   u32 magic "LFQ2" | u32 len | u32 crc | i64 offset | i64 produced_ms | u32 partition |
//   u32 key_len | u32 payload_len | u16 topic_len | topic | key | payload
// (`produced_ms`: when the producer made it, milliseconds since the epoch), and the names of the
// files in a queue directory. Records of the first format, "LFQ1" (the same without
// `produced_ms`), are still read, with no time. The offsets and META files are text, written and
// read by the queue (embedded_queue.cpp, queue_open.cpp). Changing anything here makes existing
// queue directories unreadable.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leadflow::embedded {

inline constexpr std::uint32_t kMagic = 0x3251464C;         // "LFQ2": records written now
inline constexpr std::uint32_t kMagicUntimed = 0x3151464C;  // "LFQ1": read only
inline constexpr std::size_t kHeaderBytes = 42;
inline constexpr std::size_t kUntimedHeaderBytes = 34;
inline constexpr std::size_t kCrcStart = 12;
inline constexpr std::size_t kMaxRecordBytes = 64u << 20;
inline constexpr std::size_t kMaxSegmentBytes = 1u << 30;  // positions fit the index's 32 bits
// The active segment is extended with zeros ahead of the records, a chunk at a time: overwriting
// blocks that already exist inside the file size lets fdatasync skip the journal commit an append
// needs.
inline constexpr std::size_t kPreallocBytes = 1u << 20;

inline void put_u16(char* p, std::uint16_t v) {
  p[0] = char(v);
  p[1] = char(v >> 8);
}
inline void put_u32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = char(v >> (8 * i));
}
inline void put_u64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = char(v >> (8 * i));
}
inline std::uint16_t get_u16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return std::uint16_t(u[0] | u[1] << 8);
}
inline std::uint32_t get_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return std::uint32_t(u[0]) | std::uint32_t(u[1]) << 8 | std::uint32_t(u[2]) << 16 |
         std::uint32_t(u[3]) << 24;
}
inline std::uint64_t get_u64(const char* p) {
  return std::uint64_t(get_u32(p)) | std::uint64_t(get_u32(p + 4)) << 32;
}

struct DecodedRecord {
  std::int64_t offset = 0;
  std::optional<std::int64_t> produced_ms;  // nullopt: a record of the first format
  std::uint32_t partition = 0;
  std::string_view topic, key, payload;
};

// Checks one record at the start of `data` (of which `avail` bytes exist). Returns its length, or
// 0 when the bytes there are not a whole, intact record.
std::size_t decode_record(const char* data, std::size_t avail, DecodedRecord& out);

// A record of `topic`, `partition`, `key` and `payload`, made at `produced_ms`, with everything
// but offset and CRC, which the writer fills in (bytes [12, 20) and [8, 12)).
std::string encode_record(std::string_view topic, int partition, std::string_view key,
                          std::string_view payload, std::int64_t produced_ms);

// The time of the record whose first `avail` bytes (at least its header) are at `data`, without
// checking the rest; nullopt for a record of the first format or bytes that are not a header.
std::optional<std::int64_t> record_produced_ms(const char* data, std::size_t avail);

/// Lowercase hex of the bytes of `s` (names inside the offsets files and their file names).
std::string to_hex(std::string_view s);
/// The bytes written by to_hex; false on odd length or a character that is not lowercase hex.
bool from_hex(std::string_view s, std::string& out);

/// "seg-<20-digit id>.log".
std::string segment_name(std::uint32_t id);
/// "group-<hex name>.offsets", shortened with a hash when the name is long.
std::string offsets_file_name(std::string_view group);

}  // namespace leadflow::embedded
