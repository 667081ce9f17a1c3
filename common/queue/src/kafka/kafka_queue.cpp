// The Kafka adapter of LeadQueue, over librdkafka's C API.
//
// Handles: one producer rd_kafka_t per queue; one rd_kafka_t per consumer (group or tail), owned
// by that consumer; one small consumer-type rd_kafka_t per group asked about in group_backlog(),
// owned by the queue. Consumers share nothing with the queue, so they may outlive it.
//
// The producer is kafka_producer.cpp, the consumers kafka_consumer.cpp, the librdkafka handles
// and their configuration rdkafka_handles.cpp.

#include "leadflow/queue/kafka_queue.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kafka/kafka_consumer.hpp"
#include "kafka/kafka_producer.hpp"
#include "kafka/rdkafka_handles.hpp"
#include "leadflow/base/log.hpp"

namespace leadflow {
namespace kafka {
namespace {

constexpr auto kBacklogCacheTtl = std::chrono::seconds(1);
// What a backlog probe fetches per partition to read one record's timestamp (Kafka still returns
// a whole first batch when it is larger).
constexpr const char* kProbeFetchBytes = "65536";

std::optional<std::int64_t> oldest_produced(rd_kafka_t* rk, const std::string& topic,
                                            const std::vector<std::pair<int, std::int64_t>>& at);

/// Answers group_backlog(group) for one group: a consumer handle with that group.id that never
/// joins the group, only reads its committed offsets and the watermarks. Guarded by KafkaQueue.
struct BacklogProbe {
  Handle rk;
  std::optional<GroupBacklog> value;
  std::chrono::steady_clock::time_point at{};
  bool fresh() const {
    return at != std::chrono::steady_clock::time_point{} &&
           std::chrono::steady_clock::now() - at < kBacklogCacheTtl;
  }
};

/// The LeadQueue. Owns the producer and the backlog probes; consumers own their handles, so they
/// may outlive it. Thread-safe.
///
/// Destruction order: shutdown() first (flush, purge what is left, stop the health and poll
/// threads), then the backlog probes, then the producer handle.
class KafkaQueue final : public LeadQueue {
 public:
  explicit KafkaQueue(const KafkaQueueOptions& options)
      : options_(options), producer_(std::make_unique<KafkaProducer>(options)) {}
  ~KafkaQueue() override {
    shutdown();
    probes_.clear();
    producer_.reset();
  }

  bool open(std::string& error) { return producer_->open(error); }

  QueueProducer& producer() override { return *producer_; }
  KafkaProducer& kafka_producer() { return *producer_; }

  // Throws std::runtime_error if librdkafka refuses the consumer: configuration was checked at
  // open, so this is the impossible case, and a worker without its consumer must not run on.
  std::unique_ptr<QueueConsumer> make_consumer(const std::string& group,
                                               const std::vector<std::string>& topics) override {
    auto c = std::make_unique<KafkaConsumer>(KafkaConsumer::Mode::kGroup, group);
    std::string error;
    if (!c->open(options_, topics, error)) {
      log(LogLevel::kError, "kafka_consumer_failed", {{"group", group}, {"error", error}});
      throw std::runtime_error("kafka consumer for group " + group + ": " + error);
    }
    return c;
  }

  std::unique_ptr<QueueConsumer> make_tail_consumer(
      const std::vector<std::string>& topics) override {
    auto c = std::make_unique<KafkaConsumer>(KafkaConsumer::Mode::kTail, unique_group_id());
    std::string error;
    if (!c->open(options_, topics, error)) {
      log(LogLevel::kError, "kafka_tail_consumer_failed", {{"topics", topics}, {"error", error}});
      return nullptr;
    }
    return c;
  }

  bool healthy() override { return producer_->healthy(); }

  // nullopt when the cluster did not answer (unknown, which a gauge must not show as "empty").
  // Each query waits at most kQueryTimeoutMs.
  std::optional<GroupBacklog> group_backlog(const std::string& group) override {
    std::lock_guard lock(probes_mu_);
    auto& probe = probes_[group];
    if (!probe) probe = std::make_unique<BacklogProbe>();
    if (probe->fresh()) return probe->value;
    probe->value = measure_backlog(*probe, group);
    probe->at = std::chrono::steady_clock::now();
    return probe->value;
  }

  void shutdown() override { producer_->shutdown(); }

 private:
  std::optional<GroupBacklog> measure_backlog(BacklogProbe& probe, const std::string& group);
  std::string unique_group_id();

  const KafkaQueueOptions options_;
  std::unique_ptr<KafkaProducer> producer_;
  std::mutex probes_mu_;
  std::map<std::string, std::unique_ptr<BacklogProbe>> probes_;
};

std::optional<GroupBacklog> KafkaQueue::measure_backlog(BacklogProbe& probe,
                                                        const std::string& group) {
  if (!probe.rk) {
    std::string error;
    Conf conf = make_conf(options_,
                          {{"group.id", group},
                           {"enable.auto.commit", "false"},
                           {"enable.auto.offset.store", "false"},
                           {"fetch.message.max.bytes", kProbeFetchBytes},
                           {"queued.max.messages.kbytes", "1024"}},
                          nullptr, error);
    if (conf) probe.rk = make_handle(RD_KAFKA_CONSUMER, std::move(conf), error);
    if (!probe.rk) {
      log(LogLevel::kWarn, "kafka_backlog_failed", {{"group", group}, {"error", error}});
      return std::nullopt;
    }
  }
  rd_kafka_t* rk = probe.rk.get();
  rd_kafka_poll(rk, 0);  // nobody else serves this handle's events; do not let them pile up
  const std::string& topic = options_.topics.leads;
  const int n = partition_count(rk, topic, kQueryTimeoutMs);
  if (n <= 0) return std::nullopt;
  PartitionList list(rd_kafka_topic_partition_list_new(n));
  for (int p = 0; p < n; ++p) rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p);
  if (rd_kafka_committed(rk, list.get(), kQueryTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR)
    return std::nullopt;
  GroupBacklog b;
  std::vector<std::pair<int, std::int64_t>> waiting;  // partition, first offset not committed
  for (int i = 0; i < list->cnt; ++i) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(rk, topic.c_str(), list->elems[i].partition, &low, &high,
                                         kQueryTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR)
      return std::nullopt;
    // Nothing committed, or committed below what retention kept: the group starts at the oldest
    // record (auto.offset.reset=earliest).
    const std::int64_t committed = list->elems[i].offset;
    const std::int64_t from = committed < 0 ? low : std::clamp(committed, low, high);
    b.records += high - from;
    b.position += from;
    if (high > from) waiting.emplace_back(list->elems[i].partition, from);
  }
  if (!waiting.empty()) b.oldest_produced_ms = oldest_produced(rk, topic, waiting);
  return b;
}

std::optional<std::int64_t> oldest_produced(rd_kafka_t* rk, const std::string& topic,
                                            const std::vector<std::pair<int, std::int64_t>>& at) {
  // The probe reads the one record at each partition's first offset not committed: assigned
  // (never subscribed, so it joins no group and commits nothing), a fetch of at most
  // kProbeFetchBytes a partition, then unassigned. The record's timestamp is its produce time
  // (CreateTime, set by the ingest's producer).
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(at.size())));
  for (const auto& [partition, offset] : at)
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
  if (rd_kafka_assign(rk, list.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  std::set<int> left;
  for (const auto& [partition, offset] : at) left.insert(partition);
  std::optional<std::int64_t> oldest;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kQueryTimeoutMs);
  while (!left.empty()) {
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (remaining.count() <= 0) break;
    Message m(rd_kafka_consumer_poll(rk, clamp_ms(remaining)));
    if (!m || m->err || !left.erase(m->partition)) continue;
    rd_kafka_timestamp_type_t type{};
    const std::int64_t ts = rd_kafka_message_timestamp(m.get(), &type);
    if (ts >= 0) oldest = std::min(oldest.value_or(ts), ts);
  }
  rd_kafka_assign(rk, nullptr);
  // A partition that did not answer in time might hold the oldest: unknown, not understated.
  if (!left.empty()) return std::nullopt;
  return oldest;
}

std::string KafkaQueue::unique_group_id() {
  static std::atomic<std::uint64_t> counter{0};
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%08x", rd());
  return options_.client_id + ".tail." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1)) + "." + suffix;
}

}  // namespace
}  // namespace kafka

bool raise_fatal_producer_error_for_test(LeadQueue& queue) {
  auto* kafka = dynamic_cast<kafka::KafkaQueue*>(&queue);
  return kafka != nullptr && kafka->kafka_producer().raise_fatal_for_test();
}

std::unique_ptr<LeadQueue> open_kafka_queue(const KafkaQueueOptions& options, std::string& error) {
  // Settings librdkafka would accept but that break the adapter's promises.
  if (options.brokers.empty()) {
    error = "no Kafka brokers given";
    return nullptr;
  }
  if (options.partitions < 1 || options.replication_factor < 1) {
    error = "topic partitions and replication factor must be at least 1";
    return nullptr;
  }
  if (options.message_timeout_ms < 1) {
    error = "message timeout must be positive (0 would mean a record may wait forever)";
    return nullptr;
  }
  if (options.max_buffered_messages < 1) {
    error = "max buffered messages must be positive (0 would mean unbounded memory)";
    return nullptr;
  }
  auto q = std::make_unique<kafka::KafkaQueue>(options);
  if (!q->open(error)) return nullptr;
  log(LogLevel::kInfo, "kafka_queue_opened",
      {{"brokers", options.brokers}, {"leads", options.topics.leads}});
  return q;
}

}  // namespace leadflow
