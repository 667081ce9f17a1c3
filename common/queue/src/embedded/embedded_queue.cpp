// The embedded default's durable queue: the single-machine stand-in for Kafka.
//
// Layout of options.dir (one process owns it through flock on LOCK):
//   LOCK                          flock'd for the life of the queue
//   META                          "leadflow-queue 1 / partitions N"; a different options.partitions
//                                 later is refused (keys would move to other partitions)
//   seg-<20-digit id>.log         append-only segments; the highest id is the active one
//   group-<hex name>.offsets      one per consumer group, replaced atomically
//
// Record (little-endian), CRC32C (Castagnoli, table-driven, slicing-by-8) over bytes [12, len):
//   u32 magic "LFQ1" | u32 len | u32 crc | i64 offset | u32 partition | u32 key_len |
//   u32 payload_len | u16 topic_len | topic | key | payload
// (record_format.hpp; the checksum is crc32c.cpp, the file calls file_io.cpp).
// Topics are stored by name in every record, so there is no catalogue to keep in step.
//
// Writes (group commit): produce() appends its encoded record to a queue and waits. One writer
// thread takes everything queued since its last sync, assigns offsets, computes the CRCs, writes
// the lot with one pwrite and calls fdatasync once, then publishes the records to consumers and
// wakes the producers. A record is visible to consumers only once it is durable. A batch that does
// not fit in the active segment is split: the first part is synced, then a new segment is created
// (and the directory fsync'd) for the rest. The active segment is extended with zeros 1 MiB ahead
// of the records, inside the same sync: overwriting blocks already within the file size lets
// fdatasync skip the journal commit an append needs (median 1.3 ms instead of 3.2 ms per sync
// on this machine's disk). The scan treats zeros after the last record as that headroom.
//
// Reads: memory holds one 24-byte index entry (offset, segment, position, length) per record not
// yet committed by every group subscribed to its topic; poll() preads the payload and re-checks
// the CRC. open scans every segment, checks CRCs, truncates a torn tail of the last segment (a
// crash mid-write) and rebuilds the index.
//
// Consumer groups: a group's committed offsets live in memory and are written (temp file, fsync,
// rename, fsync dir) by a background flush every options.offsets_flush_interval, on consumer
// close and on shutdown. After a restart, every record at or above them is delivered again
// (at-least-once). A group that subscribes to a topic for the first time starts at the oldest
// record still held (Kafka's auto.offset.reset=earliest, within what retention kept).
// Several consumers of one group in one process split each topic's partitions statically: among
// the live consumers subscribed to the topic, in join order, consumer i of k owns the partitions
// p with p % k == i. Joins and closes re-split; a partition that changes owner restarts at the
// group's committed offset, so records a closed consumer took but never committed go to the new
// owner (and a consumer that loses a partition may see its late commits produce duplicates,
// which at-least-once allows). Commits only move forward and are clamped to the partition end.
//
// Backpressure: each topic's backlog is the records its slowest subscribed group has not
// committed; for a topic no group has ever subscribed to, every record held counts. That is
// exactly what the index holds in memory. When backlog + records waiting for the writer reaches
// options.max_backlog, produce() returns kQueueFull at once. The limit is per topic, so an
// unconsumed topic cannot stall the others; it does fill up and then refuse.
//
// Retention: the background flush deletes the oldest segments (never the active one) whose
// records every subscribed group has committed *in the offsets files already on disk*, so a
// crash can never leave a committed offset pointing before a deleted record it still needs. A
// topic no group subscribes to keeps everything. A group that subscribed once keeps holding
// retention until its offsets file is removed. On open, a partition's next offset is the larger
// of the last record on disk + 1 and every group's committed offset, so offsets are never reused
// after their segments were deleted.
//
// Failure: any write, fsync, rename or truncate error makes the queue unhealthy for good (after a
// failed fsync the page cache can no longer be trusted); produce then returns kUnavailable and
// healthy() false. Restarting the process recovers from what is on disk.
// kTimedOut means the outcome is unknown if the writer had already taken the record; a record
// still waiting in the queue when its producer gives up is dropped and never written.
//
// Threads: producers (any number), one writer, one offsets flusher. One mutex guards the shared
// state; the writer does its I/O and CRC work outside it. The directory lock is released when the
// last handle (the queue or a consumer) is destroyed, so a late commit is still persisted.

#include "leadflow/queue/embedded_queue.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "embedded/crc32c.hpp"
#include "embedded/file_io.hpp"
#include "embedded/queue_core.hpp"
#include "embedded/record_format.hpp"
#include "leadflow/base/log.hpp"

namespace leadflow {
namespace embedded {
namespace {

// Stable across runs and machines: FNV-1a 64.
int partition_for(std::string_view key, int partitions) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(partitions));
}

// now + timeout, saturating: callers may pass milliseconds::max() for "no limit".
std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  const auto now = std::chrono::steady_clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::time_point::max() - now);
  return timeout >= room ? std::chrono::steady_clock::time_point::max() : now + timeout;
}

}  // namespace

QueueCore::~QueueCore() {
  shutdown();
  segments_.clear();
  active_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

// ---------------------------------------------------------------------------------------------
// Producing.

// Builds the record and queues it for the writer; kOk means queued, not yet durable.
ProduceStatus QueueCore::enqueue(std::string_view topic, std::string_view key,
                                 std::string_view payload, std::shared_ptr<PendingRecord>& rec,
                                 std::unique_lock<std::mutex>& lock) {
  if (!healthy_.load()) return ProduceStatus::kUnavailable;
  if (topic.size() > 0xFFFF ||
      kHeaderBytes + topic.size() + key.size() + payload.size() > kMaxRecordBytes) {
    log(LogLevel::kWarn, "queue_record_too_large",
        {{"bytes", kHeaderBytes + topic.size() + key.size() + payload.size()}});
    return ProduceStatus::kUnavailable;
  }
  const int partition = partition_for(key, opts_.partitions);
  // Stamped as Kafka stamps a record (its create time), so the backlog's oldest record has an age.
  const auto produced_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  rec->bytes = encode_record(topic, partition, key, payload, produced_ms);
  rec->partition = partition;

  lock.lock();
  if (stopping_ || !healthy_.load()) return ProduceStatus::kUnavailable;
  Topic& t = topic_locked(topic);
  if (t.retained + t.queued >= opts_.max_backlog) return ProduceStatus::kQueueFull;
  ++t.queued;
  rec->topic = &t;
  rec->seq = ++next_seq_;
  rec->generation = generation_;
  queue_.push_back(rec);
  writer_cv_.notify_one();
  return ProduceStatus::kOk;
}

ProduceStatus QueueCore::produce(std::string_view topic, std::string_view key,
                                 std::string_view payload, std::chrono::milliseconds timeout) {
  const auto deadline = deadline_after(timeout);
  auto rec = std::make_shared<PendingRecord>();
  std::unique_lock lock(mu_, std::defer_lock);
  if (const ProduceStatus s = enqueue(topic, key, payload, rec, lock); s != ProduceStatus::kOk)
    return s;
  if (!producers_cv_[rec->generation & 1].wait_until(lock, deadline, [&] { return rec->done; })) {
    if (!rec->taken) rec->abandoned = true;  // the writer drops it unwritten
    return ProduceStatus::kTimedOut;
  }
  return rec->status;
}

void QueueCore::produce_async(std::string_view topic, std::string_view key,
                              std::string_view payload, ProduceCallback done) {
  auto rec = std::make_shared<PendingRecord>();
  rec->on_done = std::move(done);
  std::unique_lock lock(mu_, std::defer_lock);
  const ProduceStatus s = enqueue(topic, key, payload, rec, lock);
  if (lock.owns_lock()) lock.unlock();
  // Refused at once: answered here. Queued: the writer answers once the batch is synced; it
  // always does (success, or failure when the disk fails or the queue stops), so no deadline.
  if (s != ProduceStatus::kOk) rec->on_done(s);
}

bool QueueCore::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const std::uint64_t target = next_seq_;
  const bool done =
      flushed_cv_.wait_until(lock, deadline_after(timeout), [&] { return done_seq_ >= target; });
  return done && healthy_.load();
}

void QueueCore::writer_loop() {
  std::vector<std::shared_ptr<PendingRecord>> incoming;
  std::vector<std::shared_ptr<PendingRecord>> batch;
  std::unique_lock lock(mu_);
  for (;;) {
    writer_cv_.wait(lock, [&] { return !queue_.empty() || writer_stop_; });
    if (queue_.empty()) break;  // stopping, and everything queued is written
    incoming.swap(queue_);
    ++generation_;
    const std::uint64_t last_seq = incoming.back()->seq;
    for (auto& rec : incoming) {
      if (rec->abandoned) {
        rec->done = true;
        rec->status = ProduceStatus::kTimedOut;
        --rec->topic->queued;
      } else {
        rec->taken = true;
        batch.push_back(std::move(rec));
      }
    }
    incoming.clear();
    lock.unlock();
    if (!batch.empty()) write_batch(batch);
    batch.clear();
    lock.lock();
    done_seq_ = last_seq;
    flushed_cv_.notify_all();
  }
}

void QueueCore::write_batch(std::vector<std::shared_ptr<PendingRecord>>& batch) {
  if (!healthy_.load()) {
    fail_from(batch, 0);
    return;
  }
  batch_buf_.clear();
  std::size_t chunk_from = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    PendingRecord& rec = *batch[i];
    const std::size_t len = rec.bytes.size();
    const std::size_t used = active_size_ + batch_buf_.size();
    if (used > 0 && used + len > opts_.segment_bytes) {
      if (!batch_buf_.empty() && !commit_chunk(batch, chunk_from, i)) {
        fail_from(batch, i);
        return;
      }
      if (!roll_segment()) {
        fail_from(batch, i);
        return;
      }
      chunk_from = i;
    }
    rec.offset = rec.topic->parts[rec.partition].assign_next++;
    rec.segment = active_->id;
    rec.pos = static_cast<std::uint32_t>(active_size_ + batch_buf_.size());
    const std::size_t at = batch_buf_.size();
    batch_buf_.append(rec.bytes);
    char* p = batch_buf_.data() + at;
    put_u64(p + 12, static_cast<std::uint64_t>(rec.offset));
    put_u32(p + 8, crc32c(p + kCrcStart, len - kCrcStart));
  }
  if (!batch_buf_.empty() && !commit_chunk(batch, chunk_from, batch.size())) {
    fail_from(batch, batch.size());
  }
}

// Writes batch_buf_ (records [from, to) of the batch) to the active segment, syncs it, and
// publishes the records. On failure the records are failed here.
bool QueueCore::commit_chunk(std::vector<std::shared_ptr<PendingRecord>>& batch, std::size_t from,
                             std::size_t to) {
  const int fd = active_->fd;
  const std::size_t data_end = active_size_ + batch_buf_.size();
  std::size_t new_prealloc_end = prealloc_end_;
  bool ok = true;
  if (data_end > prealloc_end_) {
    // Extend with zeros past the records; this one sync also makes the new size durable.
    static const std::string kZeros(kPreallocBytes, '\0');
    new_prealloc_end = std::max(data_end, std::min(data_end + kPreallocBytes, opts_.segment_bytes));
    bool extended = true;
    for (std::size_t at = data_end; extended && at < new_prealloc_end; at += kZeros.size()) {
      extended = write_all(fd, kZeros.data(), std::min(kZeros.size(), new_prealloc_end - at),
                           static_cast<off_t>(at));
    }
    if (!extended) {
      // Nearly full disk (or a file size limit): give up the headroom, keep appending records
      // until the records themselves no longer fit.
      ok = ::ftruncate(fd, static_cast<off_t>(prealloc_end_)) == 0;
      new_prealloc_end = data_end;
    }
  }
  ok = ok && write_all(fd, batch_buf_.data(), batch_buf_.size(), static_cast<off_t>(active_size_));
  const auto sync_start = std::chrono::steady_clock::now();
  ok = ok && ::fdatasync(fd) == 0;
  const auto sync_time = std::chrono::steady_clock::now() - sync_start;
  sync_nanos_.fetch_add(static_cast<std::uint64_t>(std::chrono::nanoseconds(sync_time).count()),
                        std::memory_order_relaxed);
  if (!ok) {
    const int err = errno;
    // Best effort: do not leave unacknowledged bytes behind for the next open to resurrect.
    [[maybe_unused]] const int ignored = ::ftruncate(fd, static_cast<off_t>(active_size_));
    prealloc_end_ = active_size_;
    batch_buf_.clear();
    fail_io("write", active_->path, err);
    fail_from(batch, from);
    return false;
  }
  active_size_ = data_end;
  prealloc_end_ = new_prealloc_end;
  batch_buf_.clear();
  syncs_.fetch_add(1, std::memory_order_relaxed);
  synced_records_.fetch_add(to - from, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    for (std::size_t i = from; i < to; ++i) {
      PendingRecord& rec = *batch[i];
      Partition& part = rec.topic->parts[rec.partition];
      part.index.push_back(
          {rec.offset, rec.segment, rec.pos, static_cast<std::uint32_t>(rec.bytes.size())});
      part.end = rec.offset + 1;
      ++rec.topic->retained;
      --rec.topic->queued;
      auto& max_off = active_->max_offset[{rec.topic, rec.partition}];
      max_off = std::max(max_off, rec.offset);
      rec.status = ProduceStatus::kOk;
      rec.done = true;
    }
  }
  producers_cv_[batch[from]->generation & 1].notify_all();
  records_cv_.notify_all();
  answer_async(batch, from, to);
  return true;
}

void QueueCore::answer_async(std::vector<std::shared_ptr<PendingRecord>>& batch, std::size_t from,
                             std::size_t to) {
  // done and status were set under the mutex; the writer owns the records' callbacks.
  for (std::size_t i = from; i < to; ++i) {
    PendingRecord& rec = *batch[i];
    if (rec.on_done) std::exchange(rec.on_done, nullptr)(rec.status);
  }
}

void QueueCore::fail_from(std::vector<std::shared_ptr<PendingRecord>>& batch, std::size_t from) {
  {
    std::lock_guard lock(mu_);
    for (std::size_t i = from; i < batch.size(); ++i) {
      PendingRecord& rec = *batch[i];
      if (rec.done) continue;
      --rec.topic->queued;
      rec.status = ProduceStatus::kUnavailable;
      rec.done = true;
    }
  }
  for (auto& cv : producers_cv_) cv.notify_all();
  answer_async(batch, from, batch.size());
}

bool QueueCore::roll_segment() {
  auto seg = std::make_shared<Segment>();
  seg->id = active_->id + 1;
  seg->path = dir_ + "/" + segment_name(seg->id);
  seg->fd = ::open(seg->path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (seg->fd < 0) {
    fail_io("create", seg->path, errno);
    return false;
  }
  if (!fsync_dir(dir_)) {  // the new file's name must survive a crash before any ack
    fail_io("fsync directory", dir_, errno);
    return false;
  }
  // The old segment's zero tail is not needed; if this is lost in a crash the scan skips zeros.
  [[maybe_unused]] const int ignored = ::ftruncate(active_->fd, static_cast<off_t>(active_size_));
  std::lock_guard lock(mu_);
  segments_.push_back(seg);
  active_ = std::move(seg);
  active_size_ = 0;
  prealloc_end_ = 0;
  return true;
}

void QueueCore::fail_io(const char* op, const std::string& path, int err) {
  if (healthy_.exchange(false)) {
    log(LogLevel::kError, "queue_io_failed",
        {{"operation", op}, {"path", path}, {"error", errno_text(err)}});
  }
}

// ---------------------------------------------------------------------------------------------
// Consumer groups.

std::int64_t QueueCore::min_committed_locked(const Topic& t, int partition) const {
  if (t.groups.empty()) return 0;
  std::int64_t low = std::numeric_limits<std::int64_t>::max();
  for (const GroupState* g : t.groups) {
    low = std::min(low, g->committed.at(const_cast<Topic*>(&t))[partition]);
  }
  return low;
}

void QueueCore::advance_trim_locked(Topic& t, int partition) {
  Partition& part = t.parts[partition];
  const std::int64_t trim = min_committed_locked(t, partition);
  if (trim <= part.trim) return;
  part.trim = trim;
  while (!part.index.empty() && part.index.front().offset < trim) {
    part.index.pop_front();
    --t.retained;
  }
}

void QueueCore::rebalance_locked(GroupState& g) {
  std::vector<std::vector<Assignment>> next(g.members.size());
  std::map<Topic*, std::vector<std::size_t>> subscribers;  // topic -> member indexes, join order
  for (std::size_t m = 0; m < g.members.size(); ++m) {
    for (Topic* t : g.members[m]->topics_) subscribers[t].push_back(m);
  }
  for (auto& [t, members] : subscribers) {
    const auto& committed = g.committed.at(t);
    for (int p = 0; p < opts_.partitions; ++p) {
      const std::size_t m = members[static_cast<std::size_t>(p) % members.size()];
      std::int64_t cursor = 0;  // a new owner starts at the committed offset
      for (const Assignment& a : g.members[m]->assigned_) {
        if (a.topic == t && a.partition == p) cursor = a.cursor;
      }
      next[m].push_back({t, p, &committed, cursor});
    }
  }
  for (std::size_t m = 0; m < g.members.size(); ++m) {
    g.members[m]->assigned_ = std::move(next[m]);
    g.members[m]->next_ = 0;
  }
}

std::unique_ptr<QueueConsumer> QueueCore::make_consumer(std::shared_ptr<QueueCore> self,
                                                        const std::string& group,
                                                        const std::vector<std::string>& topics) {
  std::unique_lock lock(mu_);
  auto& slot = groups_[group];
  if (!slot) {
    slot = std::make_unique<GroupState>();
    slot->name = group;
  }
  GroupState& g = *slot;
  std::vector<Topic*> subscribed;
  for (const std::string& name : topics) {
    Topic& t = topic_locked(name);
    if (std::find(subscribed.begin(), subscribed.end(), &t) != subscribed.end()) continue;
    subscribed.push_back(&t);
    if (g.committed.count(&t) == 0) {
      // First subscription: start at the oldest record held.
      std::vector<std::int64_t> start(static_cast<std::size_t>(opts_.partitions));
      for (int p = 0; p < opts_.partitions; ++p) {
        const Partition& part = t.parts[p];
        start[p] = part.index.empty() ? part.end : std::max(part.trim, part.index.front().offset);
      }
      g.committed[&t] = std::move(start);
      t.groups.push_back(&g);
      g.dirty = true;
      for (int p = 0; p < opts_.partitions; ++p) advance_trim_locked(t, p);
    }
  }
  auto consumer = std::make_unique<EmbeddedConsumer>(std::move(self), &g, std::move(subscribed));
  if (stopping_) {
    consumer->closed_ = true;
    return consumer;
  }
  g.members.push_back(consumer.get());
  rebalance_locked(g);
  return consumer;
}

std::shared_ptr<Segment> QueueCore::segment_locked(std::uint32_t id) const {
  auto it = std::lower_bound(
      segments_.begin(), segments_.end(), id,
      [](const std::shared_ptr<Segment>& s, std::uint32_t v) { return s->id < v; });
  if (it == segments_.end() || (*it)->id != id) return nullptr;
  return *it;
}

bool QueueCore::next_locked(EmbeddedConsumer& c, Found& f) {
  const std::size_t n = c.assigned_.size();
  for (std::size_t i = 0; i < n; ++i) {
    Assignment& a = c.assigned_[(c.next_ + i) % n];
    Partition& part = a.topic->parts[a.partition];
    const std::int64_t from = std::max(a.cursor, (*a.committed)[a.partition]);
    if (from >= part.end || part.index.empty()) continue;
    // Offsets are contiguous unless a corrupt segment was skipped; then fall back to a search.
    const std::int64_t first = part.index.front().offset;
    std::size_t idx = from <= first ? 0 : static_cast<std::size_t>(from - first);
    if (idx >= part.index.size() || part.index[idx].offset != from) {
      auto it = std::lower_bound(part.index.begin(), part.index.end(), from,
                                 [](const IndexEntry& e, std::int64_t o) { return e.offset < o; });
      if (it == part.index.end()) continue;
      idx = static_cast<std::size_t>(it - part.index.begin());
    }
    const IndexEntry& e = part.index[idx];
    a.cursor = e.offset + 1;
    c.next_ = (c.next_ + i + 1) % n;
    f.segment = segment_locked(e.segment);
    if (!f.segment) continue;  // cannot happen: retention only drops what every group committed
    f.entry = e;
    f.topic = a.topic;
    f.partition = a.partition;
    return true;
  }
  return false;
}

std::optional<QueueRecord> QueueCore::read_record(const Found& f) {
  std::string buf(f.entry.length, '\0');
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::pread(f.segment->fd, buf.data() + got, buf.size() - got,
                              static_cast<off_t>(f.entry.pos + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  DecodedRecord r;
  if (got != buf.size() || decode_record(buf.data(), buf.size(), r) != buf.size() ||
      r.offset != f.entry.offset || r.partition != static_cast<std::uint32_t>(f.partition) ||
      r.topic != f.topic->name) {
    // The bytes were checked when written or scanned; this is the disk going bad under us.
    log(LogLevel::kError, "queue_record_unreadable",
        {{"segment", f.segment->path}, {"position", f.entry.pos}, {"offset", f.entry.offset}});
    return std::nullopt;
  }
  QueueRecord out;
  out.topic = f.topic->name;
  out.partition = f.partition;
  out.offset = r.offset;
  out.key = std::string(r.key);
  out.payload = std::string(r.payload);
  return out;
}

std::optional<QueueRecord> QueueCore::poll(EmbeddedConsumer& c, std::chrono::milliseconds timeout) {
  const auto deadline = deadline_after(timeout);
  std::unique_lock lock(mu_);
  for (;;) {
    if (stopping_ || c.closed_) return std::nullopt;
    Found f;
    if (next_locked(c, f)) {
      lock.unlock();
      auto rec = read_record(f);
      if (rec) return rec;
      lock.lock();
      continue;  // unreadable record skipped (logged)
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    records_cv_.wait_until(lock, deadline);
  }
}

void QueueCore::commit(EmbeddedConsumer& c, std::string_view topic, int partition,
                       std::int64_t next) {
  bool flush_now = false;
  {
    std::lock_guard lock(mu_);
    if (partition < 0 || partition >= opts_.partitions) return;
    auto it = topics_.find(topic);
    if (it == topics_.end()) return;
    Topic& t = *it->second;
    auto committed = c.group_->committed.find(&t);
    if (committed == c.group_->committed.end()) return;  // the group does not read this topic
    next = std::min(next, t.parts[partition].end);
    std::int64_t& current = committed->second[partition];
    if (next <= current) return;
    current = next;
    c.group_->dirty = true;
    advance_trim_locked(t, partition);
    flush_now = threads_joined_;  // after shutdown nothing else will write it
  }
  if (flush_now) flush_offsets();
}

void QueueCore::close(EmbeddedConsumer& c) {
  {
    std::lock_guard lock(mu_);
    if (c.closed_) return;
    c.closed_ = true;
    auto& members = c.group_->members;
    members.erase(std::remove(members.begin(), members.end(), &c), members.end());
    c.assigned_.clear();
    rebalance_locked(*c.group_);
  }
  records_cv_.notify_all();
  flush_offsets();
}

// ---------------------------------------------------------------------------------------------
// Offsets and retention.

void QueueCore::flusher_loop() {
  std::unique_lock lock(mu_);
  while (!flusher_stop_) {
    flusher_cv_.wait_for(lock, opts_.offsets_flush_interval, [&] { return flusher_stop_; });
    if (flusher_stop_) break;
    lock.unlock();
    flush_offsets();
    lock.lock();
  }
}

bool QueueCore::flush_offsets() {
  if (!opened_) return false;
  std::lock_guard flush_lock(flush_mu_);
  struct Snapshot {
    GroupState* group;
    std::string path;
    std::string content;
    std::map<Topic*, std::vector<std::int64_t>> values;
  };
  std::vector<Snapshot> snapshots;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, g] : groups_) {
      if (!g->dirty) continue;
      g->dirty = false;
      Snapshot s{g.get(), dir_ + "/" + offsets_file_name(name), {}, g->committed};
      std::vector<std::pair<const std::string*, const std::vector<std::int64_t>*>> by_name;
      for (const auto& [t, values] : s.values) by_name.emplace_back(&t->name, &values);
      std::sort(by_name.begin(), by_name.end(),
                [](const auto& a, const auto& b) { return *a.first < *b.first; });
      std::string out = "leadflow-offsets 1\ngroup ";
      out += to_hex(name);
      out += '\n';
      for (const auto& [topic, values] : by_name) {
        // Appended piece by piece: g++ 12 at -O3 warns (-Wrestrict, falsely) on `" " + string`.
        out += "topic ";
        out += to_hex(*topic);
        out += ' ';
        out += std::to_string(values->size());
        for (std::int64_t v : *values) {
          out += ' ';
          out += std::to_string(v);
        }
        out += '\n';
      }
      out += "end ";
      out += std::to_string(by_name.size());
      out += '\n';
      s.content = std::move(out);
      snapshots.push_back(std::move(s));
    }
  }
  bool ok = true;
  for (const Snapshot& s : snapshots) {
    if (!write_file_atomically(s.path, s.content)) {
      fail_io("write offsets", s.path, errno);
      ok = false;
      break;
    }
  }
  if (ok && !snapshots.empty() && !fsync_dir(dir_)) {
    fail_io("fsync directory", dir_, errno);
    ok = false;
  }
  {
    std::lock_guard lock(mu_);
    for (Snapshot& s : snapshots) {
      if (ok) {
        s.group->flushed = std::move(s.values);
      } else {
        s.group->dirty = true;
      }
    }
  }
  if (ok) run_retention();
  return ok;
}

void QueueCore::run_retention() {
  std::vector<std::shared_ptr<Segment>> doomed;
  {
    std::lock_guard lock(mu_);
    auto deletable = [](const Segment& seg) {
      for (const auto& [key, max_off] : seg.max_offset) {
        const Topic* t = key.first;
        if (t->groups.empty()) return false;  // nobody reads it yet: keep everything
        for (const GroupState* g : t->groups) {
          auto it = g->flushed.find(const_cast<Topic*>(t));
          if (it == g->flushed.end() || it->second[key.second] <= max_off) return false;
        }
      }
      return true;
    };
    while (segments_.size() > 1 && deletable(*segments_.front())) {
      doomed.push_back(std::move(segments_.front()));
      segments_.pop_front();
    }
  }
  if (doomed.empty()) return;
  for (const auto& seg : doomed) {
    if (::unlink(seg->path.c_str()) != 0 && errno != ENOENT) {
      fail_io("delete segment", seg->path, errno);
      return;
    }
  }
  if (!fsync_dir(dir_)) fail_io("fsync directory", dir_, errno);
  log(LogLevel::kDebug, "queue_segments_deleted",
      {{"segments", doomed.size()}, {"last", doomed.back()->path}});
}

void QueueCore::shutdown() {
  std::lock_guard shutdown_lock(shutdown_mu_);
  if (shut_down_ || !opened_) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    writer_stop_ = true;
  }
  writer_cv_.notify_all();
  records_cv_.notify_all();
  if (writer_.joinable()) writer_.join();  // writes everything already queued
  if (active_ && prealloc_end_ > active_size_) {
    // Leave a tidy file: drop the preallocated zeros (harmless if this is lost).
    if (::ftruncate(active_->fd, static_cast<off_t>(active_size_)) == 0)
      prealloc_end_ = active_size_;
  }
  {
    std::lock_guard lock(mu_);
    flusher_stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  {
    std::lock_guard lock(mu_);
    threads_joined_ = true;
  }
  flush_offsets();
  shut_down_ = true;
  log(LogLevel::kInfo, "queue_closed", {{"dir", dir_}});
}

// ---------------------------------------------------------------------------------------------
// Handles.

std::optional<QueueRecord> EmbeddedConsumer::poll(std::chrono::milliseconds timeout) {
  return core_->poll(*this, timeout);
}

void EmbeddedConsumer::commit(std::string_view topic, int partition, std::int64_t next_offset) {
  core_->commit(*this, topic, partition, next_offset);
}

void EmbeddedConsumer::close() { core_->close(*this); }

std::vector<PartitionLag> EmbeddedConsumer::lag() const { return core_->lag(*this); }

namespace {

/// The LeadQueue handle. Destroying it shuts the queue down; consumers may outlive it.
class EmbeddedQueue final : public LeadQueue {
 public:
  explicit EmbeddedQueue(std::shared_ptr<QueueCore> core) : core_(std::move(core)) {}
  ~EmbeddedQueue() override { core_->shutdown(); }

  QueueProducer& producer() override { return *core_; }
  std::unique_ptr<QueueConsumer> make_consumer(const std::string& group,
                                               const std::vector<std::string>& topics) override {
    return core_->make_consumer(core_, group, topics);
  }
  std::optional<GroupBacklog> group_backlog(const std::string& group) override {
    return core_->backlog(group);
  }
  void shutdown() override { core_->shutdown(); }

  QueueCore& core() { return *core_; }

 private:
  std::shared_ptr<QueueCore> core_;
};

}  // namespace
}  // namespace embedded

std::unique_ptr<LeadQueue> open_embedded_queue(const EmbeddedQueueOptions& options,
                                               std::string& error) {
  auto core = std::make_shared<embedded::QueueCore>(options);
  if (!core->open(error)) return nullptr;
  return std::make_unique<embedded::EmbeddedQueue>(std::move(core));
}

namespace embedded_queue_detail {

WriterStats writer_stats(LeadQueue& queue) {
  auto* q = dynamic_cast<embedded::EmbeddedQueue*>(&queue);
  return q ? q->core().stats() : WriterStats{};
}

std::uint32_t crc32c(std::string_view data) { return embedded::crc32c(data.data(), data.size()); }

}  // namespace embedded_queue_detail

}  // namespace leadflow
