// The TZif reader (RFC 8536, RFC 9636): reading a zone file and decoding its data block and
// footer. What the data means in time (the footer's rules, lookups) is tz.cpp.
#include "tzif.hpp"

#include <algorithm>
#include <fstream>

#include "leadflow/base/text.hpp"

namespace leadflow {
namespace {

constexpr std::size_t kMaxNameLength = 255;
constexpr std::size_t kMaxFileBytes = 1 << 20;  // real TZif files are under 4 KiB

/// Big-endian reads over the file; every read is bounds-checked by the caller through has().
class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}
  bool has(std::uint64_t n) const { return data_.size() - pos_ >= n; }
  std::size_t pos() const { return pos_; }
  void skip(std::size_t n) { pos_ += n; }
  std::uint8_t u8() { return static_cast<std::uint8_t>(data_[pos_++]); }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | u8();
    return v;
  }
  std::int64_t i64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | u8();
    return static_cast<std::int64_t>(v);
  }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::string_view rest() const { return data_.substr(pos_); }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

struct TzifHeader {
  char version;  // '\0' for version 1, else '2', '3', '4'...
  std::uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;

  // Size of the data block that follows, with 4-byte (v1) or 8-byte (v2+) times.
  std::uint64_t block_size(std::uint64_t time_size) const {
    return std::uint64_t{timecnt} * (time_size + 1) + std::uint64_t{typecnt} * 6 + charcnt +
           std::uint64_t{leapcnt} * (time_size + 4) + isstdcnt + isutcnt;
  }
};

std::optional<TzifHeader> read_header(ByteReader& r) {
  if (!r.has(44) || r.rest().substr(0, 4) != "TZif") return std::nullopt;
  r.skip(4);
  TzifHeader h{};
  h.version = static_cast<char>(r.u8());
  if (h.version != '\0' && h.version < '2') return std::nullopt;
  r.skip(15);
  h.isutcnt = r.u32();
  h.isstdcnt = r.u32();
  h.leapcnt = r.u32();
  h.timecnt = r.u32();
  h.typecnt = r.u32();
  h.charcnt = r.u32();
  // RFC 8536 §3.1. Leap-second files ("right/...") count time in TAI-like seconds, not Unix
  // seconds: refused rather than misread.
  if (h.typecnt == 0 || h.typecnt > 256 || h.charcnt == 0 || h.leapcnt != 0 ||
      (h.isutcnt != 0 && h.isutcnt != h.typecnt) || (h.isstdcnt != 0 && h.isstdcnt != h.typecnt))
    return std::nullopt;
  return h;
}

}  // namespace

bool valid_zone_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength || name.front() == '/' ||
      name.find("..") != std::string_view::npos)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || c == '_' || c == '+' || c == '-' || c == '/';
  });
}

std::optional<std::string> read_zone_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    data.append(buf, static_cast<std::size_t>(in.gcount()));
    if (data.size() > kMaxFileBytes) return std::nullopt;
  }
  if (in.bad()) return std::nullopt;  // a directory ("America") ends here
  return data;
}

std::optional<TzifData> parse_tzif(std::string_view data) {
  ByteReader r(data);
  auto header = read_header(r);
  if (!header) return std::nullopt;
  std::uint64_t time_size = 4;
  if (header->version != '\0') {
    // Version 2+: skip the 32-bit block, read the second header and the 64-bit block.
    if (!r.has(header->block_size(4))) return std::nullopt;
    r.skip(static_cast<std::size_t>(header->block_size(4)));
    header = read_header(r);
    if (!header || header->version == '\0') return std::nullopt;
    time_size = 8;
  }
  const TzifHeader& h = *header;
  if (!r.has(h.block_size(time_size))) return std::nullopt;

  TzifData zone;
  zone.transitions.reserve(h.timecnt);
  for (std::uint32_t i = 0; i < h.timecnt; ++i) {
    const std::int64_t at = time_size == 8 ? r.i64() : r.i32();
    if (!zone.transitions.empty() && at <= zone.transitions.back()) return std::nullopt;
    zone.transitions.push_back(at);
  }
  std::vector<std::uint8_t> type_of(h.timecnt);
  for (auto& t : type_of) {
    t = r.u8();
    if (t >= h.typecnt) return std::nullopt;
  }
  std::vector<int> utoffs(h.typecnt);
  for (int& utoff : utoffs) {
    utoff = r.i32();
    r.skip(1);  // isdst: we only need offsets
    const std::uint8_t desigidx = r.u8();
    if (utoff < kMinUtoff || utoff > kMaxUtoff || desigidx >= h.charcnt) return std::nullopt;
  }
  r.skip(h.charcnt + h.isstdcnt + h.isutcnt);  // no leap records: refused in read_header

  zone.offsets.reserve(h.timecnt);
  for (std::uint8_t t : type_of) zone.offsets.push_back(utoffs[t]);
  zone.initial_offset = utoffs[0];  // RFC 8536 §3.2: time type 0 before the first transition

  if (time_size == 8) {
    // Footer: "\n" TZ-string "\n"; an empty string means no rule beyond the last transition.
    const std::string_view rest = r.rest();
    const std::size_t close = rest.find('\n', 1);
    if (rest.empty() || rest[0] != '\n' || close == std::string_view::npos) return std::nullopt;
    zone.footer = std::string(rest.substr(1, close - 1));
  }
  return zone;
}

}  // namespace leadflow
