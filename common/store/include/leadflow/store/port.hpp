#pragma once
#include <cstdint>
#include <optional>

namespace leadflow {

/// What a store call can end in. Adapters translate SQLite/libpq failures into these; handlers map
/// them to HTTP statuses in one place.
/// kLimitReached: a buyer cap window is full (record_post_intent).
enum class StoreStatus { kOk, kNotFound, kConflict, kUnavailable, kLimitReached };

/// The version a conditional write of a user, buyer, campaign, seller or API key expects the
/// record to be at (its `version` as read); kAnyVersion asks for none. Every change to one of
/// those records adds one to its version in the statement that makes it (docs/versions.md), so
/// a write conditional on the version read never overwrites a change it did not see.
inline constexpr std::int64_t kAnyVersion = 0;

/// A lookup's answer: the record (kOk), none (kNotFound), or kUnavailable when the store could
/// not say. A miss is only a kNotFound: asking healthy() afterwards would race a store that came
/// back in between, and a failed lookup would be believed (and cached) as "no such record".
template <class T>
struct Lookup {
  StoreStatus status = StoreStatus::kUnavailable;
  std::optional<T> value;
};

/// What every role port below shares: whether the store answers now. The ports inherit it
/// virtually, so the aggregate Store (and each adapter) has one healthy(), and a consumer holding
/// any one port can tell a store that is down from an answer of "none".
class StorePort {
 public:
  virtual ~StorePort() = default;
  virtual bool healthy() = 0;
};

}  // namespace leadflow
