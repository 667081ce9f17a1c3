#pragma once
// Reading IANA zone files: TZif (RFC 8536) as it is on disk, decoded and checked, with no
// interpretation. tz.cpp turns it into a TimeZone.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leadflow {

// RFC 8536 §3.2: utoff must be in [-89999, 93599] (just over +-25 hours); the footer's offsets
// are held to the same bounds.
inline constexpr int kMinUtoff = -89'999;
inline constexpr int kMaxUtoff = 93'599;

/// The content of a TZif file: the 64-bit block for version 2+ (the 32-bit one for version 1).
struct TzifData {
  std::vector<std::int64_t> transitions;  // ascending Unix seconds
  std::vector<int> offsets;               // offset in force from transitions[i], seconds east
  int initial_offset = 0;                 // time type 0: before the first transition
  std::string footer;                     // the POSIX TZ string of version 2+; may be empty
};

/// Whether `name` may name a zone file: [A-Za-z0-9_+-/], not absolute, no "..", at most 255.
bool valid_zone_name(std::string_view name);

/// The bytes of the file at `path`, or nullopt if it cannot be read, is a directory, or is larger
/// than any zone file (1 MiB).
std::optional<std::string> read_zone_file(const std::string& path);

/// The decoded file, or nullopt if `data` is not well-formed TZif (or holds leap seconds, whose
/// times are not Unix seconds).
std::optional<TzifData> parse_tzif(std::string_view data);

}  // namespace leadflow
