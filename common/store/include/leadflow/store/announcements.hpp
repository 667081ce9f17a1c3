#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "leadflow/store/port.hpp"

namespace leadflow {

/// A subscription to a channel of announcements (Store::watch): payloads are delivered until it
/// is destroyed. Destroying it waits for a delivery in progress to end.
class StoreWatch {
 public:
  virtual ~StoreWatch() = default;
  /// Whether announcements are heard now (false while its connection is being made again).
  virtual bool listening() const = 0;
};

/// The announcements port: notices between processes (scale-out), for the outcome publisher and
/// relay.
class AnnouncementStore : public virtual StorePort {
 public:
  // --- announcements between processes (scale-out) ------------------------------------------
  /// Whether announce() and watch() reach other processes (PostgreSQL: yes; SQLite: no).
  virtual bool announces() const { return false; }
  /// Sends each payload, in order, to every process watching `channel` at this moment
  /// (PostgreSQL: NOTIFY). Neither durable nor retried: a watcher that is disconnected misses
  /// it, so it is for notices whose loss costs only time. `channel` is lower-case letters,
  /// digits and '_'. kUnavailable when they could not be sent; a store of one process (SQLite)
  /// has no one to tell and answers kUnavailable.
  virtual StoreStatus announce(std::string_view channel, std::span<const std::string> payloads) {
    (void)channel;
    (void)payloads;
    return StoreStatus::kUnavailable;
  }
  /// Calls `on_payload` with every payload announced on `channel` while the returned watch
  /// lives, on a thread of its own. After the store was unreachable the watch connects again by
  /// itself; what was announced meanwhile is missed, so `on_listening` (may be empty) runs on
  /// that thread each time the watch starts hearing announcements, the first time included:
  /// what it reads from the store then, together with what is announced from then on, misses
  /// nothing. nullptr when the store cannot (SQLite).
  virtual std::unique_ptr<StoreWatch> watch(std::string_view channel,
                                            std::function<void(std::string_view)> on_payload,
                                            std::function<void()> on_listening) {
    (void)channel;
    (void)on_payload;
    (void)on_listening;
    return nullptr;
  }
};

}  // namespace leadflow
