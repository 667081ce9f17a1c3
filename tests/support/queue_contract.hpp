#pragma once
// The queue contract: one suite of behaviour every LeadQueue adapter must show, like the store's
// (store_contract.hpp). An adapter's test includes this header and queue_contract_tests.inc
// inside namespace leadflow::contract, then instantiates the suite with its factory:
//
//   namespace leadflow::contract {
//   #include "queue_contract_tests.inc"
//   INSTANTIATE_TEST_SUITE_P(Embedded, QueueContract, ::testing::Values(embedded_factory()),
//                            queue_factory_name);
//   }
//
// The bodies live in an .inc for the reason store_contract.hpp gives. The suite uses only the
// leads topic and the consumer groups it names, and waits in real time (a queue is I/O).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "leadflow/queue/queue.hpp"

namespace leadflow::contract {

/// A fresh, empty queue for one test, and how to throw it away.
struct QueueHandle {
  std::unique_ptr<LeadQueue> queue;
  Topics topics;                  // the topic names it was opened with
  std::function<void()> cleanup;  // run after the queue is destroyed; may be empty
};

/// How the suite gets queues of one adapter.
struct QueueFactory {
  std::string name;  // "embedded", "kafka", "fake": names the instantiation
  std::function<QueueHandle()> make;
  /// How long a consumer may take to get its first record: joining a group is slow on Kafka.
  std::chrono::milliseconds first_record_within{10'000};
};

inline void PrintTo(const QueueFactory& f, std::ostream* os) { *os << f.name; }
inline std::string queue_factory_name(const ::testing::TestParamInfo<QueueFactory>& info) {
  return info.param.name;
}

/// The fixture: a fresh queue per test, shut down and removed afterwards.
class QueueContract : public ::testing::TestWithParam<QueueFactory> {
 protected:
  void SetUp() override {
    handle_ = GetParam().make();
    ASSERT_NE(handle_.queue, nullptr) << "the " << GetParam().name << " factory made no queue";
  }

  void TearDown() override {
    if (handle_.queue) handle_.queue->shutdown();
    handle_.queue.reset();
    if (handle_.cleanup) handle_.cleanup();
  }

  LeadQueue& queue() { return *handle_.queue; }
  const std::string& leads() const { return handle_.topics.leads; }

  void produce(const std::string& key, const std::string& payload) {
    ASSERT_EQ(queue().producer().produce(leads(), key, payload, std::chrono::seconds(5)),
              ProduceStatus::kOk);
  }

  /// Polls until `n` records came or the time for a first record (and then 5 s) passed.
  std::vector<QueueRecord> poll_records(QueueConsumer& c, std::size_t n) {
    std::vector<QueueRecord> out;
    const auto deadline =
        std::chrono::steady_clock::now() + GetParam().first_record_within + std::chrono::seconds(5);
    while (out.size() < n && std::chrono::steady_clock::now() < deadline)
      if (auto r = c.poll(std::chrono::milliseconds(100))) out.push_back(std::move(*r));
    return out;
  }

  /// Polls for `quiet` and returns whatever came (to show nothing more does).
  static std::vector<QueueRecord> drain(QueueConsumer& c, std::chrono::milliseconds quiet) {
    std::vector<QueueRecord> out;
    const auto deadline = std::chrono::steady_clock::now() + quiet;
    while (std::chrono::steady_clock::now() < deadline)
      if (auto r = c.poll(std::chrono::milliseconds(50))) out.push_back(std::move(*r));
    return out;
  }

  /// Commits, per partition, the offset after the highest of `records`.
  static void commit_all(QueueConsumer& c, const std::vector<QueueRecord>& records) {
    std::map<std::pair<std::string, int>, std::int64_t> next;
    for (const auto& r : records) {
      auto& n = next[{r.topic, r.partition}];
      n = std::max(n, r.offset + 1);
    }
    for (const auto& [tp, offset] : next) c.commit(tp.first, tp.second, offset);
  }

  static bool eventually(const std::function<bool()>& done, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  static std::multiset<std::string> payloads_of(const std::vector<QueueRecord>& records) {
    std::multiset<std::string> out;
    for (const auto& r : records) out.insert(r.payload);
    return out;
  }

  QueueHandle handle_;
};

}  // namespace leadflow::contract
