#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leadflow {

/// The outcome of a produce call. Only kOk means the record is durable (fsync'd in the embedded
/// queue; acks=all delivery report from Kafka).
enum class ProduceStatus { kOk, kQueueFull, kUnavailable, kTimedOut };
std::string_view to_string(ProduceStatus s);

/// One consumed record. `offset` is its position inside (topic, partition).
struct QueueRecord {
  std::string topic;
  int partition = 0;
  std::int64_t offset = 0;
  std::string key;
  std::string payload;
  /// The consumer's assignment generation when the record was handed out (see
  /// QueueConsumer::generation): a record of an older generation may belong to a partition this
  /// consumer no longer owns and must be neither processed nor committed.
  std::uint64_t generation = 0;
};

/// How far a consumer group is behind on one partition: the records produced to it that the group
/// has not committed (read and not finished, or not read yet).
struct PartitionLag {
  std::string topic;
  int partition = 0;
  std::int64_t end = 0;        // the offset the next record produced will get
  std::int64_t committed = 0;  // the group's next offset to process (where a restart resumes)
  std::int64_t lag() const { return end > committed ? end - committed : 0; }
};

/// A consumer group's backlog: the records produced that it has not committed, and its
/// position, the sum over partitions of the offsets it resumes from, which moves on only when the
/// group commits. A backlog whose position stands still is waiting for a consumer.
struct GroupBacklog {
  std::int64_t records = 0;
  std::int64_t position = 0;
  /// When the oldest record the group has not committed was produced, in milliseconds since the
  /// epoch: the time of the record at the group's committed offset, the oldest over the
  /// partitions (Kafka: the record's timestamp; embedded: the time the record carries). nullopt
  /// when no record waits, or when the queue cannot tell (an embedded record written before
  /// records carried a time): then `records > 0` and the age is unknown.
  std::optional<std::int64_t> oldest_produced_ms;
};

/// Topic names. Configurable through LEADFLOW_TOPIC_PREFIX.
struct Topics {
  std::string leads = "leadflow.leads";
  std::string results = "leadflow.results";
  std::string retry = "leadflow.leads.retry";
  std::string dead = "leadflow.leads.dead";
};

/// Writes records. Thread-safe: many request threads produce at once, and their records share
/// durability work (group commit / producer batching).
class QueueProducer {
 public:
  virtual ~QueueProducer() = default;
  /// Blocks until the record is durable or `timeout` passes. The partition is chosen by key hash.
  virtual ProduceStatus produce(std::string_view topic, std::string_view key,
                                std::string_view payload, std::chrono::milliseconds timeout) = 0;
  /// Called once with the record's fate: kOk once durable, otherwise why it is not.
  using ProduceCallback = std::function<void(ProduceStatus)>;
  /// Like produce(), without blocking the caller: `done` runs exactly once, on a queue thread
  /// (or on the caller's thread when the record is refused at once), within answer_within().
  /// It must be quick and must not produce. Event-driven fronts use this so a thread never
  /// waits on a disk or a broker. The default blocks in produce().
  virtual void produce_async(std::string_view topic, std::string_view key, std::string_view payload,
                             ProduceCallback done) {
    done(produce(topic, key, payload, answer_within()));
  }
  /// Queues a record without waiting for it to be durable, for notices whose loss costs only
  /// time (outcome notices to waiting requests). kQueueFull/kUnavailable when it could not even
  /// be queued.
  virtual ProduceStatus send(std::string_view topic, std::string_view key,
                             std::string_view payload) = 0;
  /// How long a produce() may take to give a certain answer: callers that want "durable" or
  /// "failed", never "unknown", pass this as the timeout.
  virtual std::chrono::milliseconds answer_within() const { return std::chrono::seconds(5); }
  /// Waits for everything produced so far to be durable.
  virtual bool flush(std::chrono::milliseconds timeout) = 0;
  virtual bool healthy() = 0;
  /// A payload rewritten: the new bytes, of the same length (or nullopt: leave the record).
  using PayloadRewrite = std::function<std::optional<std::string>(std::string_view payload)>;
  /// Rewrites in place the records of `topics` keyed by one of `keys` that the queue still holds
  /// and that every consumer group has committed (no consumer reads them again), each payload
  /// through `rewrite` (docs/erasure.md: a lead's tombstone). Crash-safe: the new bytes are
  /// journalled first, so a crash mid-rewrite leaves each record whole, old or new, after the
  /// next open. The records rewritten, or nullopt where the queue cannot (Kafka: a record is
  /// never changed) or failed (I/O: the queue is unhealthy then).
  virtual std::optional<std::int64_t> rewrite_payloads(const std::vector<std::string>& topics,
                                                       const std::vector<std::string>& keys,
                                                       const PayloadRewrite& rewrite) {
    (void)topics;
    (void)keys;
    (void)rewrite;
    return std::nullopt;
  }
  /// True once the producer is in a state only a restart cures (Kafka: a fatal error of the
  /// idempotent producer). /healthz then fails, so an orchestrator restarts the process.
  virtual bool broken() { return false; }
};

/// Reads records of one consumer group. Used by one thread at a time. Records of a partition come
/// in offset order; a record not committed before the consumer dies is delivered again.
class QueueConsumer {
 public:
  virtual ~QueueConsumer() = default;
  virtual std::optional<QueueRecord> poll(std::chrono::milliseconds timeout) = 0;
  /// Marks every offset of (topic, partition) below `next_offset` processed. Callers commit
  /// contiguously (see OffsetTracker).
  virtual void commit(std::string_view topic, int partition, std::int64_t next_offset) = 0;
  virtual void close() = 0;
  /// Bumped whenever partitions are taken away (a group rebalance). Records handed out under an
  /// older generation are stale.
  virtual std::uint64_t generation() const { return 0; }
  /// Called on the polling thread, inside poll(), before partitions are given up in a group
  /// rebalance: the handler finishes what is in flight and commits it, so the partition's next
  /// owner starts after it and no lead is worked on by two consumers at once.
  virtual void set_revoke_handler(std::function<void()> handler) { (void)handler; }
  /// The lag of the group on each partition this consumer owns now, for metrics. Safe to call
  /// from any thread while the consumer is open. Empty where the adapter cannot tell.
  virtual std::vector<PartitionLag> lag() const { return {}; }
};

/// A queue: a producer and consumers. Kafka-shaped: keyed records, partitions, consumer groups,
/// commit after processing, redelivery of what was not committed.
class LeadQueue {
 public:
  virtual ~LeadQueue() = default;
  virtual QueueProducer& producer() = 0;
  virtual std::unique_ptr<QueueConsumer> make_consumer(const std::string& group,
                                                       const std::vector<std::string>& topics) = 0;
  /// A consumer outside any group that reads every partition of `topics` from the end (records
  /// produced from now on); commit() does nothing. Every ingest replica tails the results topic
  /// this way. nullptr where the queue has no such reader (the embedded queue needs none).
  virtual std::unique_ptr<QueueConsumer> make_tail_consumer(
      const std::vector<std::string>& topics) {
    (void)topics;
    return nullptr;
  }
  /// Whether the queue's servers are reachable (readiness).
  virtual bool healthy() { return producer().healthy(); }
  /// Where `group` stands on the leads, measured from the queue's side by a handle that is not
  /// a member of the group (Kafka: the group's committed offsets against the log end), so it
  /// reads the same whether the group has members or none. nullopt when the queue cannot tell
  /// now (Kafka: no broker answered within its bounded timeouts): unknown, never "empty".
  virtual std::optional<GroupBacklog> group_backlog(const std::string& group) = 0;
  /// Records produced but not yet committed by `group` (backlog), summed over partitions; -1
  /// when unknown.
  std::int64_t backlog(const std::string& group) {
    const auto b = group_backlog(group);
    return b ? b->records : -1;
  }
  virtual void shutdown() = 0;
};

/// Tracks offsets completed out of order and yields the highest contiguous one to commit.
/// Not thread-safe; the worker guards it.
class OffsetTracker {
 public:
  void started(std::int64_t offset);
  /// Returns the new next-offset to commit, or -1 when the contiguous front did not move.
  std::int64_t completed(std::int64_t offset);
  std::size_t in_flight() const { return pending_.size(); }

 private:
  std::vector<std::pair<std::int64_t, bool>> pending_;  // ascending offsets, done flag
};

}  // namespace leadflow
