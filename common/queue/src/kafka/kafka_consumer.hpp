#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/rdkafka_handles.hpp"
#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow::kafka {

/// A consumer over its own rd_kafka_t: either a group member (subscribe, rebalance callback,
/// commits) or a tail reader (assign at the end of every partition, no commits). Owned by the
/// caller of make_consumer/make_tail_consumer; used by one thread at a time, except generation(),
/// which any thread may read.
class KafkaConsumer final : public QueueConsumer {
 public:
  enum class Mode { kGroup, kTail };

  KafkaConsumer(Mode mode, std::string group) : mode_(mode), group_(std::move(group)) {}
  ~KafkaConsumer() override { close(); }

  bool open(const KafkaQueueOptions& options, const std::vector<std::string>& topics,
            std::string& error);

  std::optional<QueueRecord> poll(std::chrono::milliseconds timeout) override;
  void commit(std::string_view topic, int partition, std::int64_t next_offset) override;
  void close() override;
  std::uint64_t generation() const override { return generation_.load(); }
  void set_revoke_handler(std::function<void()> handler) override {
    revoke_handler_ = std::move(handler);
  }
  std::vector<PartitionLag> lag() const override;

 private:
  static int on_statistics(rd_kafka_t* rk, char* json, std::size_t len, void* opaque);
  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                           rd_kafka_topic_partition_list_t* partitions, void* opaque);
  void assign(rd_kafka_topic_partition_list_t* partitions);
  void revoke(rd_kafka_topic_partition_list_t* partitions);
  bool assign_tail(const std::vector<std::string>& topics, std::string& error);
  /// A tail reader's topics' partitions added since it began are read too.
  void follow_added_partitions();
  bool cooperative() const;

  const Mode mode_;
  const std::string group_;
  Handle rk_;
  std::atomic<std::uint64_t> generation_{0};
  std::function<void()> revoke_handler_;
  bool closing_ = false;
  mutable std::mutex lag_mu_;
  std::vector<PartitionLag> lag_;               // from the latest statistics
  std::map<std::string, int> tail_partitions_;  // a tail reader's topics and partitions read
  std::chrono::steady_clock::time_point next_tail_check_{};
};

}  // namespace leadflow::kafka
