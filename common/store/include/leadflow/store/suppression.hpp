#pragma once
// The suppression port: lists of people who must never be sold (docs/suppression.md), kept as
// the 64-bit fingerprints of their normalised e-mails' and phones' SHA-256, never the values
// uploaded. The rule of what a fingerprint is and what a match means is in
// common/suppression; the store keeps and hands back what it is given.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "leadflow/store/port.hpp"

namespace leadflow {

/// One list: the operator's (buyer_id "": a lead on it is refused at intake) or one buyer's (a
/// lead on it is never offered to that buyer).
struct SuppressionList {
  std::string id;        // "sup_..."
  std::string buyer_id;  // "" = the operator's
  std::string name;
  std::int64_t entries = 0;  // distinct fingerprints held
  /// Grows by one with each replacement of the entries (0: none uploaded yet), so a process
  /// holding a list in memory reloads it only when it changed.
  std::int64_t entries_version = 0;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;  // the last replacement of its entries (or its creation)
};

class SuppressionStore : public virtual StorePort {
 public:
  /// Makes a list with no entries (entries_version 0). kConflict if the id exists.
  virtual StoreStatus create_suppression_list(const SuppressionList& l) = 0;
  virtual Lookup<SuppressionList> get_suppression_list(std::string_view id) = 0;
  /// Every list (the processes holding them poll this, cheaply, to see which changed), or one
  /// owner's ("" = the operator's) when `buyer_id` is given; ordered by id. nullopt when the
  /// store could not read them.
  virtual std::optional<std::vector<SuppressionList>> list_suppression_lists(
      std::optional<std::string_view> buyer_id = std::nullopt) = 0;
  /// Replaces the list's entries with `fingerprints` (sorted, distinct) in one transaction: the
  /// list's entries_version grows by one, its entries and updated_at_ms are set; the entries
  /// of earlier versions are gone. kNotFound for no such list.
  virtual StoreStatus replace_suppression_entries(std::string_view id,
                                                  std::span<const std::uint64_t> fingerprints,
                                                  std::int64_t now_ms) = 0;
  /// The entries of the list at `entries_version`, sorted: nullopt when the store could not
  /// read them, or that version is no longer the list's (it was replaced or deleted meanwhile:
  /// read the list again).
  virtual std::optional<std::vector<std::uint64_t>> suppression_entries(
      std::string_view id, std::int64_t entries_version) = 0;
  /// Removes the list and its entries. kNotFound for no such list.
  virtual StoreStatus delete_suppression_list(std::string_view id) = 0;
};

}  // namespace leadflow
