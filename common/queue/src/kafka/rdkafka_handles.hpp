#pragma once
// Owning wrappers of librdkafka's C handles, and what every handle is made with: the common
// configuration (with librdkafka's log forwarded into ours), handle creation, error logging and a
// metadata query. Shared by the producer, the consumers and the backlog probes.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow::kafka {

// Metadata, committed-offset and watermark queries wait this long for the cluster.
inline constexpr int kQueryTimeoutMs = 2000;

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* c) const { rd_kafka_conf_destroy(c); }
};
using Conf = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    rd_kafka_topic_partition_list_destroy(l);
  }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* m) const { rd_kafka_metadata_destroy(m); }
};
using Metadata = std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter>;

struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

using Properties = std::vector<std::pair<std::string, std::string>>;

// Logs the errors librdkafka raises on a handle; fatal ones at error level. Transport errors are
// left out: librdkafka's own log line already says which broker failed and how.
void log_kafka_error(rd_kafka_t* rk, int err, const char* reason);

// An error callback (rd_kafka_conf_set_error_cb) that logs through log_kafka_error.
void consumer_error_cb(rd_kafka_t* rk, int err, const char* reason, void*);

// The properties every handle gets, then the role's, then the operator's extras (last, so they
// can override anything); librdkafka's log goes to ours. nullptr with `error` set on a bad one.
Conf make_conf(const KafkaQueueOptions& o, const Properties& role, void* opaque,
               std::string& error);

// A handle of `type`; rd_kafka_new takes the configuration only when it succeeds.
Handle make_handle(rd_kafka_type_t type, Conf conf, std::string& error);

// Partition count of `topic`, or -1. Only for consumer handles: they never auto-create a topic
// they ask about (allow.auto.create.topics is false for consumers).
int partition_count(rd_kafka_t* rk, const std::string& topic, int timeout_ms);

// Milliseconds for librdkafka's int timeouts, from a duration that may be milliseconds::max().
inline int clamp_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<std::int64_t>(d.count(), 0, std::numeric_limits<int>::max()));
}

}  // namespace leadflow::kafka
