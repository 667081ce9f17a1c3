#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// The leads that changed lately, for the live feed's one poller per process (docs/operations.md,
/// "The live feed"): on the indexes the store has (leads by received time, and by id).
class LeadChangesStore : public virtual StorePort {
 public:
  /// In one read: the leads received at or after `received_since_ms`, oldest first (then by id),
  /// at most `limit` of them; then those of `watched` (ids seen pending) that are decided now.
  /// Records carry no attempts; a delivered or returned one carries its sales. nullopt when the
  /// store cannot say.
  virtual std::optional<std::vector<LeadRecord>> list_lead_changes(
      std::int64_t received_since_ms, std::span<const std::string> watched, int limit) = 0;
};

}  // namespace leadflow
