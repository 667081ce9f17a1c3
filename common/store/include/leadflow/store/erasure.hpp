#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "leadflow/domain/change_log.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// What an erasure came to in the store.
enum class EraseStatus {
  kErased,         // the personal fields hold the tombstone now, and the change log says so
  kNoSuchLead,     // no lead has that id
  kPending,        // the lead is still being distributed: erased once it is decided
  kAlreadyErased,  // erased before; nothing written
  kUnavailable     // the store could not say; nothing written
};

/// A lead the retention pass may erase: decided, not erased, received before the cut.
struct ErasableLead {
  std::string id;
  std::int64_t received_at_ms = 0;
};

/// The erasure port (docs/erasure.md): writing a lead's tombstone, and finding the leads a
/// retention period has run out on. Which fields are personal and what replaces them is decided
/// by leadflow/erasure/erasure.hpp; the adapters write what they are given.
class ErasureStore : public virtual StorePort {
 public:
  /// In one transaction: writes the person's fields of `tombstone` (first and last name, e-mail,
  /// phone, ZIP and ZIP+4, state, landing page, IP address, user agent, TrustedForm and Jornaya
  /// references, consent and its text, custom fields) over those of the lead `tombstone.id`,
  /// marks it erased at `at_ms`, writes the tombstone's e-mail and phone over the copies its
  /// sales keep, and appends `entry` to the change log. The lead's ids, vertical, source, times,
  /// distribution, search keys and every sale, return, settlement, ledger entry and rollup stay
  /// as they are. A lead still pending is not erased (kPending), nor one erased already.
  virtual EraseStatus erase_lead(const Lead& tombstone, std::int64_t at_ms,
                                 const ChangeEntry& entry) = 0;
  /// Leads decided and not erased, received at or after `from_ms` and before `before_ms`,
  /// oldest first, at most `limit`; nullopt when the store could not read them.
  virtual std::optional<std::vector<ErasableLead>> erasable_leads(std::int64_t from_ms,
                                                                  std::int64_t before_ms,
                                                                  int limit) = 0;
};

}  // namespace leadflow
