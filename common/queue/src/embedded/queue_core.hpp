#pragma once
// The embedded queue's shared state and its core (see embedded_queue.cpp for the design): what
// queue_open.cpp (opening a directory: META, offsets files, the segment scan) and
// embedded_queue.cpp (producing, the writer, consumer groups, offsets and retention) share.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "leadflow/queue/embedded_queue.hpp"

namespace leadflow {

namespace embedded_queue_detail {
// For tests and benchmarks; not part of the public interface.
struct WriterStats {
  std::uint64_t syncs = 0;       // fdatasync calls that acknowledged records
  std::uint64_t records = 0;     // records they acknowledged
  std::uint64_t sync_nanos = 0;  // time spent in those fdatasync calls
};
WriterStats writer_stats(LeadQueue& queue);
std::uint32_t crc32c(std::string_view data);
/// From now on, rewrite_payloads stops once its journal is durable, as a process killed right
/// then would (rewrite.cpp); the next open finishes the rewrite.
void stop_rewrites_after_journal(LeadQueue& queue);
}  // namespace embedded_queue_detail

namespace embedded {

struct Topic;
struct GroupState;
class EmbeddedConsumer;

struct IndexEntry {
  std::int64_t offset;
  std::uint32_t segment;
  std::uint32_t pos;
  std::uint32_t length;
};

struct Partition {
  std::deque<IndexEntry> index;  // ascending offsets, all >= trim
  std::int64_t end = 0;          // next offset to become visible
  std::int64_t trim = 0;         // every subscribed group has committed below this
  std::int64_t assign_next = 0;  // writer thread only
};

struct Topic {
  std::string name;
  std::vector<Partition> parts;
  std::vector<GroupState*> groups;  // groups that ever subscribed (persisted in their files)
  std::int64_t retained = 0;        // index entries over all partitions
  std::int64_t queued = 0;          // records waiting for the writer
};

struct GroupState {
  std::string name;
  std::map<Topic*, std::vector<std::int64_t>> committed;  // per subscribed topic
  std::map<Topic*, std::vector<std::int64_t>> flushed;    // what the offsets file on disk says
  std::vector<EmbeddedConsumer*> members;                 // live consumers, join order
  bool dirty = false;
};

struct Segment {
  std::uint32_t id = 0;
  std::string path;
  int fd = -1;
  std::size_t data_end = 0;  // set by the scan at open: where the records end
  std::map<std::pair<const Topic*, int>, std::int64_t> max_offset;  // guarded by the queue mutex
  ~Segment() {
    if (fd >= 0) ::close(fd);
  }
};

struct PendingRecord {
  Topic* topic = nullptr;
  int partition = 0;
  std::string bytes;
  std::uint64_t seq = 0;
  // Guarded by the queue mutex.
  std::uint64_t generation = 0;  // the writer batch it belongs to; picks the condition variable
  bool taken = false;
  bool abandoned = false;
  bool done = false;
  ProduceStatus status = ProduceStatus::kUnavailable;
  // produce_async: called by the writer, outside the mutex, once `done` is set.
  QueueProducer::ProduceCallback on_done;
  // Writer thread only.
  std::int64_t offset = 0;
  std::uint32_t segment = 0;
  std::uint32_t pos = 0;
};

struct Assignment {
  Topic* topic;
  int partition;
  const std::vector<std::int64_t>* committed;  // the group's offsets for this topic
  std::int64_t cursor;                         // next offset to hand out (at least committed)
};

class QueueCore;

/// One member of a consumer group. Used by one thread at a time; its state lives under the queue
/// mutex because joins and closes of other members re-split the partitions it owns.
class EmbeddedConsumer final : public QueueConsumer {
 public:
  EmbeddedConsumer(std::shared_ptr<QueueCore> core, GroupState* group, std::vector<Topic*> topics)
      : core_(std::move(core)), group_(group), topics_(std::move(topics)) {}
  ~EmbeddedConsumer() override { close(); }

  std::optional<QueueRecord> poll(std::chrono::milliseconds timeout) override;
  void commit(std::string_view topic, int partition, std::int64_t next_offset) override;
  void close() override;
  std::vector<PartitionLag> lag() const override;

 private:
  friend class QueueCore;
  std::shared_ptr<QueueCore> core_;
  // Guarded by the queue mutex.
  GroupState* group_;
  std::vector<Topic*> topics_;
  std::vector<Assignment> assigned_;
  std::size_t next_ = 0;  // round-robin position over assigned_
  bool closed_ = false;
};

/// Owns the directory, the segments, the index and the threads. Shared by the queue handle and
/// its consumers so that a consumer outliving the queue stays safe. Thread-safe.
class QueueCore final : public QueueProducer {
 public:
  explicit QueueCore(const EmbeddedQueueOptions& options) : opts_(options), dir_(options.dir) {}
  ~QueueCore() override;

  bool open(std::string& error);

  ProduceStatus produce(std::string_view topic, std::string_view key, std::string_view payload,
                        std::chrono::milliseconds timeout) override;
  void produce_async(std::string_view topic, std::string_view key, std::string_view payload,
                     ProduceCallback done) override;
  /// The embedded queue has no asynchronous path: a notice is simply written like a lead.
  ProduceStatus send(std::string_view topic, std::string_view key,
                     std::string_view payload) override {
    return produce(topic, key, payload, std::chrono::seconds(5));
  }
  bool flush(std::chrono::milliseconds timeout) override;
  bool healthy() override { return healthy_.load(); }
  std::optional<std::int64_t> rewrite_payloads(const std::vector<std::string>& topics,
                                               const std::vector<std::string>& keys,
                                               const PayloadRewrite& rewrite) override;
  std::atomic<bool> stop_after_journal{false};  // embedded_queue_detail's test hook

  std::unique_ptr<QueueConsumer> make_consumer(std::shared_ptr<QueueCore> self,
                                               const std::string& group,
                                               const std::vector<std::string>& topics);
  GroupBacklog backlog(const std::string& group);
  void shutdown();

  std::optional<QueueRecord> poll(EmbeddedConsumer& c, std::chrono::milliseconds timeout);
  void commit(EmbeddedConsumer& c, std::string_view topic, int partition, std::int64_t next);
  void close(EmbeddedConsumer& c);
  /// The group's lag on the partitions `c` owns: visible records against committed offsets.
  std::vector<PartitionLag> lag(const EmbeddedConsumer& c) const;

  embedded_queue_detail::WriterStats stats() const {
    return {syncs_.load(), synced_records_.load(), sync_nanos_.load()};
  }

 private:
  struct Found {
    std::shared_ptr<Segment> segment;
    IndexEntry entry;
    const Topic* topic;
    int partition;
  };

  bool validate(std::string& error) const;
  bool check_meta(std::string& error);
  bool load_offsets(const std::string& path, std::string& error);
  bool scan_segment(Segment& seg, bool last, std::string& error);
  Topic& topic_locked(std::string_view name);
  std::int64_t min_committed_locked(const Topic& t, int partition) const;
  void advance_trim_locked(Topic& t, int partition);
  void rebalance_locked(GroupState& g);
  bool next_locked(EmbeddedConsumer& c, Found& f);
  std::optional<QueueRecord> read_record(const Found& f);
  std::shared_ptr<Segment> segment_locked(std::uint32_t id) const;

  void writer_loop();
  void write_batch(std::vector<std::shared_ptr<PendingRecord>>& batch);
  bool commit_chunk(std::vector<std::shared_ptr<PendingRecord>>& batch, std::size_t from,
                    std::size_t to);
  void fail_from(std::vector<std::shared_ptr<PendingRecord>>& batch, std::size_t from);
  // Runs the produce_async callbacks of records [from, to), which are done.
  void answer_async(std::vector<std::shared_ptr<PendingRecord>>& batch, std::size_t from,
                    std::size_t to);
  ProduceStatus enqueue(std::string_view topic, std::string_view key, std::string_view payload,
                        std::shared_ptr<PendingRecord>& rec, std::unique_lock<std::mutex>& lock);
  bool roll_segment();
  void flusher_loop();
  bool flush_offsets();
  void run_retention();
  void fail_io(const char* op, const std::string& path, int err);
  /// At open, before the segments are scanned: a rewrite whose journal is on disk is applied
  /// again, whole (rewrite.cpp).
  bool redo_rewrites(std::string& error);

  const EmbeddedQueueOptions opts_;
  const std::string dir_;
  int lock_fd_ = -1;
  bool opened_ = false;

  mutable std::mutex mu_;
  std::condition_variable writer_cv_;  // records queued, or stop
  // Producers of one writer batch wait on one of two condition variables, alternating by batch,
  // so finishing a batch wakes only its own producers, not those already queued for the next.
  std::condition_variable producers_cv_[2];  // records done
  std::uint64_t generation_ = 0;             // guarded by mu_: the batch now being filled
  std::condition_variable flushed_cv_;       // done_seq_ moved
  std::condition_variable records_cv_;       // records visible, assignment changed, or stop
  std::condition_variable flusher_cv_;       // stop the offsets flusher
  std::map<std::string, std::unique_ptr<Topic>, std::less<>> topics_;
  std::map<std::string, std::unique_ptr<GroupState>, std::less<>> groups_;
  std::deque<std::shared_ptr<Segment>> segments_;  // ascending ids; back() is the active one
  std::vector<std::shared_ptr<PendingRecord>> queue_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t done_seq_ = 0;
  bool stopping_ = false;
  bool writer_stop_ = false;
  bool flusher_stop_ = false;
  bool threads_joined_ = false;
  std::atomic<bool> healthy_{true};
  std::atomic<std::uint64_t> syncs_{0};
  std::atomic<std::uint64_t> synced_records_{0};
  std::atomic<std::uint64_t> sync_nanos_{0};

  // Writer thread only (set up by open before it starts).
  std::shared_ptr<Segment> active_;
  std::size_t active_size_ = 0;   // end of the records
  std::size_t prealloc_end_ = 0;  // file size; [active_size_, prealloc_end_) is zeros
  std::string batch_buf_;

  std::mutex flush_mu_;     // one offsets flush at a time
  std::mutex rewrite_mu_;   // one rewrite (one journal) at a time
  std::mutex shutdown_mu_;  // shutdown runs once, other callers wait for it
  bool shut_down_ = false;
  std::thread writer_;
  std::thread flusher_;
};

}  // namespace embedded
}  // namespace leadflow
