#pragma once
// A suppression list as the lookups hold it: never the uploaded values, only a 64-bit
// fingerprint of each entry's SHA-256 (over the normalised e-mail, trimmed and lower-cased, or
// the E.164 phone: what a buyer computes itself to hand over its customers without their
// addresses). A lead is looked up by the fingerprints of its own e-mail and phone, hashed once per
// lead whatever the number of lists.
//
// Held as one sorted array of fingerprints and an index of where each run of equal top bits
// starts: 8 bytes an entry plus 4 bytes per 2^k buckets (about one bucket per entry), so ten
// million entries take about 120 MiB, and a lookup reads the index and one or two cache lines of
// the array. 64 bits leave a chance of n / 2^64 that a lead's fingerprint meets an entry of
// another person: 5.4e-13 per lookup for ten million entries.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace leadflow {

using SuppressionFingerprint = std::uint64_t;

/// The fingerprint of a SHA-256 given as 64 hex digits (either case): its first 8 bytes. nullopt
/// for anything else.
std::optional<SuppressionFingerprint> fingerprint_of_sha256_hex(std::string_view hex);
/// The fingerprint of a normalised value (an e-mail as validation keeps it, or an E.164 phone):
/// the SHA-256 of its bytes. nullopt for an empty value.
std::optional<SuppressionFingerprint> fingerprint_of_value(std::string_view normalised);

/// What a lead is looked up by: the fingerprints of its e-mail and phone, where it has them.
struct PersonFingerprints {
  std::optional<SuppressionFingerprint> email;
  std::optional<SuppressionFingerprint> phone;
};
PersonFingerprints person_fingerprints(std::string_view email, std::string_view phone);

class SuppressionSet {
 public:
  SuppressionSet() = default;
  /// The set of `entries`, in any order, repeats allowed (kept once).
  explicit SuppressionSet(std::vector<SuppressionFingerprint> entries);

  bool contains(SuppressionFingerprint f) const;
  /// Whether the person's e-mail or phone is in the set.
  bool suppresses(const PersonFingerprints& person) const;

  std::size_t size() const { return entries_.size(); }
  /// What the set holds in memory: its array and its index.
  std::size_t memory_bytes() const;

 private:
  std::vector<SuppressionFingerprint> entries_;  // sorted, unique
  std::vector<std::uint32_t> starts_;            // 2^bits_ + 1 bucket starts into entries_
  unsigned bits_ = 0;
};

}  // namespace leadflow
