#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/queue/queue.hpp"

namespace leadflow {

/// Options of the Kafka adapter (librdkafka).
struct KafkaQueueOptions {
  std::string brokers;  // "host:port,host:port" (bootstrap.servers)
  std::string client_id = "leadflow";
  Topics topics;                   // the names created/checked at open
  int partitions = 8;              // for topics the adapter creates
  int replication_factor = 3;      // for topics the adapter creates (min(brokers, this) is not
                                   // guessed: creation fails loudly if the cluster is smaller)
  int message_timeout_ms = 10000;  // message.timeout.ms: after it an unacknowledged record is
                                   // reported failed (the seller gets a 503, never a silent loss)
  int max_buffered_messages = 100000;  // queue.buffering.max.messages: beyond it produce() answers
                                       // kQueueFull at once (bounded memory)
  int session_timeout_ms = 10000;      // consumer group session timeout
  // linger.ms of the producer that batches async leads once many wait for their reports
  // (docs/operations.md: a lone record is never made to wait for it)
  int linger_ms = 20;
  // fetch.wait.max.ms of every consumer: how long a broker may hold a fetch that finds nothing
  // (docs/operations.md). Kafka answers a held fetch as soon as a record arrives; librdkafka's
  // mock cluster does not, so tests against it set a few milliseconds.
  int fetch_wait_ms = 100;
  // Configurations of the topics the adapter creates (a topic that exists keeps its own): how long
  // records are kept, the dead letters' apart, and how old a segment is closed (docs/erasure.md).
  std::int64_t retention_ms = 604'800'000;         // retention.ms: leads, retry, results
  std::int64_t dead_retention_ms = 2'592'000'000;  // retention.ms: dead letters
  std::int64_t segment_ms = 86'400'000;            // segment.ms: all four
  std::map<std::string, std::string> extra;        // further librdkafka properties, applied last
};

/// Opens a Kafka-backed LeadQueue: an idempotent producer (enable.idempotence, acks=all) whose
/// delivery reports are served by a poll thread, consumer groups that store offsets only when
/// told (commit), and tail consumers for the results topic. Creates missing topics. Returns
/// nullptr and sets `error` when the cluster cannot be reached within the timeout.
std::unique_ptr<LeadQueue> open_kafka_queue(const KafkaQueueOptions& options, std::string& error);

/// Reads a consumer's lag from librdkafka's statistics (the JSON of its stats callback, enabled
/// by statistics.interval.ms): for each partition the consumer wants now (`desired`), the high
/// watermark against the group's committed offset, or the log start when the group has committed
/// nothing yet (it starts there: auto.offset.reset is earliest). Partitions whose offsets are not
/// known yet are left out. Empty for text that is not librdkafka's statistics.
std::vector<PartitionLag> lag_from_kafka_statistics(std::string_view json);

/// Test support: makes the producer of a queue from open_kafka_queue hit a fatal error, as a
/// fenced idempotent producer would (librdkafka's rd_kafka_test_fatal_error). False for any
/// other queue.
bool raise_fatal_producer_error_for_test(LeadQueue& queue);

}  // namespace leadflow
