// Faults of the real Kafka cluster under the scale-out shape (tests/support/scaleout_fixture.hpp):
// the broker leading the leads topic killed, the active controller killed, a broker paused, two
// of the three nodes down, and workers joining and leaving the group while leads stream. Each ends,
// like every fault test of the shape, with every acknowledged lead decided and delivered and none
// sold twice; each prints what the fault did to the posts' latency and how long no post was
// acknowledged (docs/kafka.md keeps the numbers).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "scaleout_fixture.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;

using ScaleOutKafkaFaults = ScaleOut;

TEST_F(ScaleOutKafkaFaults, Kill9OfTheBrokerLeadingTheLeadsTopicAndItsRestart) {
  stream_through(
      [&] {
        const int leader = kafka_.main_leader(topic(".leads"));
        ASSERT_GE(leader, 1) << "no leader for " << topic(".leads");
        const auto killed = std::chrono::steady_clock::now();
        kafka_.kill9(leader);
        // The node is fenced once the controller's broker session (9 s) ends, and its partitions'
        // leadership moves to the in-sync followers before it comes back. When the killed node
        // was also the active controller, the session is counted again from the new
        // controller's election, so the move is awaited rather than slept for.
        int now = leader;
        while (std::chrono::steady_clock::now() - killed < 40s) {
          std::this_thread::sleep_for(500ms);
          now = kafka_.main_leader(topic(".leads"));
          if (now >= 1 && now != leader) break;
        }
        const auto moved = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - killed);
        EXPECT_NE(now, leader) << "the killed broker still leads the leads topic after 40 s";
        EXPECT_TRUE(kafka_.restart(leader));
        std::cout << "killed broker " << leader << ", the leads topic then led mostly by " << now
                  << " after " << moved.count() << " ms\n";
      },
      6s);
}

TEST_F(ScaleOutKafkaFaults, Kill9OfTheActiveController) {
  stream_through([&] {
    const int controller = kafka_.controller();
    ASSERT_GE(controller, 1) << "no active controller";
    kafka_.kill9(controller);
    std::this_thread::sleep_for(3s);
    const int next = kafka_.controller();
    EXPECT_GE(next, 1) << "no controller elected after the active one died";
    EXPECT_NE(next, controller);
    EXPECT_TRUE(kafka_.restart(controller));
    std::cout << "killed controller " << controller << ", then " << next << " led the quorum\n";
  });
}

TEST_F(ScaleOutKafkaFaults, APausedBrokerIsFencedAndRejoins) {
  // SIGSTOP keeps the node's connections open and silent, as a network partition does: clients
  // and the controller must notice by their timeouts, not by a refused connection.
  stream_through(
      [&] {
        const int leader = kafka_.main_leader(topic(".leads"));
        ASSERT_GE(leader, 1);
        kafka_.pause(leader);
        std::this_thread::sleep_for(12s);
        kafka_.resume(leader);
      },
      8s);
}

TEST_F(ScaleOutKafkaFaults, TwoNodesDownRefusesPostsWith503AndLosesNothing) {
  // One node of three left: no record can reach two replicas (min.insync.replicas=2 with
  // acks=all), and the metadata quorum is lost too, so no leadership moves. Posts must be
  // refused with 503 (the seller retries), never acknowledged and then lost.
  const StreamReport report = stream_through(
      [&] {
        const int controller = kafka_.controller();
        ASSERT_GE(controller, 1);
        const int other = controller == 1 ? 2 : 1;
        kafka_.kill9(controller);
        kafka_.kill9(other);
        std::this_thread::sleep_for(10s);
        EXPECT_TRUE(kafka_.restart({controller, other}));
      },
      6s);
  EXPECT_GT(report.refused_503, 0u) << "no post was refused with the cluster down to one node";
}

TEST_F(ScaleOutKafkaFaults, PartitionsAddedToTheLeadsTopicWhileLeadsStream) {
  // The leads topic grows from 4 to 8 partitions under load. The ingests' producers and the
  // workers' group learn of it from their metadata refresh (30 s): the producers start writing to
  // the new partitions, the group rebalances to share them out, and the records written there
  // before a worker held them are read from their start (auto.offset.reset=earliest), not
  // skipped.
  const std::string leads = topic(".leads");
  const std::string group = prefix_ + "-workers";
  stream_through(
      [&] {
        const auto added = std::chrono::steady_clock::now();
        ASSERT_EQ(kafka_.add_partitions(leads, 8), "");
        bool used = false;
        std::vector<std::int64_t> ends, done;
        while (!used && std::chrono::steady_clock::now() - added < 100s) {
          std::this_thread::sleep_for(2s);
          ends = kafka_.end_offsets(leads, 8);
          done = kafka_.committed(group, leads, 8);
          used = true;
          for (int p = 4; p < 8; ++p) used = used && ends[p] > 0 && done[p] > 0;
        }
        const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - added);
        EXPECT_TRUE(used) << "the new partitions were not written and consumed within 100 s";
        EXPECT_EQ(kafka_.partitions(leads).size(), 8u);
        std::cout << "8 partitions; the new ones written and committed " << after.count()
                  << " ms after they were added; per partition end/committed:";
        for (int p = 0; p < 8 && p < static_cast<int>(ends.size()); ++p)
          std::cout << " " << ends[p] << "/" << done[p];
        std::cout << "\n";
      },
      5s);
}

TEST_F(ScaleOutKafkaFaults, AWorkerJoiningAndAWorkerLeavingWhileLeadsStream) {
  // Each rebalance takes partitions from a worker that holds leads it has read: it commits what
  // it decided as the partitions go (the commit librdkafka's mock refused at a rebalance).
  stream_through(
      [&] {
        start_worker(workers_.size());  // a third worker joins
        std::this_thread::sleep_for(4s);
        EXPECT_EQ(workers_[0].process->terminate(40s), 0);  // the first leaves, draining
        std::this_thread::sleep_for(4s);
        workers_[0].start();  // and comes back
      },
      5s);
  EXPECT_GT(worker_metric(2, "leadflow_leads_decided_total"), 0)
      << "the worker that joined was never given a partition";
}

}  // namespace
}  // namespace leadflow::testing
