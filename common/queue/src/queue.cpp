#include "leadflow/queue/queue.hpp"

#include <algorithm>

namespace leadflow {

std::string_view to_string(ProduceStatus s) {
  switch (s) {
    case ProduceStatus::kOk:
      return "ok";
    case ProduceStatus::kQueueFull:
      return "queue_full";
    case ProduceStatus::kUnavailable:
      return "unavailable";
    case ProduceStatus::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

void OffsetTracker::started(std::int64_t offset) {
  // Offsets arrive in ascending order (one partition, one consumer), so this is a push_back. An
  // out-of-order or repeated start is tolerated rather than corrupting the order the front relies
  // on.
  if (pending_.empty() || pending_.back().first < offset) {
    pending_.emplace_back(offset, false);
    return;
  }
  auto it = std::lower_bound(pending_.begin(), pending_.end(), offset,
                             [](const auto& entry, std::int64_t o) { return entry.first < o; });
  if (it != pending_.end() && it->first == offset) return;
  pending_.insert(it, {offset, false});
}

std::int64_t OffsetTracker::completed(std::int64_t offset) {
  auto it = std::lower_bound(pending_.begin(), pending_.end(), offset,
                             [](const auto& entry, std::int64_t o) { return entry.first < o; });
  if (it == pending_.end() || it->first != offset || it->second) return -1;  // unknown or repeated
  it->second = true;
  if (it != pending_.begin()) return -1;  // an older offset is still in flight

  // Offsets that were never started (filtered out, or taken by another consumer) are not ours to
  // wait for: started 3, 7, 9 and completed 3 then 7 moves the front to 8.
  auto front_end = std::find_if(pending_.begin(), pending_.end(),
                                [](const auto& entry) { return !entry.second; });
  const std::int64_t next = std::prev(front_end)->first + 1;
  pending_.erase(pending_.begin(), front_end);
  return next;
}

}  // namespace leadflow
