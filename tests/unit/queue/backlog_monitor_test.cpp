// The workers' backlog as a process that is not one of them reads it: records waiting, how long
// the group's position has stood still, and nothing (not 0) while the queue cannot tell.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "fake_queue.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/queue/backlog_monitor.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;

struct BacklogRead {
  std::vector<double> backlog, stalled, oldest, known;
};

BacklogRead read(const BacklogMonitor& m) {
  std::vector<prometheus::MetricFamily> families;
  m.collect(families);
  BacklogRead r;
  for (const auto& f : families) {
    std::vector<double>* into = f.name == "leadflow_queue_backlog"                      ? &r.backlog
                                : f.name == "leadflow_queue_backlog_stalled_seconds"    ? &r.stalled
                                : f.name == "leadflow_queue_backlog_known"              ? &r.known
                                : f.name == "leadflow_queue_backlog_oldest_age_seconds" ? &r.oldest
                                                                                        : nullptr;
    EXPECT_NE(into, nullptr) << f.name;
    if (!into) continue;
    for (const auto& metric : f.metric) {
      EXPECT_EQ(metric.label.size(), 2u);
      if (metric.label.size() != 2) continue;
      EXPECT_EQ(metric.label[0].value, "broker");
      EXPECT_EQ(metric.label[1].value, "workers");
      into->push_back(metric.gauge.value);
    }
  }
  return r;
}

class BacklogMonitorTest : public ::testing::Test {
 protected:
  void produce(int n) {
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(queue_.producer().produce("leads", "k" + std::to_string(i), "lead", 1s),
                ProduceStatus::kOk);
  }
  // Takes `n` records and commits them, as a worker finishing them does.
  void finish(QueueConsumer& c, int n) {
    for (int i = 0; i < n; ++i) {
      auto r = c.poll(1s);
      ASSERT_TRUE(r);
      c.commit(r->topic, r->partition, r->offset + 1);
    }
  }

  testing::FakeQueue queue_{1};
  ManualClock clock_;
  BacklogMonitor monitor_{queue_, clock_, {"workers", "broker", 10s}};
};

TEST_F(BacklogMonitorTest, ABacklogNobodyWorksOnStallsAndDrainsWhenAConsumerCommits) {
  auto consumer = queue_.make_consumer("workers", {"leads"});
  produce(5);
  monitor_.measure();
  BacklogRead r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{5});
  EXPECT_EQ(r.stalled, std::vector<double>{0});  // the count starts at the first reading
  EXPECT_EQ(r.known, std::vector<double>{1});

  // Nobody commits: the records wait, and the stall grows reading after reading.
  clock_.advance(30s);
  produce(2);
  monitor_.measure();
  r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{7});
  EXPECT_EQ(r.stalled, std::vector<double>{30});

  // A consumer commits 3: the position moved, so the stall starts over though records wait.
  finish(*consumer, 3);
  clock_.advance(10s);
  monitor_.measure();
  r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{4});
  EXPECT_EQ(r.stalled, std::vector<double>{0});
  clock_.advance(10s);
  monitor_.measure();
  EXPECT_EQ(read(monitor_).stalled, std::vector<double>{10});

  // Drained: nothing waits, nothing stalls.
  finish(*consumer, 4);
  clock_.advance(10s);
  monitor_.measure();
  r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{0});
  EXPECT_EQ(r.stalled, std::vector<double>{0});
}

TEST_F(BacklogMonitorTest, WhileTheQueueCannotTellTheBacklogHasNoSampleRatherThanZero) {
  auto consumer = queue_.make_consumer("workers", {"leads"});
  produce(3);
  monitor_.measure();
  ASSERT_EQ(read(monitor_).backlog, std::vector<double>{3});

  queue_.set_available(false);
  clock_.advance(10s);
  monitor_.measure();
  BacklogRead r = read(monitor_);
  EXPECT_TRUE(r.backlog.empty());
  EXPECT_TRUE(r.stalled.empty());
  EXPECT_EQ(r.known, std::vector<double>{0});

  // Back: the stall counted on through the outage, since nobody committed meanwhile.
  queue_.set_available(true);
  clock_.advance(10s);
  monitor_.measure();
  r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{3});
  EXPECT_EQ(r.stalled, std::vector<double>{20});
  EXPECT_EQ(r.known, std::vector<double>{1});
}

TEST_F(BacklogMonitorTest, TheOldestWaitingLeadsAgeIsItsProduceTimeNotTheTimeSinceTheLastCommit) {
  queue_.set_clock(&clock_);
  auto consumer = queue_.make_consumer("workers", {"leads"});
  produce(1);  // the oldest
  clock_.advance(40s);
  produce(2);
  monitor_.measure();
  BacklogRead r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{3});
  EXPECT_EQ(r.stalled, std::vector<double>{0});  // the first reading: the stall starts counting
  EXPECT_EQ(r.oldest, std::vector<double>{40});  // the lead has waited since it was produced

  // Between readings the last reading's oldest lead ages with the clock: a scrape reads no queue.
  clock_.advance(5s);
  EXPECT_EQ(read(monitor_).oldest, std::vector<double>{45});

  // The group commits the oldest: the next oldest (produced 40 s later) is what waits now,
  // though the stall starts over.
  finish(*consumer, 1);
  clock_.advance(5s);
  monitor_.measure();
  r = read(monitor_);
  EXPECT_EQ(r.backlog, std::vector<double>{2});
  EXPECT_EQ(r.stalled, std::vector<double>{0});
  EXPECT_EQ(r.oldest, std::vector<double>{10});

  // Drained: 0, not the last age.
  finish(*consumer, 2);
  monitor_.measure();
  EXPECT_EQ(read(monitor_).oldest, std::vector<double>{0});

  // Records whose age the queue cannot tell (unstamped), and an outage: no sample, never a 0.
  queue_.set_clock(nullptr);
  produce(1);
  monitor_.measure();
  EXPECT_TRUE(read(monitor_).oldest.empty());
  queue_.set_available(false);
  monitor_.measure();
  EXPECT_TRUE(read(monitor_).oldest.empty());
}

}  // namespace
}  // namespace leadflow
