#include "leadflow/suppression/suppression_set.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "leadflow/base/crypto.hpp"

namespace leadflow {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bucket index's width: one to two entries a bucket (the power of two at or below the
// count), at least 1 bit, at most 31 (the starts are 32-bit, which bounds a set to 2^32 - 1
// entries).
unsigned index_bits(std::size_t n) {
  const auto width = static_cast<unsigned>(std::bit_width(n));
  return std::clamp(width == 0 ? 1u : width - 1, 1u, 31u);
}

}  // namespace

std::optional<SuppressionFingerprint> fingerprint_of_sha256_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  SuppressionFingerprint f = 0;
  for (std::size_t i = 0; i < hex.size(); ++i) {
    const int d = hex_digit(hex[i]);
    if (d < 0) return std::nullopt;
    if (i < 16) f = (f << 4) | static_cast<SuppressionFingerprint>(d);
  }
  return f;
}

std::optional<SuppressionFingerprint> fingerprint_of_value(std::string_view normalised) {
  if (normalised.empty()) return std::nullopt;
  return fingerprint_of_sha256_hex(sha256_hex(normalised));
}

PersonFingerprints person_fingerprints(std::string_view email, std::string_view phone) {
  return {fingerprint_of_value(email), fingerprint_of_value(phone)};
}

SuppressionSet::SuppressionSet(std::vector<SuppressionFingerprint> entries)
    : entries_(std::move(entries)) {
  std::sort(entries_.begin(), entries_.end());
  entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
  if (entries_.size() >= UINT32_MAX) throw std::length_error("a suppression list of 2^32 entries");
  bits_ = index_bits(entries_.size());
  const std::size_t buckets = std::size_t{1} << bits_;
  starts_.assign(buckets + 1, 0);
  // entries_ is sorted, so each bucket (the fingerprint's top bits_) is one run of it.
  std::size_t i = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    starts_[b] = static_cast<std::uint32_t>(i);
    while (i < entries_.size() && (entries_[i] >> (64 - bits_)) == b) ++i;
  }
  starts_[buckets] = static_cast<std::uint32_t>(entries_.size());
}

bool SuppressionSet::contains(SuppressionFingerprint f) const {
  if (entries_.empty()) return false;
  const std::size_t b = f >> (64 - bits_);
  const auto first = entries_.begin() + starts_[b];
  const auto last = entries_.begin() + starts_[b + 1];
  // A bucket holds one entry on average: a short scan beats a binary search here.
  return std::find(first, last, f) != last;
}

bool SuppressionSet::suppresses(const PersonFingerprints& person) const {
  return (person.email && contains(*person.email)) || (person.phone && contains(*person.phone));
}

std::size_t SuppressionSet::memory_bytes() const {
  return entries_.capacity() * sizeof(SuppressionFingerprint) +
         starts_.capacity() * sizeof(std::uint32_t);
}

}  // namespace leadflow
