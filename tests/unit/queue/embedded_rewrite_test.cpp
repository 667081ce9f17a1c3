// Rewriting records in place in the embedded queue (QueueProducer::rewrite_payloads, the erasure
// of a lead's queued copy, docs/erasure.md): only committed records of the keys asked, crash-safe
// through the journal, and a kill -9 at any moment loses no acknowledged record.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "leadflow/queue/embedded_queue.hpp"

namespace leadflow {

namespace embedded_queue_detail {
// Defined in common/queue/src/embedded/rewrite.cpp for tests.
void stop_rewrites_after_journal(LeadQueue& queue);
}  // namespace embedded_queue_detail

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kRewriteTimeout = std::chrono::milliseconds(10'000);

class RewriteTempDir {
 public:
  RewriteTempDir() {
    std::string tmpl = "/tmp/leadflow-rewrite-test-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~RewriteTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

EmbeddedQueueOptions rewrite_options_for(const std::string& dir) {
  EmbeddedQueueOptions o;
  o.dir = dir;
  o.partitions = 2;
  // One segment: the active one, which retention never deletes (the older ones go once every
  // group committed them, which is also what makes their records rewritable).
  return o;
}

std::unique_ptr<LeadQueue> rewrite_open_or_die(const EmbeddedQueueOptions& o) {
  std::string error;
  auto q = open_embedded_queue(o, error);
  EXPECT_NE(q, nullptr) << error;
  return q;
}

std::string key_of(int i) { return "ld_" + std::to_string(i); }
std::string payload_of(int i) { return "{\"person\":\"secret-" + std::to_string(1000 + i) + "\"}"; }
// The same record with its person in capitals: as long as payload_of(i), another text.
std::string shouted(int i) { return "{\"person\":\"SECRET-" + std::to_string(1000 + i) + "\"}"; }
// What an erasure leaves: the same length, nothing of the person.
std::optional<std::string> blank(std::string_view p) {
  std::string out = "{}";
  out.append(p.size() - out.size(), ' ');
  return out;
}

// `n` records produced to "leads", every one read and committed by the group "workers", whose
// offsets reach the disk when the consumer closes.
void produce_and_commit(LeadQueue& q, int n) {
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(q.producer().produce("leads", key_of(i), payload_of(i), kRewriteTimeout),
              ProduceStatus::kOk);
  auto c = q.make_consumer("workers", {"leads"});
  int read = 0;
  while (auto r = c->poll(200ms)) {
    c->commit(r->topic, r->partition, r->offset + 1);
    if (++read == n) break;
  }
  ASSERT_EQ(read, n);
  c->close();
}

// The bytes of every segment of the queue in `dir`, after an open (which redoes a journal and
// truncates a torn tail) and a close.
std::string all_segment_bytes(const std::string& dir) {
  rewrite_open_or_die(rewrite_options_for(dir));
  std::string out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.path().filename().string().starts_with("seg-")) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    out += s.str();
  }
  return out;
}

TEST(EmbeddedQueueRewrite, CommittedRecordsOfTheKeysAreRewrittenInPlace) {
  RewriteTempDir dir;
  {
    auto q = rewrite_open_or_die(rewrite_options_for(dir.path()));
    produce_and_commit(*q, 300);
    EXPECT_EQ(q->producer().rewrite_payloads({"leads"}, {key_of(7), key_of(250), "ld_none"}, blank),
              std::optional<std::int64_t>(2));
    // Again: nothing left to change.
    EXPECT_EQ(q->producer().rewrite_payloads({"leads"}, {key_of(7)}, blank),
              std::optional<std::int64_t>(0));
    // Another topic's records, or a payload of another length, are left.
    EXPECT_EQ(q->producer().rewrite_payloads({"other"}, {key_of(8)}, blank),
              std::optional<std::int64_t>(0));
    EXPECT_EQ(q->producer().rewrite_payloads({"leads"}, {key_of(9)},
                                             [](std::string_view) { return std::string("x"); }),
              std::optional<std::int64_t>(0));
  }
  const std::string bytes = all_segment_bytes(dir.path());
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(bytes.find(payload_of(i)) == std::string::npos, i == 7 || i == 250) << i;
  }
  EXPECT_NE(bytes.find(*blank(payload_of(7))), std::string::npos);
  // The queue goes on after them.
  auto q = rewrite_open_or_die(rewrite_options_for(dir.path()));
  ASSERT_EQ(q->producer().produce("leads", "ld_next", "after", kRewriteTimeout),
            ProduceStatus::kOk);
  auto c = q->make_consumer("workers", {"leads"});
  const auto next = c->poll(kRewriteTimeout);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->payload, "after");
}

TEST(EmbeddedQueueRewrite, RecordsNotCommittedByEveryGroupAreLeft) {
  RewriteTempDir dir;
  auto q = rewrite_open_or_die(rewrite_options_for(dir.path()));
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(q->producer().produce("leads", key_of(i), payload_of(i), kRewriteTimeout),
              ProduceStatus::kOk);
  // Nobody subscribed: nobody commits, so nothing is known to be read.
  EXPECT_EQ(q->producer().rewrite_payloads({"leads"}, {key_of(1)}, blank),
            std::optional<std::int64_t>(0));
  // Read but not committed: a restart would deliver it again.
  auto c = q->make_consumer("workers", {"leads"});
  while (c->poll(100ms)) {
  }
  EXPECT_EQ(q->producer().rewrite_payloads({"leads"}, {key_of(1)}, blank),
            std::optional<std::int64_t>(0));
}

// A process killed once the journal is on disk, with the record torn under it: the next open
// writes the journal's records again before it reads the segments, and loses no record.
TEST(EmbeddedQueueRewrite, ARewriteCutShortIsFinishedAtTheNextOpen) {
  RewriteTempDir dir;
  {
    auto q = rewrite_open_or_die(rewrite_options_for(dir.path()));
    produce_and_commit(*q, 200);
    embedded_queue_detail::stop_rewrites_after_journal(*q);
    EXPECT_EQ(q->producer().rewrite_payloads({"leads"}, {key_of(3)}, blank), std::nullopt);
  }
  ASSERT_TRUE(fs::exists(dir.path() + "/rewrite.journal"));
  // The torn write: half of the record's payload overwritten with garbage.
  bool torn = false;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (!e.path().filename().string().starts_with("seg-")) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    const auto at = s.str().find(payload_of(3));
    if (at == std::string::npos) continue;
    f.clear();
    f.seekp(static_cast<std::streamoff>(at));
    f.write("#####", 5);
    torn = true;
  }
  ASSERT_TRUE(torn);
  const std::string bytes = all_segment_bytes(dir.path());
  EXPECT_FALSE(fs::exists(dir.path() + "/rewrite.journal"));
  EXPECT_EQ(bytes.find("#####"), std::string::npos);
  EXPECT_EQ(bytes.find(payload_of(3)), std::string::npos);
  EXPECT_NE(bytes.find(*blank(payload_of(3))), std::string::npos);
  for (int i = 0; i < 200; ++i) {
    if (i == 3) continue;
    EXPECT_NE(bytes.find(payload_of(i)), std::string::npos) << i;
  }
}

// kill -9 of a process rewriting records over and over, at random moments: after each, every
// acknowledged record is there, whole, either as it was or rewritten.
TEST(EmbeddedQueueRewrite, AKill9MidRewriteLosesNoAcknowledgedRecord) {
  RewriteTempDir dir;
  constexpr int kRecords = 400;
  {
    auto q = rewrite_open_or_die(rewrite_options_for(dir.path()));
    produce_and_commit(*q, kRecords);
  }
  std::mt19937 rng(28);
  for (int round = 0; round < 20; ++round) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string error;
      auto q = open_embedded_queue(rewrite_options_for(dir.path()), error);
      if (!q) ::_exit(1);
      std::vector<std::string> keys;
      for (int i = 0; i < kRecords; ++i) keys.push_back(key_of(i));
      // Back and forth between the two spellings: each pass rewrites every record.
      for (;;) {
        const auto n = q->producer().rewrite_payloads(
            {"leads"}, keys, [](std::string_view p) -> std::optional<std::string> {
              std::string out(p);
              if (auto at = out.find("secret-"); at != std::string::npos)
                out.replace(at, 6, "SECRET");
              else if (at = out.find("SECRET-"); at != std::string::npos)
                out.replace(at, 6, "secret");
              else
                return std::nullopt;
              return out;
            });
        if (!n || *n != kRecords) ::_exit(2);
      }
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 60));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "child failed";
    const std::string bytes = all_segment_bytes(dir.path());
    EXPECT_FALSE(fs::exists(dir.path() + "/rewrite.journal"));
    for (int i = 0; i < kRecords; ++i)
      EXPECT_TRUE((bytes.find(payload_of(i)) != std::string::npos) !=
                  (bytes.find(shouted(i)) != std::string::npos))
          << "round " << round << ": record " << i << " is not whole";
  }
}

}  // namespace
}  // namespace leadflow
