#pragma once
// A queue for unit tests: the LeadQueue port in memory, with partitions, consumer groups,
// commits, redelivery and rebalances a test can trigger.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/queue/queue.hpp"

namespace leadflow::testing {

/// Kafka's shape in memory: a record goes to the partition of its key's hash and keeps its order
/// there; a group's members share the partitions of their topics (round-robin, in join order);
/// a partition is handed out from the group's committed offset whenever it gets a new owner, so
/// what was not committed is delivered again. Rebalances are eager, as the workers' consumers
/// use them: every member gives up all its partitions on its next poll() — its revoke handler
/// runs there, on its thread, then its generation moves on — and only then do partitions move to
/// their next owner. A group's first subscription to a topic starts at its oldest record.
/// Thread-safe; each consumer is used by one thread at a time.
class FakeQueue final : public LeadQueue {
 public:
  explicit FakeQueue(int partitions = 4);
  ~FakeQueue() override;

  QueueProducer& producer() override;
  std::unique_ptr<QueueConsumer> make_consumer(const std::string& group,
                                               const std::vector<std::string>& topics) override;
  std::optional<GroupBacklog> group_backlog(const std::string& group) override;
  void shutdown() override;

  // --- for tests ---------------------------------------------------------------------------------
  /// Every member of `group` gives up its partitions on its next poll().
  void rebalance(const std::string& group);
  /// Calls rebalance(group) once `records` more records were handed out to the group's members:
  /// the revoke then comes inside the poll after, mid-batch for a consumer reading several.
  void rebalance_after(const std::string& group, int records);
  /// Produce, send, healthy() and group_backlog() answer as a queue whose broker is gone, while
  /// false.
  void set_available(bool available);
  /// Stamps each record produced from now on with `clock->now()`, so group_backlog() tells the
  /// oldest waiting record's produce time, as Kafka's record timestamps do; nullptr: no stamps.
  void set_clock(const Clock* clock);

  /// Every record produced to `topic`, in the order produced.
  std::vector<QueueRecord> records(const std::string& topic) const;
  /// The committed next offset of (group, topic, partition); 0 when none.
  std::int64_t committed(const std::string& group, const std::string& topic, int partition) const;
  /// The partition `key` goes to.
  int partition_of(std::string_view key) const;
  /// Revoke handlers run so far, and what `group` had committed when each returned (the offsets
  /// the partitions' next owners start from), per (topic, partition).
  struct Revoke {
    std::string group;
    std::map<std::pair<std::string, int>, std::int64_t> committed;
  };
  std::vector<Revoke> revokes() const;
  /// Revoke handlers running now.
  int revoking() const;

 private:
  class Producer;
  class Consumer;
  struct Group;
  struct Topic {
    std::vector<std::vector<QueueRecord>> partitions;
    std::vector<QueueRecord> produced;  // every record, in produce order
    std::vector<std::vector<std::optional<std::int64_t>>> produced_ms;  // per partition, offset
  };

  Topic& topic_locked(const std::string& name);
  ProduceStatus append(std::string_view topic, std::string_view key, std::string_view payload);
  void assign_locked(Group& g);
  std::optional<QueueRecord> poll(Consumer& c, std::chrono::milliseconds timeout);
  void commit(Consumer& c, std::string_view topic, int partition, std::int64_t next);
  void close(Consumer& c);

  const int partitions_;
  std::unique_ptr<Producer> producer_;
  mutable std::mutex mu_;
  std::condition_variable records_cv_;
  std::map<std::string, Topic, std::less<>> topics_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::vector<Revoke> revokes_;
  int revoking_ = 0;
  bool available_ = true;
  const Clock* clock_ = nullptr;
  bool stopping_ = false;
};

}  // namespace leadflow::testing
