// Chooses the LeadQueue adapter named by LEADFLOW_QUEUE.
#include "leadflow/queue/open_queue.hpp"

#include "leadflow/queue/embedded_queue.hpp"
#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow {

Topics topics_for(const Config& c) {
  Topics t;
  t.leads = c.topic_prefix + ".leads";
  t.results = c.topic_prefix + ".results";
  t.retry = c.topic_prefix + ".leads.retry";
  t.dead = c.topic_prefix + ".leads.dead";
  return t;
}

std::unique_ptr<LeadQueue> open_queue(const Config& c, std::string& error) {
  if (!c.kafka_queue()) {
    EmbeddedQueueOptions qo;
    qo.dir = c.data_dir + "/queue";
    qo.partitions = c.queue_partitions;
    qo.max_backlog = c.max_backlog;
    auto q = open_embedded_queue(qo, error);
    if (!q) error = "LEADFLOW_DATA_DIR: " + error;
    return q;
  }
  KafkaQueueOptions ko;
  ko.brokers = c.kafka_brokers;
  ko.client_id = c.topic_prefix;
  ko.topics = topics_for(c);
  ko.partitions = c.queue_partitions;
  ko.replication_factor = c.kafka_replication;
  ko.message_timeout_ms = c.kafka_message_timeout_ms;
  ko.max_buffered_messages = c.kafka_max_buffered;
  ko.linger_ms = c.kafka_linger_ms;
  ko.fetch_wait_ms = c.kafka_fetch_wait_ms;
  ko.retention_ms = c.kafka_retention_ms;
  ko.dead_retention_ms = c.kafka_dead_retention_ms;
  ko.segment_ms = c.kafka_segment_ms;
  ko.extra = c.kafka_properties;
  auto q = open_kafka_queue(ko, error);
  if (!q) error = "LEADFLOW_QUEUE: " + error;
  return q;
}

}  // namespace leadflow
