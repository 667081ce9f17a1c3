#pragma once
// Both adapters' rows of the suppression port: a list's columns and reader, and a list's
// entries as text chunks of fixed-width hex (16 digits a fingerprint, sorted), so SQLite and
// PostgreSQL keep the same bytes and ten million entries are 153 rows, not ten million.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "leadflow/store/suppression.hpp"

namespace leadflow {

#define LF_SUPPRESSION_LIST_COLUMNS \
  "id, buyer_id, name, entries, entries_version, created_at_ms, updated_at_ms"

template <class Row>
SuppressionList read_suppression_list(const Row& r) {
  SuppressionList l;
  l.id = r.text(0);
  l.buyer_id = r.text(1);
  l.name = r.text(2);
  l.entries = r.int64(3);
  l.entries_version = r.int64(4);
  l.created_at_ms = r.int64(5);
  l.updated_at_ms = r.int64(6);
  return l;
}

/// Fingerprints a chunk holds: 1 MiB of text.
inline constexpr std::size_t kSuppressionChunkEntries = 65536;

inline std::string suppression_chunk_text(std::span<const std::uint64_t> fingerprints) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(fingerprints.size() * 16, '0');
  std::size_t at = 0;
  for (std::uint64_t f : fingerprints)
    for (int shift = 60; shift >= 0; shift -= 4) out[at++] = kHex[(f >> shift) & 15];
  return out;
}

/// Appends a chunk's fingerprints to `out`; false for a text that is not whole fingerprints.
inline bool append_suppression_chunk(std::string_view text, std::vector<std::uint64_t>& out) {
  if (text.size() % 16 != 0) return false;
  for (std::size_t at = 0; at < text.size(); at += 16) {
    std::uint64_t f = 0;
    for (std::size_t i = at; i < at + 16; ++i) {
      const char c = text[i];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      f = (f << 4) | static_cast<std::uint64_t>(d);
    }
    out.push_back(f);
  }
  return true;
}

}  // namespace leadflow
