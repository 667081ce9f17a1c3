#pragma once
// The suppression lists one process holds (docs/suppression.md): every list of the store as a
// SuppressionSet, the operator's apart from each buyer's, reloaded from the store when a list's
// entries change. refresh() reads which lists there are (a few rows) and the entries of those
// whose entries_version moved; readers get an immutable snapshot, so a lookup takes no lock
// held by a reload. Until the lists were read whole once they are not known, and a caller must
// not decide a lead on them (intake answers 503, an auction defers the lead).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leadflow/store/suppression.hpp"
#include "leadflow/suppression/suppression_set.hpp"

namespace leadflow {

class SuppressionLists {
 public:
  explicit SuppressionLists(SuppressionStore& store) : store_(store) {}

  /// Reads the store: the lists there are, and the entries of each new or changed one. A list
  /// the store cannot read keeps what was held of it (none, for a new one) until the next
  /// refresh; true when every list is now as the store had it.
  bool refresh();

  /// Whether the lists were read whole at least once.
  bool known() const;
  /// Whether one of the operator's lists holds the person; nullopt while the lists are not known.
  std::optional<bool> operator_suppresses(const PersonFingerprints& person) const;
  /// Which of a person's fields (a lead's normalised e-mail and phone) one of the operator's
  /// lists holds: "email", else "phone", "" for neither; nullopt while the lists are not known.
  /// The person is hashed only when the operator has a list.
  std::optional<std::string_view> operator_listed_field(std::string_view email,
                                                        std::string_view phone) const;
  /// Whether one of the buyer's own lists holds the person; nullopt while not known.
  std::optional<bool> buyer_suppresses(std::string_view buyer_id,
                                       const PersonFingerprints& person) const;
  /// Whether any buyer has a list (so an auction hashes a lead's e-mail and phone only then).
  bool any_buyer_list() const;

  /// What is held: lists, entries and bytes in memory (for the metrics).
  struct Held {
    std::size_t lists = 0;
    std::size_t entries = 0;
    std::size_t bytes = 0;
  };
  Held held() const;

 private:
  struct HeldList {
    SuppressionList list;
    std::shared_ptr<const SuppressionSet> set;
  };
  struct Snapshot {
    bool known = false;
    std::map<std::string, HeldList, std::less<>> by_id;
    // The sets by owner ("" = the operator's), for the lookups.
    std::map<std::string, std::vector<std::shared_ptr<const SuppressionSet>>, std::less<>> by_owner;
  };
  std::shared_ptr<const Snapshot> snapshot() const;

  SuppressionStore& store_;
  std::mutex refresh_mu_;  // one refresh at a time
  mutable std::mutex mu_;  // guards snapshot_ (the pointer, not what it points to)
  std::shared_ptr<const Snapshot> snapshot_ = std::make_shared<Snapshot>();
};

/// Keeps a process's SuppressionLists fresh: reads them once when made (so a process starts with
/// its lists known when the store answers), then every `every` on a thread of its own, and sets
/// the gauges leadflow_suppression_lists, leadflow_suppression_entries and
/// leadflow_suppression_memory_bytes after each read, and leadflow_suppression_known.
class SuppressionRefresh {
 public:
  SuppressionRefresh(SuppressionLists& lists, std::chrono::milliseconds every);
  ~SuppressionRefresh();  // stops the thread, waiting for a read under way
  SuppressionRefresh(const SuppressionRefresh&) = delete;
  SuppressionRefresh& operator=(const SuppressionRefresh&) = delete;

 private:
  void read_once();

  SuppressionLists& lists_;
  const std::chrono::milliseconds every_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leadflow
