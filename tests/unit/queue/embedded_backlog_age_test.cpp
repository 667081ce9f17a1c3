// The embedded queue's records carry the time they were queued, so a group's backlog says when its
// oldest waiting record was made (GroupBacklog::oldest_produced_ms, the ingest's
// leadflow_queue_backlog_oldest_age_seconds), across a restart; a queue directory written before
// records carried a time is still read, its backlog with no age.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "leadflow/queue/embedded_queue.hpp"

namespace leadflow {

namespace embedded_queue_detail {
std::uint32_t crc32c(std::string_view data);
}  // namespace embedded_queue_detail

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kBacklogAgeTimeout = std::chrono::milliseconds(10'000);

class BacklogAgeTempDir {
 public:
  BacklogAgeTempDir() {
    std::string tmpl = "/tmp/leadflow-backlog-age-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~BacklogAgeTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::unique_ptr<LeadQueue> open_queue(const std::string& dir) {
  EmbeddedQueueOptions o;
  o.dir = dir;
  o.partitions = 1;  // one partition: the committed offset is the oldest waiting record
  std::string error;
  auto q = open_embedded_queue(o, error);
  EXPECT_NE(q, nullptr) << error;
  return q;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::uint32_t u32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}
void put32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// Rewrites every record of the queue's segments in the first format ("LFQ1": no time), as a
// build from before records carried a time wrote them. Returns the records rewritten.
int to_first_format(const std::string& dir) {
  int records = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.path().filename().string().starts_with("seg-")) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::string out;
    std::size_t pos = 0;
    while (pos + 8 <= bytes.size() && u32(bytes, pos) == 0x3251464C) {  // "LFQ2"
      const std::uint32_t len = u32(bytes, pos + 4);
      std::string r = bytes.substr(pos, len);
      r.erase(20, 8);  // produced_ms
      put32(r, 0, 0x3151464C);
      put32(r, 4, static_cast<std::uint32_t>(r.size()));
      put32(r, 8, embedded_queue_detail::crc32c(std::string_view(r).substr(12)));
      out += r;
      pos += len;
      ++records;
    }
    out.resize(bytes.size(), '\0');  // the writer's preallocated zeros
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << out;
  }
  return records;
}

TEST(EmbeddedBacklogAge, TheOldestWaitingRecordsTimeFollowsTheGroupsCommits) {
  BacklogAgeTempDir dir;
  auto q = open_queue(dir.path());
  ASSERT_TRUE(q);
  auto c = q->make_consumer("workers", {"leads"});
  const std::int64_t before = now_ms();
  ASSERT_EQ(q->producer().produce("leads", "a", "first", kBacklogAgeTimeout), ProduceStatus::kOk);
  const std::int64_t after_first = now_ms();
  std::this_thread::sleep_for(30ms);
  const std::int64_t before_second = now_ms();
  ASSERT_EQ(q->producer().produce("leads", "b", "second", kBacklogAgeTimeout), ProduceStatus::kOk);

  auto b = q->group_backlog("workers");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->records, 2);
  ASSERT_TRUE(b->oldest_produced_ms);
  EXPECT_GE(*b->oldest_produced_ms, before);
  EXPECT_LE(*b->oldest_produced_ms, after_first);

  // Taken but not committed still waits; committed, the next record is the oldest.
  auto first = c->poll(kBacklogAgeTimeout);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->payload, "first");
  EXPECT_EQ(q->group_backlog("workers")->oldest_produced_ms, b->oldest_produced_ms);
  c->commit(first->topic, first->partition, first->offset + 1);
  b = q->group_backlog("workers");
  ASSERT_TRUE(b && b->oldest_produced_ms);
  EXPECT_EQ(b->records, 1);
  EXPECT_GE(*b->oldest_produced_ms, before_second);

  auto second = c->poll(kBacklogAgeTimeout);
  ASSERT_TRUE(second);
  c->commit(second->topic, second->partition, second->offset + 1);
  b = q->group_backlog("workers");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->records, 0);
  EXPECT_FALSE(b->oldest_produced_ms);
}

TEST(EmbeddedBacklogAge, TheTimeIsReadFromDiskAfterARestart) {
  BacklogAgeTempDir dir;
  std::optional<std::int64_t> produced;
  {
    auto q = open_queue(dir.path());
    ASSERT_TRUE(q);
    q->make_consumer("workers", {"leads"});
    ASSERT_EQ(q->producer().produce("leads", "a", "queued", kBacklogAgeTimeout),
              ProduceStatus::kOk);
    produced = q->group_backlog("workers")->oldest_produced_ms;
    ASSERT_TRUE(produced);
  }
  std::this_thread::sleep_for(20ms);
  auto q = open_queue(dir.path());
  ASSERT_TRUE(q);
  const auto b = q->group_backlog("workers");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->records, 1);
  EXPECT_EQ(b->oldest_produced_ms, produced) << "the record's own time, not the restart's";
}

TEST(EmbeddedBacklogAge, RecordsOfTheFirstFormatAreReadWithNoAge) {
  BacklogAgeTempDir dir;
  {
    auto q = open_queue(dir.path());
    ASSERT_TRUE(q);
    q->make_consumer("workers", {"leads"});
    for (const char* p : {"one", "two", "three"})
      ASSERT_EQ(q->producer().produce("leads", p, p, kBacklogAgeTimeout), ProduceStatus::kOk);
  }
  ASSERT_EQ(to_first_format(dir.path()), 3);

  auto q = open_queue(dir.path());
  ASSERT_TRUE(q);
  auto b = q->group_backlog("workers");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->records, 3);
  EXPECT_FALSE(b->oldest_produced_ms) << "an old record's age is unknown, never guessed";

  auto c = q->make_consumer("workers", {"leads"});
  std::vector<std::string> payloads;
  for (int i = 0; i < 3; ++i) {
    auto r = c->poll(kBacklogAgeTimeout);
    ASSERT_TRUE(r);
    payloads.push_back(r->payload);
    c->commit(r->topic, r->partition, r->offset + 1);
  }
  EXPECT_EQ(payloads, (std::vector<std::string>{"one", "two", "three"}));

  // A record written now, after the old ones, carries its time.
  const std::int64_t before = now_ms();
  ASSERT_EQ(q->producer().produce("leads", "four", "four", kBacklogAgeTimeout), ProduceStatus::kOk);
  b = q->group_backlog("workers");
  ASSERT_TRUE(b && b->oldest_produced_ms);
  EXPECT_EQ(b->records, 1);
  EXPECT_GE(*b->oldest_produced_ms, before);
  auto r = c->poll(kBacklogAgeTimeout);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->payload, "four");
}

}  // namespace
}  // namespace leadflow
