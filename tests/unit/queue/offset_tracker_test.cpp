#include <gtest/gtest.h>

#include "leadflow/queue/queue.hpp"

namespace leadflow {
namespace {

TEST(OffsetTracker, InOrderCompletionMovesTheFrontEachTime) {
  OffsetTracker t;
  t.started(0);
  t.started(1);
  t.started(2);
  EXPECT_EQ(t.in_flight(), 3u);
  EXPECT_EQ(t.completed(0), 1);
  EXPECT_EQ(t.completed(1), 2);
  EXPECT_EQ(t.completed(2), 3);
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(OffsetTracker, OutOfOrderCompletionWaitsForTheOldest) {
  OffsetTracker t;
  for (std::int64_t o = 10; o < 15; ++o) t.started(o);
  EXPECT_EQ(t.completed(12), -1);
  EXPECT_EQ(t.completed(14), -1);
  EXPECT_EQ(t.completed(11), -1);
  EXPECT_EQ(t.in_flight(), 5u);
  // 10 done: 10, 11, 12 are contiguous, 13 is still running.
  EXPECT_EQ(t.completed(10), 13);
  EXPECT_EQ(t.in_flight(), 2u);
  EXPECT_EQ(t.completed(13), 15);
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(OffsetTracker, OffsetsNeverStartedAreNotWaitedFor) {
  OffsetTracker t;
  t.started(3);
  t.started(7);
  t.started(9);
  EXPECT_EQ(t.completed(7), -1);
  EXPECT_EQ(t.completed(3), 8);
  EXPECT_EQ(t.completed(9), 10);
}

TEST(OffsetTracker, UnknownAndRepeatedCompletionsDoNothing) {
  OffsetTracker t;
  EXPECT_EQ(t.completed(5), -1);
  t.started(5);
  t.started(6);
  EXPECT_EQ(t.completed(4), -1);
  EXPECT_EQ(t.completed(6), -1);
  EXPECT_EQ(t.completed(6), -1);  // already done, front unchanged
  EXPECT_EQ(t.in_flight(), 2u);
  EXPECT_EQ(t.completed(5), 7);
  EXPECT_EQ(t.completed(5), -1);  // gone from the tracker
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(OffsetTracker, StartsAfterTheFrontMovedKeepWorking) {
  OffsetTracker t;
  t.started(0);
  EXPECT_EQ(t.completed(0), 1);
  t.started(1);
  t.started(2);
  EXPECT_EQ(t.completed(2), -1);
  t.started(3);
  EXPECT_EQ(t.completed(1), 3);
  EXPECT_EQ(t.in_flight(), 1u);
  EXPECT_EQ(t.completed(3), 4);
}

TEST(OffsetTracker, ToleratesAStartOutOfOrder) {
  OffsetTracker t;
  t.started(5);
  t.started(3);  // misuse, but the order the front relies on is kept
  t.started(5);  // repeated start is ignored
  EXPECT_EQ(t.in_flight(), 2u);
  EXPECT_EQ(t.completed(5), -1);
  EXPECT_EQ(t.completed(3), 6);
}

TEST(OffsetTracker, ManyInterleavedCompletions) {
  OffsetTracker t;
  constexpr int kN = 1000;
  for (int i = 0; i < kN; ++i) t.started(i);
  std::int64_t front = 0;
  // Complete odd offsets first, then even ones: the front moves only on even completions.
  for (int i = 1; i < kN; i += 2) EXPECT_EQ(t.completed(i), -1);
  for (int i = 0; i < kN; i += 2) {
    const std::int64_t next = t.completed(i);
    EXPECT_EQ(next, i + 2);
    front = next;
  }
  EXPECT_EQ(front, kN);
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(ProduceStatus, HasStableNames) {
  EXPECT_EQ(to_string(ProduceStatus::kOk), "ok");
  EXPECT_EQ(to_string(ProduceStatus::kQueueFull), "queue_full");
  EXPECT_EQ(to_string(ProduceStatus::kUnavailable), "unavailable");
  EXPECT_EQ(to_string(ProduceStatus::kTimedOut), "timed_out");
}

}  // namespace
}  // namespace leadflow
