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
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "leadflow/base/log.hpp"

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
}  // namespace embedded_queue_detail

namespace {

// ---------------------------------------------------------------------------------------------
// CRC32C, reflected polynomial 0x82F63B78, slicing-by-8.

using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr CrcTables make_crc_tables() {
  CrcTables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s) {
    for (std::size_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

constexpr CrcTables kCrc = make_crc_tables();

std::uint32_t load_u32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

std::uint32_t crc32c(const char* data, std::size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  std::uint32_t crc = 0xFFFFFFFFu;
  while (n >= 8) {
    const std::uint32_t lo = load_u32(p) ^ crc;
    const std::uint32_t hi = load_u32(p + 4);
    crc = kCrc[7][lo & 0xFF] ^ kCrc[6][(lo >> 8) & 0xFF] ^ kCrc[5][(lo >> 16) & 0xFF] ^
          kCrc[4][lo >> 24] ^ kCrc[3][hi & 0xFF] ^ kCrc[2][(hi >> 8) & 0xFF] ^
          kCrc[1][(hi >> 16) & 0xFF] ^ kCrc[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kCrc[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// ---------------------------------------------------------------------------------------------
// Record encoding.

constexpr std::uint32_t kMagic = 0x3151464C;  // "LFQ1"
constexpr std::size_t kHeaderBytes = 34;
constexpr std::size_t kCrcStart = 12;
constexpr std::size_t kMaxRecordBytes = 64u << 20;
constexpr std::size_t kMaxSegmentBytes = 1u << 30;  // positions fit the index's 32 bits
// The active segment is extended with zeros ahead of the records, a chunk at a time: overwriting
// blocks that already exist inside the file size lets fdatasync skip the journal commit an append
// needs.
constexpr std::size_t kPreallocBytes = 1u << 20;

void put_u16(char* p, std::uint16_t v) {
  p[0] = char(v);
  p[1] = char(v >> 8);
}
void put_u32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = char(v >> (8 * i));
}
void put_u64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = char(v >> (8 * i));
}
std::uint16_t get_u16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return std::uint16_t(u[0] | u[1] << 8);
}
std::uint32_t get_u32(const char* p) { return load_u32(reinterpret_cast<const unsigned char*>(p)); }
std::uint64_t get_u64(const char* p) {
  return std::uint64_t(get_u32(p)) | std::uint64_t(get_u32(p + 4)) << 32;
}

struct DecodedRecord {
  std::int64_t offset = 0;
  std::uint32_t partition = 0;
  std::string_view topic, key, payload;
};

// Checks one record at the start of `data` (of which `avail` bytes exist). Returns its length, or
// 0 when the bytes there are not a whole, intact record.
std::size_t decode_record(const char* data, std::size_t avail, DecodedRecord& out) {
  if (avail < kHeaderBytes || get_u32(data) != kMagic) return 0;
  const std::uint32_t len = get_u32(data + 4);
  if (len < kHeaderBytes || len > avail || len > kMaxRecordBytes) return 0;
  const std::uint32_t key_len = get_u32(data + 24);
  const std::uint32_t payload_len = get_u32(data + 28);
  const std::uint16_t topic_len = get_u16(data + 32);
  if (std::uint64_t(kHeaderBytes) + topic_len + key_len + payload_len != len) return 0;
  if (crc32c(data + kCrcStart, len - kCrcStart) != get_u32(data + 8)) return 0;
  out.offset = static_cast<std::int64_t>(get_u64(data + 12));
  out.partition = get_u32(data + 20);
  const char* p = data + kHeaderBytes;
  out.topic = {p, topic_len};
  out.key = {p + topic_len, key_len};
  out.payload = {p + topic_len + key_len, payload_len};
  return len;
}

// Everything but offset and CRC, which the writer fills in.
std::string encode_record(std::string_view topic, int partition, std::string_view key,
                          std::string_view payload) {
  std::string out(kHeaderBytes + topic.size() + key.size() + payload.size(), '\0');
  char* p = out.data();
  put_u32(p, kMagic);
  put_u32(p + 4, static_cast<std::uint32_t>(out.size()));
  put_u32(p + 20, static_cast<std::uint32_t>(partition));
  put_u32(p + 24, static_cast<std::uint32_t>(key.size()));
  put_u32(p + 28, static_cast<std::uint32_t>(payload.size()));
  put_u16(p + 32, static_cast<std::uint16_t>(topic.size()));
  p += kHeaderBytes;
  std::memcpy(p, topic.data(), topic.size());
  std::memcpy(p + topic.size(), key.data(), key.size());
  std::memcpy(p + topic.size() + key.size(), payload.data(), payload.size());
  return out;
}

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

// ---------------------------------------------------------------------------------------------
// Small file helpers.

std::string errno_text(int err) { return std::strerror(err); }

bool write_all(int fd, const char* p, std::size_t n, off_t at) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, at);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    at += w;
  }
  return true;
}

bool fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// Temp file, fsync, rename. The caller fsyncs the directory.
bool write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = write_all(fd, content.data(), content.size(), 0) && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

bool read_file(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out.clear();
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return n == 0;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string to_hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

bool from_hex(std::string_view s, std::string& out) {
  if (s.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out.clear();
  for (std::size_t i = 0; i < s.size(); i += 2) {
    const int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}

std::string segment_name(std::uint32_t id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "seg-%020u.log", id);
  return buf;
}

// The group's name is also stored inside the file; the file name only has to be unique and short.
std::string offsets_file_name(std::string_view group) {
  std::string hex = to_hex(group);
  if (hex.size() > 160) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : group) h = (h ^ c) * 1099511628211ull;
    hex = hex.substr(0, 120) + "-" + to_hex(std::string_view(reinterpret_cast<const char*>(&h), 8));
  }
  return "group-" + hex + ".offsets";
}

// ---------------------------------------------------------------------------------------------
// In-memory state.

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

  std::unique_ptr<QueueConsumer> make_consumer(std::shared_ptr<QueueCore> self,
                                               const std::string& group,
                                               const std::vector<std::string>& topics);
  std::int64_t backlog(const std::string& group);
  void shutdown();

  std::optional<QueueRecord> poll(EmbeddedConsumer& c, std::chrono::milliseconds timeout);
  void commit(EmbeddedConsumer& c, std::string_view topic, int partition, std::int64_t next);
  void close(EmbeddedConsumer& c);

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

  const EmbeddedQueueOptions opts_;
  const std::string dir_;
  int lock_fd_ = -1;
  bool opened_ = false;

  mutable std::mutex mu_;
  std::condition_variable writer_cv_;     // records queued, or stop
  // Producers of one writer batch wait on one of two condition variables, alternating by batch,
  // so finishing a batch wakes only its own producers, not those already queued for the next.
  std::condition_variable producers_cv_[2];  // records done
  std::uint64_t generation_ = 0;             // guarded by mu_: the batch now being filled
  std::condition_variable flushed_cv_;    // done_seq_ moved
  std::condition_variable records_cv_;    // records visible, assignment changed, or stop
  std::condition_variable flusher_cv_;    // stop the offsets flusher
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
  std::mutex shutdown_mu_;  // shutdown runs once, other callers wait for it
  bool shut_down_ = false;
  std::thread writer_;
  std::thread flusher_;
};

// ---------------------------------------------------------------------------------------------
// Opening.

bool QueueCore::validate(std::string& error) const {
  if (opts_.dir.empty()) {
    error = "embedded queue: options.dir is empty";
  } else if (opts_.partitions < 1 || opts_.partitions > 4096) {
    error = "embedded queue: options.partitions must be between 1 and 4096";
  } else if (opts_.max_backlog < 1) {
    error = "embedded queue: options.max_backlog must be positive";
  } else if (opts_.segment_bytes < 4096 || opts_.segment_bytes > kMaxSegmentBytes) {
    error = "embedded queue: options.segment_bytes must be between 4 KiB and 1 GiB";
  } else if (opts_.offsets_flush_interval.count() <= 0) {
    error = "embedded queue: options.offsets_flush_interval must be positive";
  } else {
    return true;
  }
  return false;
}

bool QueueCore::check_meta(std::string& error) {
  const std::string path = dir_ + "/META";
  std::string content;
  const std::string expected =
      "leadflow-queue 1\npartitions " + std::to_string(opts_.partitions) + "\n";
  if (read_file(path, content)) {
    if (content == expected) return true;
    std::istringstream in(content);
    std::string word, version, key;
    int partitions = 0;
    if (in >> word >> version >> key >> partitions && word == "leadflow-queue" && version == "1" &&
        key == "partitions") {
      error = "queue directory " + dir_ + " was created with " + std::to_string(partitions) +
              " partitions but options.partitions is " + std::to_string(opts_.partitions);
    } else {
      error = "queue directory " + dir_ + " has an unreadable META file";
    }
    return false;
  }
  if (errno != ENOENT) {
    error = "embedded queue: cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  if (!write_file_atomically(path, expected) || !fsync_dir(dir_)) {
    error = "embedded queue: cannot write " + path + ": " + errno_text(errno);
    return false;
  }
  return true;
}

bool QueueCore::load_offsets(const std::string& path, std::string& error) {
  std::string content;
  if (!read_file(path, content)) {
    error = "embedded queue: cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  std::istringstream in(content);
  std::string word, version, hex, name;
  auto bad = [&] {
    error = "embedded queue: malformed offsets file " + path +
            " (remove it to make its group start again from the oldest record)";
    return false;
  };
  if (!(in >> word >> version) || word != "leadflow-offsets" || version != "1") return bad();
  if (!(in >> word >> hex) || word != "group" || !from_hex(hex, name)) return bad();
  auto group = std::make_unique<GroupState>();
  group->name = name;
  std::size_t topics = 0;
  for (;;) {
    if (!(in >> word)) return bad();
    if (word == "end") {
      std::size_t count = 0;
      if (!(in >> count) || count != topics) return bad();
      break;
    }
    int partitions = 0;
    std::string topic_name;
    if (word != "topic" || !(in >> hex >> partitions) || !from_hex(hex, topic_name)) return bad();
    if (partitions != opts_.partitions) return bad();
    std::vector<std::int64_t> values(static_cast<std::size_t>(partitions));
    for (auto& v : values) {
      if (!(in >> v) || v < 0) return bad();
    }
    Topic& t = topic_locked(topic_name);
    t.groups.push_back(group.get());
    group->committed[&t] = values;
    group->flushed[&t] = std::move(values);
    ++topics;
  }
  if (groups_.count(name) != 0) return bad();
  groups_.emplace(name, std::move(group));
  return true;
}

Topic& QueueCore::topic_locked(std::string_view name) {
  auto it = topics_.find(name);
  if (it != topics_.end()) return *it->second;
  auto t = std::make_unique<Topic>();
  t->name = std::string(name);
  t->parts.resize(static_cast<std::size_t>(opts_.partitions));
  Topic& ref = *t;
  topics_.emplace(t->name, std::move(t));
  return ref;
}

bool QueueCore::scan_segment(Segment& seg, bool last, std::string& error) {
  struct stat st {};
  if (::fstat(seg.fd, &st) != 0) {
    error = "embedded queue: cannot stat " + seg.path + ": " + errno_text(errno);
    return false;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) return true;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, seg.fd, 0);
  if (map == MAP_FAILED) {
    error = "embedded queue: cannot map " + seg.path + ": " + errno_text(errno);
    return false;
  }
  const char* data = static_cast<const char*>(map);
  std::size_t pos = 0;
  std::int64_t skipped = 0;
  while (pos < size) {
    DecodedRecord r;
    const std::size_t len = decode_record(data + pos, size - pos, r);
    if (len == 0) break;
    if (r.partition >= static_cast<std::uint32_t>(opts_.partitions) || r.offset < 0) {
      ++skipped;
      pos += len;
      continue;
    }
    Topic& t = topic_locked(r.topic);
    Partition& part = t.parts[r.partition];
    if (r.offset < part.end) {  // a duplicate or out-of-order offset: cannot come from the writer
      ++skipped;
      pos += len;
      continue;
    }
    part.end = r.offset + 1;
    auto& max_off = seg.max_offset[{&t, static_cast<int>(r.partition)}];
    max_off = std::max(max_off, r.offset);
    if (r.offset >= part.trim) {
      part.index.push_back(
          {r.offset, seg.id, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(len)});
      ++t.retained;
    }
    pos += len;
  }
  // Zeros after the last record are space the writer preallocated, not damage.
  const bool zero_tail = std::all_of(data + pos, data + size, [](char c) { return c == 0; });
  ::munmap(map, size);
  seg.data_end = pos;
  if (skipped > 0) {
    log(LogLevel::kError, "queue_records_skipped", {{"segment", seg.path}, {"records", skipped}});
  }
  if (pos < size && !zero_tail) {
    if (last) {
      // A crash mid-write leaves a partial record (or garbage) at the end of the active segment.
      // Nothing there was acknowledged: acknowledgement waits for fdatasync of the whole batch.
      if (::ftruncate(seg.fd, static_cast<off_t>(pos)) != 0 || ::fdatasync(seg.fd) != 0) {
        error = "embedded queue: cannot truncate " + seg.path + ": " + errno_text(errno);
        return false;
      }
      log(LogLevel::kWarn, "queue_torn_tail_truncated",
          {{"segment", seg.path}, {"bytes_dropped", size - pos}});
    } else {
      log(LogLevel::kError, "queue_segment_corrupt",
          {{"segment", seg.path}, {"position", pos}, {"bytes_ignored", size - pos}});
    }
  }
  return true;
}

bool QueueCore::open(std::string& error) {
  if (!validate(error)) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    error = "embedded queue: cannot create directory " + dir_ + ": " + ec.message();
    return false;
  }
  const std::string lock_path = dir_ + "/LOCK";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    error = "embedded queue: cannot open " + lock_path + ": " + errno_text(errno);
    return false;
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    error = errno == EWOULDBLOCK
                ? "queue directory " + dir_ + " is in use by another process"
                : "embedded queue: cannot lock " + lock_path + ": " + errno_text(errno);
    return false;
  }
  if (!check_meta(error)) return false;

  std::vector<std::pair<std::uint32_t, std::string>> segment_files;
  std::vector<std::string> offsets_files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.ends_with(".tmp")) {
      std::filesystem::remove(entry.path(), ec);  // an offsets write cut short by a crash
    } else if (name.starts_with("seg-") && name.ends_with(".log") && name.size() == 28 &&
               std::all_of(name.begin() + 4, name.begin() + 24,
                           [](char c) { return c >= '0' && c <= '9'; })) {
      segment_files.emplace_back(static_cast<std::uint32_t>(std::stoull(name.substr(4, 20))),
                                 entry.path().string());
    } else if (name.starts_with("group-") && name.ends_with(".offsets")) {
      offsets_files.push_back(entry.path().string());
    }
  }
  if (ec) {
    error = "embedded queue: cannot list " + dir_ + ": " + ec.message();
    return false;
  }
  std::lock_guard lock(mu_);  // nothing else runs yet; keeps the *_locked helpers honest
  for (const auto& path : offsets_files) {
    if (!load_offsets(path, error)) return false;
  }
  for (auto& [name, t] : topics_) {
    for (int p = 0; p < opts_.partitions; ++p) t->parts[p].trim = min_committed_locked(*t, p);
  }

  std::sort(segment_files.begin(), segment_files.end());
  for (std::size_t i = 0; i < segment_files.size(); ++i) {
    auto seg = std::make_shared<Segment>();
    seg->id = segment_files[i].first;
    seg->path = segment_files[i].second;
    seg->fd = ::open(seg->path.c_str(), O_RDWR | O_CLOEXEC);
    if (seg->fd < 0) {
      error = "embedded queue: cannot open " + seg->path + ": " + errno_text(errno);
      return false;
    }
    if (!scan_segment(*seg, i + 1 == segment_files.size(), error)) return false;
    segments_.push_back(std::move(seg));
  }
  for (auto& [name, t] : topics_) {
    for (int p = 0; p < opts_.partitions; ++p) {
      Partition& part = t->parts[p];
      for (GroupState* g : t->groups) part.end = std::max(part.end, g->committed[t.get()][p]);
      part.assign_next = part.end;
    }
  }

  if (segments_.empty()) {
    auto seg = std::make_shared<Segment>();
    seg->id = 0;
    seg->path = dir_ + "/" + segment_name(0);
    seg->fd = ::open(seg->path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (seg->fd < 0 || !fsync_dir(dir_)) {
      error = "embedded queue: cannot create " + seg->path + ": " + errno_text(errno);
      return false;
    }
    segments_.push_back(std::move(seg));
  }
  active_ = segments_.back();
  struct stat st {};
  if (::fstat(active_->fd, &st) != 0) {
    error = "embedded queue: cannot stat " + active_->path + ": " + errno_text(errno);
    return false;
  }
  active_size_ = active_->data_end;
  prealloc_end_ = static_cast<std::size_t>(st.st_size);

  std::int64_t records = 0;
  for (auto& [name, t] : topics_) records += t->retained;
  log(LogLevel::kInfo, "queue_opened",
      {{"dir", dir_},
       {"segments", segments_.size()},
       {"topics", topics_.size()},
       {"groups", groups_.size()},
       {"records_held", records}});

  opened_ = true;
  writer_ = std::thread([this] { writer_loop(); });
  flusher_ = std::thread([this] { flusher_loop(); });
  return true;
}

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
  rec->bytes = encode_record(topic, partition, key, payload);
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
  if (const ProduceStatus s = enqueue(topic, key, payload, rec, lock); s != ProduceStatus::kOk) return s;
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

std::int64_t QueueCore::backlog(const std::string& group) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(group);
  if (it == groups_.end()) return 0;
  std::int64_t total = 0;
  for (const auto& [t, committed] : it->second->committed) {
    for (int p = 0; p < opts_.partitions; ++p) total += t->parts[p].end - committed[p];
  }
  return total;
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
        out += "topic " + to_hex(*topic) + " " + std::to_string(values->size());
        for (std::int64_t v : *values) out += " " + std::to_string(v);
        out += "\n";
      }
      out += "end " + std::to_string(by_name.size()) + "\n";
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
  std::int64_t backlog(const std::string& group) override { return core_->backlog(group); }
  void shutdown() override { core_->shutdown(); }

  QueueCore& core() { return *core_; }

 private:
  std::shared_ptr<QueueCore> core_;
};

}  // namespace

std::unique_ptr<LeadQueue> open_embedded_queue(const EmbeddedQueueOptions& options,
                                               std::string& error) {
  auto core = std::make_shared<QueueCore>(options);
  if (!core->open(error)) return nullptr;
  return std::make_unique<EmbeddedQueue>(std::move(core));
}

namespace embedded_queue_detail {

WriterStats writer_stats(LeadQueue& queue) {
  auto* q = dynamic_cast<EmbeddedQueue*>(&queue);
  return q ? q->core().stats() : WriterStats{};
}

std::uint32_t crc32c(std::string_view data) { return leadflow::crc32c(data.data(), data.size()); }

}  // namespace embedded_queue_detail

}  // namespace leadflow
