#include "leadflow/queue/embedded_queue.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace leadflow {

namespace embedded_queue_detail {
// Defined in common/queue/src/embedded/embedded_queue.cpp for tests and benchmarks.
struct WriterStats {
  std::uint64_t syncs = 0;
  std::uint64_t records = 0;
  std::uint64_t sync_nanos = 0;
};
WriterStats writer_stats(LeadQueue& queue);
std::uint32_t crc32c(std::string_view data);
}  // namespace embedded_queue_detail

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kQueueTimeout = std::chrono::milliseconds(10'000);

class QueueTempDir {
 public:
  QueueTempDir() {
    std::string tmpl = "/tmp/leadflow-queue-test-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~QueueTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

EmbeddedQueueOptions queue_options_for(const std::string& dir, int partitions = 4) {
  EmbeddedQueueOptions o;
  o.dir = dir;
  o.partitions = partitions;
  return o;
}

std::unique_ptr<LeadQueue> queue_open_or_die(const EmbeddedQueueOptions& o) {
  std::string error;
  auto q = open_embedded_queue(o, error);
  EXPECT_NE(q, nullptr) << error;
  return q;
}

// Everything the consumer can get right now (records already durable are visible at once).
std::vector<QueueRecord> drain(QueueConsumer& c) {
  std::vector<QueueRecord> out;
  while (auto r = c.poll(0ms)) out.push_back(std::move(*r));
  return out;
}

std::vector<fs::path> segment_files(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("seg-") && name.ends_with(".log")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(EmbeddedQueue, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(embedded_queue_detail::crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(embedded_queue_detail::crc32c(""), 0u);
}

TEST(EmbeddedQueue, ProducePollCommitRoundTrip) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path()));
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->producer().healthy());
  EXPECT_EQ(q->producer().produce("leads", "k1", "payload-1", kQueueTimeout), ProduceStatus::kOk);
  EXPECT_EQ(q->producer().produce("leads", "k2", std::string(10'000, 'x'), kQueueTimeout),
            ProduceStatus::kOk);
  EXPECT_EQ(q->producer().produce("leads", "", "", kQueueTimeout), ProduceStatus::kOk);
  EXPECT_TRUE(q->producer().flush(kQueueTimeout));

  auto c = q->make_consumer("workers", {"leads"});
  EXPECT_EQ(q->backlog("workers"), 3);
  auto records = drain(*c);
  ASSERT_EQ(records.size(), 3u);
  std::map<std::string, std::string> by_key;
  for (const auto& r : records) {
    EXPECT_EQ(r.topic, "leads");
    by_key[r.key] = r.payload;
  }
  EXPECT_EQ(by_key["k1"], "payload-1");
  EXPECT_EQ(by_key["k2"], std::string(10'000, 'x'));
  EXPECT_EQ(by_key[""], "");
  for (const auto& r : records) c->commit(r.topic, r.partition, r.offset + 1);
  EXPECT_EQ(q->backlog("workers"), 0);
  EXPECT_EQ(q->backlog("nobody"), 0);
  EXPECT_FALSE(c->poll(0ms));
}

TEST(EmbeddedQueue, KeepsOrderWithinAPartition) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path(), 4));
  ASSERT_TRUE(q);
  constexpr int kRecords = 500;
  for (int i = 0; i < kRecords; ++i) {
    const std::string key = "key-" + std::to_string(i % 7);
    ASSERT_EQ(q->producer().produce("leads", key, std::to_string(i), kQueueTimeout),
              ProduceStatus::kOk);
  }
  auto c = q->make_consumer("workers", {"leads"});
  auto records = drain(*c);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kRecords));
  std::map<int, std::int64_t> next_offset;
  std::map<std::string, int> last_seq;
  std::map<std::string, int> partition_of;
  for (const auto& r : records) {
    EXPECT_EQ(r.offset, next_offset[r.partition]) << "partition " << r.partition;
    next_offset[r.partition] = r.offset + 1;
    const int seq = std::stoi(r.payload);
    if (last_seq.count(r.key)) {
      EXPECT_GT(seq, last_seq[r.key]);
    }
    last_seq[r.key] = seq;
    if (partition_of.count(r.key)) {
      EXPECT_EQ(partition_of[r.key], r.partition);
    }
    partition_of[r.key] = r.partition;
  }
}

TEST(EmbeddedQueue, KeyChoosesTheSamePartitionAcrossTopicsAndRestarts) {
  QueueTempDir dir;
  std::map<std::string, int> first;
  std::set<int> used;
  {
    auto q = queue_open_or_die(queue_options_for(dir.path(), 8));
    ASSERT_TRUE(q);
    for (int i = 0; i < 40; ++i) {
      const std::string key = "lead-" + std::to_string(i);
      ASSERT_EQ(q->producer().produce("a", key, "x", kQueueTimeout), ProduceStatus::kOk);
      ASSERT_EQ(q->producer().produce("b", key, "x", kQueueTimeout), ProduceStatus::kOk);
    }
    auto c = q->make_consumer("g", {"a", "b"});
    for (const auto& r : drain(*c)) {
      if (first.count(r.key)) {
        EXPECT_EQ(first[r.key], r.partition) << r.key;
      }
      first[r.key] = r.partition;
      used.insert(r.partition);
    }
  }
  EXPECT_EQ(first.size(), 40u);
  EXPECT_GT(used.size(), 3u) << "keys should spread over partitions";
  auto q = queue_open_or_die(queue_options_for(dir.path(), 8));
  ASSERT_TRUE(q);
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(q->producer().produce("c", "lead-" + std::to_string(i), "y", kQueueTimeout),
              ProduceStatus::kOk);
  }
  auto c = q->make_consumer("g2", {"c"});
  auto records = drain(*c);
  ASSERT_EQ(records.size(), 40u);
  for (const auto& r : records) EXPECT_EQ(first[r.key], r.partition) << r.key;
}

TEST(EmbeddedQueue, ConsumersGetOnlyTheirTopics) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path()));
  ASSERT_TRUE(q);
  for (const char* topic : {"leads", "results", "retry"}) {
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(q->producer().produce(topic, std::to_string(i), topic, kQueueTimeout),
                ProduceStatus::kOk);
    }
  }
  auto workers = q->make_consumer("workers", {"leads", "retry", "leads"});
  auto reporters = q->make_consumer("reporters", {"results"});
  std::map<std::string, int> seen;
  for (const auto& r : drain(*workers)) {
    EXPECT_EQ(r.payload, r.topic);
    ++seen[r.topic];
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{{"leads", 5}, {"retry", 5}}));
  auto results = drain(*reporters);
  EXPECT_EQ(results.size(), 5u);
  for (const auto& r : results) EXPECT_EQ(r.topic, "results");
  EXPECT_EQ(q->backlog("workers"), 10);
  EXPECT_EQ(q->backlog("reporters"), 5);
}

TEST(EmbeddedQueue, RestartRedeliversOnlyWhatWasNotCommitted) {
  QueueTempDir dir;
  {
    auto q = queue_open_or_die(queue_options_for(dir.path(), 1));
    ASSERT_TRUE(q);
    for (int i = 0; i < 10; ++i) {
      ASSERT_EQ(q->producer().produce("leads", "k", std::to_string(i), kQueueTimeout),
                ProduceStatus::kOk);
    }
    auto c = q->make_consumer("workers", {"leads"});
    auto records = drain(*c);
    ASSERT_EQ(records.size(), 10u);
    c->commit("leads", 0, 6);  // 0..5 processed; 6..9 taken but not finished
    EXPECT_EQ(q->backlog("workers"), 4);
    // The queue goes first: shutdown must write the offsets even though the consumer lives on.
    q.reset();
    c.reset();
  }
  auto q = queue_open_or_die(queue_options_for(dir.path(), 1));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->backlog("workers"), 4);
  auto c = q->make_consumer("workers", {"leads"});
  auto records = drain(*c);
  ASSERT_EQ(records.size(), 4u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].offset, static_cast<std::int64_t>(6 + i));
    EXPECT_EQ(records[i].payload, std::to_string(6 + i));
  }
  // Produced after the restart: offsets continue.
  ASSERT_EQ(q->producer().produce("leads", "k", "10", kQueueTimeout), ProduceStatus::kOk);
  auto more = drain(*c);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].offset, 10);
}

TEST(EmbeddedQueue, CommitAfterShutdownIsStillPersisted) {
  QueueTempDir dir;
  {
    auto q = queue_open_or_die(queue_options_for(dir.path(), 1));
    ASSERT_TRUE(q);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kOk);
    }
    auto c = q->make_consumer("workers", {"leads"});
    ASSERT_EQ(drain(*c).size(), 3u);
    q->shutdown();  // SIGTERM: the worker finishes its in-flight records after this
    EXPECT_EQ(q->producer().produce("leads", "k", "late", kQueueTimeout),
              ProduceStatus::kUnavailable);
    EXPECT_FALSE(c->poll(0ms));
    c->commit("leads", 0, 3);
  }
  auto q = queue_open_or_die(queue_options_for(dir.path(), 1));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->backlog("workers"), 0);
  auto c = q->make_consumer("workers", {"leads"});
  EXPECT_TRUE(drain(*c).empty());
}

TEST(EmbeddedQueue, TornTailIsTruncatedAndEarlierRecordsSurvive) {
  QueueTempDir dir;
  auto opts = queue_options_for(dir.path(), 1);
  {
    auto q = queue_open_or_die(opts);
    ASSERT_TRUE(q);
    for (int i = 0; i < 10; ++i) {
      ASSERT_EQ(q->producer().produce("leads", "k", "payload-" + std::to_string(i), kQueueTimeout),
                ProduceStatus::kOk);
    }
  }
  auto segments = segment_files(dir.path());
  ASSERT_EQ(segments.size(), 1u);
  const auto intact_size = fs::file_size(segments.back());
  {
    std::ofstream out(segments.back(), std::ios::binary | std::ios::app);
    out << std::string(100, '\xAB');  // garbage after the last record
  }
  {
    auto q = queue_open_or_die(opts);
    ASSERT_TRUE(q);
    EXPECT_EQ(fs::file_size(segments.back()), intact_size);
    auto c = q->make_consumer("g", {"leads"});
    auto records = drain(*c);
    ASSERT_EQ(records.size(), 10u);
    EXPECT_EQ(records.back().payload, "payload-9");
  }
  // A crash in the middle of the last record: it is dropped, its offset is reused.
  fs::resize_file(segments.back(), intact_size - 5);
  {
    auto q = queue_open_or_die(opts);
    ASSERT_TRUE(q);
    auto c = q->make_consumer("g2", {"leads"});
    auto records = drain(*c);
    ASSERT_EQ(records.size(), 9u);
    EXPECT_EQ(records.back().payload, "payload-8");
    ASSERT_EQ(q->producer().produce("leads", "k", "after", kQueueTimeout), ProduceStatus::kOk);
    auto after = drain(*c);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].offset, 9);
  }
  // A flipped byte inside the last record fails its CRC: same treatment.
  {
    const auto size = fs::file_size(segments.back());
    std::fstream f(segments.back(), std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(size - 2));
    f.put('#');
  }
  {
    auto q = queue_open_or_die(opts);
    ASSERT_TRUE(q);
    auto c = q->make_consumer("g3", {"leads"});
    auto records = drain(*c);
    ASSERT_EQ(records.size(), 9u);
    EXPECT_EQ(records.back().payload, "payload-8");
  }
}

TEST(EmbeddedQueue, BacklogLimitReturnsQueueFullPerTopic) {
  QueueTempDir dir;
  auto opts = queue_options_for(dir.path(), 1);
  opts.max_backlog = 10;
  auto q = queue_open_or_die(opts);
  ASSERT_TRUE(q);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kOk);
  }
  EXPECT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kQueueFull);
  EXPECT_EQ(q->producer().produce("results", "k", "x", kQueueTimeout), ProduceStatus::kOk);

  auto c = q->make_consumer("workers", {"leads"});
  EXPECT_EQ(q->backlog("workers"), 10);
  EXPECT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kQueueFull);
  auto records = drain(*c);
  ASSERT_EQ(records.size(), 10u);
  // Taken but not committed still counts.
  EXPECT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kQueueFull);
  c->commit("leads", 0, 4);
  EXPECT_EQ(q->backlog("workers"), 6);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kOk);
  }
  EXPECT_EQ(q->producer().produce("leads", "k", "x", kQueueTimeout), ProduceStatus::kQueueFull);
  EXPECT_EQ(q->backlog("workers"), 10);
}

TEST(EmbeddedQueue, SecondOpenerOfTheDirectoryFails) {
  QueueTempDir dir;
  auto first = queue_open_or_die(queue_options_for(dir.path()));
  ASSERT_TRUE(first);
  std::string error;
  auto second = open_embedded_queue(queue_options_for(dir.path()), error);
  EXPECT_EQ(second, nullptr);
  EXPECT_NE(error.find("queue directory " + dir.path() + " is in use by another process"),
            std::string::npos)
      << error;
  first.reset();
  error.clear();
  auto third = open_embedded_queue(queue_options_for(dir.path()), error);
  EXPECT_NE(third, nullptr) << error;
}

TEST(EmbeddedQueue, RefusesBadOptionsAndAChangedPartitionCount) {
  QueueTempDir dir;
  std::string error;
  auto opts = queue_options_for(dir.path(), 0);
  EXPECT_EQ(open_embedded_queue(opts, error), nullptr);
  EXPECT_NE(error.find("options.partitions"), std::string::npos) << error;
  opts = queue_options_for(dir.path(), 4);
  opts.segment_bytes = 10;
  EXPECT_EQ(open_embedded_queue(opts, error), nullptr);
  EXPECT_NE(error.find("options.segment_bytes"), std::string::npos) << error;

  queue_open_or_die(queue_options_for(dir.path(), 4)).reset();
  EXPECT_EQ(open_embedded_queue(queue_options_for(dir.path(), 8), error), nullptr);
  EXPECT_NE(error.find("created with 4 partitions but options.partitions is 8"), std::string::npos)
      << error;
}

TEST(EmbeddedQueue, ConsumersOfOneGroupSplitPartitionsAndTakeOverOnClose) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path(), 8));
  ASSERT_TRUE(q);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(q->producer().produce("leads", "lead-" + std::to_string(i), "x", kQueueTimeout),
              ProduceStatus::kOk);
  }
  auto c1 = q->make_consumer("workers", {"leads"});
  auto c2 = q->make_consumer("workers", {"leads"});
  auto r1 = drain(*c1);
  auto r2 = drain(*c2);
  EXPECT_EQ(r1.size() + r2.size(), 200u);
  std::set<int> p1, p2;
  for (const auto& r : r1) p1.insert(r.partition);
  for (const auto& r : r2) p2.insert(r.partition);
  for (int p : p1) EXPECT_EQ(p % 2, 0) << p;
  for (int p : p2) EXPECT_EQ(p % 2, 1) << p;

  // c1 finished its records; c2 goes away without committing: c1 gets c2's records again.
  for (const auto& r : r1) c1->commit(r.topic, r.partition, r.offset + 1);
  c2->close();
  auto taken_over = drain(*c1);
  EXPECT_EQ(taken_over.size(), r2.size());
  for (const auto& r : taken_over) EXPECT_EQ(r.partition % 2, 1);
  EXPECT_EQ(q->backlog("workers"), static_cast<std::int64_t>(r2.size()));
}

TEST(EmbeddedQueue, PollWakesWhenARecordArrives) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path()));
  ASSERT_TRUE(q);
  auto c = q->make_consumer("workers", {"leads"});
  std::optional<QueueRecord> got;
  std::atomic<bool> polling{false};
  std::thread consumer([&] {
    polling = true;
    got = c->poll(60s);  // returns long before this unless the wake-up is lost
  });
  while (!polling) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(q->producer().produce("leads", "k", "hello", kQueueTimeout), ProduceStatus::kOk);
  consumer.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->payload, "hello");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

TEST(EmbeddedQueue, ShutdownWakesAPollingConsumer) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path()));
  ASSERT_TRUE(q);
  auto c = q->make_consumer("workers", {"leads"});
  std::atomic<bool> polling{false};
  std::optional<QueueRecord> got;
  const auto start = std::chrono::steady_clock::now();
  std::thread consumer([&] {
    polling = true;
    got = c->poll(60s);
  });
  while (!polling) std::this_thread::yield();
  q->shutdown();
  consumer.join();
  EXPECT_FALSE(got.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

TEST(EmbeddedQueue, ConcurrentProducersAndAConsumerSeeEveryRecordOnce) {
  QueueTempDir dir;
  auto opts = queue_options_for(dir.path(), 4);
  opts.segment_bytes = 16 << 10;  // many roll-overs under load
  auto q = queue_open_or_die(opts);
  ASSERT_TRUE(q);
  constexpr int kThreads = 8, kPerThread = 250;
  auto c = q->make_consumer("workers", {"leads"});
  std::set<std::string> seen;
  std::thread consumer([&] {
    while (seen.size() < kThreads * kPerThread) {
      auto r = c->poll(kQueueTimeout);
      if (!r) break;
      EXPECT_TRUE(seen.insert(r->key).second) << "duplicate " << r->key;
      EXPECT_EQ(r->payload, "payload of " + r->key);
      c->commit(r->topic, r->partition, r->offset + 1);
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string key = std::to_string(t) + "-" + std::to_string(i);
        EXPECT_EQ(q->producer().produce("leads", key, "payload of " + key, kQueueTimeout),
                  ProduceStatus::kOk);
      }
    });
  }
  for (auto& t : producers) t.join();
  consumer.join();
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kPerThread));
  EXPECT_EQ(q->backlog("workers"), 0);
}

TEST(EmbeddedQueue, DeletesSegmentsEveryGroupCommittedAndKeepsOffsetsGoing) {
  QueueTempDir dir;
  auto opts = queue_options_for(dir.path(), 2);
  opts.segment_bytes = 4096;
  std::map<int, std::int64_t> ends;
  {
    auto q = queue_open_or_die(opts);
    ASSERT_TRUE(q);
    auto workers = q->make_consumer("workers", {"leads"});
    auto audit = q->make_consumer("audit", {"leads"});
    for (int i = 0; i < 200; ++i) {
      ASSERT_EQ(q->producer().produce("leads", "lead-" + std::to_string(i), std::string(200, 'p'),
                                      kQueueTimeout),
                ProduceStatus::kOk);
    }
    EXPECT_GT(segment_files(dir.path()).size(), 5u);
    for (const auto& r : drain(*workers)) {
      workers->commit(r.topic, r.partition, r.offset + 1);
      ends[r.partition] = r.offset + 1;
    }
    workers->close();  // flushes offsets, then retention runs
    EXPECT_GT(segment_files(dir.path()).size(), 5u) << "audit has not committed yet";
    for (const auto& r : drain(*audit)) audit->commit(r.topic, r.partition, r.offset + 1);
    audit->close();
    EXPECT_EQ(segment_files(dir.path()).size(), 1u) << "only the active segment is left";
  }
  auto q = queue_open_or_die(opts);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->backlog("workers"), 0);
  auto workers = q->make_consumer("workers", {"leads"});
  EXPECT_TRUE(drain(*workers).empty());
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(q->producer().produce("leads", "new-" + std::to_string(i), "x", kQueueTimeout),
              ProduceStatus::kOk);
  }
  auto records = drain(*workers);
  ASSERT_EQ(records.size(), 20u);
  std::map<int, std::int64_t> expected = ends;
  for (const auto& r : records) {
    EXPECT_EQ(r.offset, expected[r.partition]) << "offsets must not be reused after retention";
    expected[r.partition] = r.offset + 1;
  }
}

// The CRASH TEST. A child process produces from several threads and writes the key of every
// acknowledged record to a pipe; the parent kills it with SIGKILL at different moments, reopens
// the directory and checks that every acknowledged key is there, intact.
[[noreturn]] void run_producing_child(const std::string& dir, int round, int ack_fd) {
  auto opts = queue_options_for(dir, 4);
  opts.segment_bytes = 64 << 10;
  std::string error;
  auto q = open_embedded_queue(opts, error);
  if (!q) {
    const std::string line = "ERROR " + error + "\n";
    [[maybe_unused]] auto n = ::write(ack_fd, line.data(), line.size());
    ::_exit(1);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (long i = 0;; ++i) {
        const std::string key =
            "r" + std::to_string(round) + "-t" + std::to_string(t) + "-" + std::to_string(i);
        const std::string payload = "payload:" + key + ":" + std::string(i % 300, 'z');
        if (q->producer().produce("leads", key, payload, kQueueTimeout) == ProduceStatus::kOk) {
          const std::string line = key + "\n";  // < PIPE_BUF: one atomic write
          if (::write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
            ::_exit(2);
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ::_exit(0);
}

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool next(std::string& line) {
    for (;;) {
      const auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
};

TEST(EmbeddedQueueCrash, EveryAcknowledgedRecordSurvivesSigkill) {
  QueueTempDir dir;
  std::set<std::string> acked;
  // Kill moments: during start-up, early, and after several segment roll-overs.
  const std::size_t kill_after[] = {0, 1, 150, 1500, 6000};
  for (int round = 0; round < static_cast<int>(std::size(kill_after)); ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      run_producing_child(dir.path(), round, fds[1]);
    }
    ::close(fds[1]);
    LineReader reader(fds[0]);
    std::string line;
    std::size_t this_round = 0;
    while (this_round < kill_after[round] && reader.next(line)) {
      ASSERT_FALSE(line.starts_with("ERROR")) << line;
      acked.insert(line);
      ++this_round;
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child exited early";
    while (reader.next(line)) {  // acknowledged before the kill, still in the pipe
      ASSERT_FALSE(line.starts_with("ERROR")) << line;
      acked.insert(line);
      ++this_round;
    }
    ::close(fds[0]);
    EXPECT_GE(this_round, kill_after[round]);

    auto opts = queue_options_for(dir.path(), 4);
    opts.segment_bytes = 64 << 10;
    auto q = queue_open_or_die(opts);
    ASSERT_TRUE(q);
    auto c = q->make_consumer("checker", {"leads"});  // never commits: sees everything
    std::set<std::string> present;
    std::map<int, std::int64_t> next_offset;
    for (const auto& r : drain(*c)) {
      EXPECT_EQ(r.payload.rfind("payload:" + r.key + ":", 0), 0u) << r.key;
      EXPECT_EQ(r.offset, next_offset[r.partition]) << "partition " << r.partition;
      next_offset[r.partition] = r.offset + 1;
      present.insert(r.key);
    }
    std::size_t missing = 0;
    for (const auto& key : acked) {
      if (!present.count(key)) {
        if (++missing <= 5) ADD_FAILURE() << "acknowledged record lost: " << key;
      }
    }
    EXPECT_EQ(missing, 0u) << "round " << round;
    std::printf("[ crash    ] round %d: killed after %zu acks, %zu acked in total, %zu on disk\n",
                round, this_round, acked.size(), present.size());
  }
}

// Commits reach the disk through the background flush alone (no close, no shutdown): a child
// commits, the parent waits for the group's offsets file to show it, kills the child, reopens.
TEST(EmbeddedQueueCrash, BackgroundFlushPersistsCommitsWithoutShutdown) {
  QueueTempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    auto opts = queue_options_for(dir.path(), 1);
    opts.offsets_flush_interval = std::chrono::milliseconds(20);
    std::string error;
    auto q = open_embedded_queue(opts, error);
    if (!q) ::_exit(1);
    for (int i = 0; i < 10; ++i) {
      if (q->producer().produce("leads", "k", std::to_string(i), kQueueTimeout) !=
          ProduceStatus::kOk) {
        ::_exit(2);
      }
    }
    auto c = q->make_consumer("workers", {"leads"});
    if (drain(*c).size() != 10) ::_exit(3);
    c->commit("leads", 0, 7);
    [[maybe_unused]] auto n = ::write(fds[1], "committed\n", 10);
    for (;;) ::pause();  // killed by the parent
  }
  ::close(fds[1]);
  LineReader reader(fds[0]);
  std::string line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "committed");
  // "workers" in hex; the file's topic line ends with the committed offset of partition 0.
  const std::string path = dir.sub("group-776f726b657273.offsets");
  const auto give_up = std::chrono::steady_clock::now() + kQueueTimeout;
  bool flushed = false;
  while (!flushed && std::chrono::steady_clock::now() < give_up) {
    std::ifstream in(path);
    const std::string content((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    flushed = content.find(" 1 7\n") != std::string::npos;
    if (!flushed) std::this_thread::sleep_for(2ms);  // waiting for a condition, not a fixed delay
  }
  EXPECT_TRUE(flushed) << "offsets never reached " << path;
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(fds[0]);

  auto q = queue_open_or_die(queue_options_for(dir.path(), 1));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->backlog("workers"), 3);
  auto c = q->make_consumer("workers", {"leads"});
  auto records = drain(*c);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records.front().offset, 7);
}

// Disk trouble: the file size limit makes the segment write fail with EFBIG, like a full disk.
TEST(EmbeddedQueue, WriteFailureMakesTheQueueUnhealthy) {
  QueueTempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    std::string error;
    auto q = open_embedded_queue(queue_options_for(dir.path(), 1), error);
    if (!q) ::_exit(10);
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = 32 << 10;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(11);
    int acked = 0;
    ProduceStatus s = ProduceStatus::kOk;
    while ((s = q->producer().produce("leads", "k", std::string(1000, 'x'), kQueueTimeout)) ==
           ProduceStatus::kOk) {
      ++acked;
    }
    if (s != ProduceStatus::kUnavailable) ::_exit(12);
    if (q->producer().healthy()) ::_exit(13);
    if (q->producer().produce("leads", "k", "y", kQueueTimeout) != ProduceStatus::kUnavailable)
      ::_exit(14);
    const std::string line = std::to_string(acked) + "\n";
    [[maybe_unused]] auto n = ::write(fds[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  LineReader reader(fds[0]);
  std::string line;
  const bool got = reader.next(line);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(got);
  const int acked = std::stoi(line);
  EXPECT_GT(acked, 10);

  auto q = queue_open_or_die(queue_options_for(dir.path(), 1));
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->producer().healthy());
  auto c = q->make_consumer("g", {"leads"});
  EXPECT_EQ(drain(*c).size(), static_cast<std::size_t>(acked)) << "the failed write was undone";
}

// Group commit under load. Prints throughput; asserts only correctness (timing varies by machine).
TEST(EmbeddedQueue, GroupCommitThroughputWith64Producers) {
  QueueTempDir dir;
  auto q = queue_open_or_die(queue_options_for(dir.path(), 8));
  ASSERT_TRUE(q);
  constexpr int kThreads = 64, kPerThread = 500;
  const std::string payload(400, 'p');
  std::atomic<int> failures{0};
  const auto before = embedded_queue_detail::writer_stats(*q);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string key = "lead-" + std::to_string(t) + "-" + std::to_string(i);
        if (q->producer().produce("leads", key, payload, kQueueTimeout) != ProduceStatus::kOk)
          ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto after = embedded_queue_detail::writer_stats(*q);
  EXPECT_EQ(failures.load(), 0);
  const auto syncs = after.syncs - before.syncs;
  const auto records = after.records - before.records;
  EXPECT_EQ(records, static_cast<std::uint64_t>(kThreads * kPerThread));
  std::printf(
      "[ throughput ] %d threads: %d records in %.3f s = %.0f records/s; %llu fdatasyncs "
      "(%.0f/s, %.2f ms each), %.1f records per fdatasync\n",
      kThreads, kThreads * kPerThread, seconds, kThreads * kPerThread / seconds,
      static_cast<unsigned long long>(syncs), syncs / seconds,
      syncs ? (after.sync_nanos - before.sync_nanos) / 1e6 / syncs : 0.0,
      syncs ? static_cast<double>(records) / syncs : 0.0);
}

}  // namespace
}  // namespace leadflow
