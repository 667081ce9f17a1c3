#include "kafka/rdkafka_handles.hpp"

#include "leadflow/base/log.hpp"

namespace leadflow::kafka {
namespace {

// librdkafka's default backs off up to 10 s between reconnects; after an outage we want delivery
// and readiness back within a couple of seconds.
constexpr int kReconnectBackoffMaxMs = 2000;
// librdkafka refreshes a topic's metadata every 5 minutes by default: partitions an operator adds
// to the leads topic would go unused by the producers, and unassigned in the workers' group, for
// that long. One metadata request per client every 30 s costs nothing measurable.
constexpr int kMetadataRefreshMs = 30000;

// librdkafka's syslog levels into ours.
void forward_log(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  const LogLevel ours = level <= 3   ? LogLevel::kError
                        : level == 4 ? LogLevel::kWarn
                        : level <= 6 ? LogLevel::kInfo
                                     : LogLevel::kDebug;
  if (!log_enabled(ours)) return;
  log(ours, "kafka_log",
      {{"client", rd_kafka_name(rk)}, {"facility", facility}, {"message", message}});
}

}  // namespace

void log_kafka_error(rd_kafka_t* rk, int err, const char* reason) {
  if (err == RD_KAFKA_RESP_ERR__TRANSPORT) return;
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    char why[512] = "";
    const rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, why, sizeof why);
    log(LogLevel::kError, "kafka_fatal_error",
        {{"client", rd_kafka_name(rk)}, {"error", rd_kafka_err2name(orig)}, {"reason", why}});
    return;
  }
  log(LogLevel::kWarn, "kafka_error",
      {{"client", rd_kafka_name(rk)},
       {"error", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err))},
       {"reason", reason}});
}

void consumer_error_cb(rd_kafka_t* rk, int err, const char* reason, void*) {
  log_kafka_error(rk, err, reason);
}

Conf make_conf(const KafkaQueueOptions& o, const Properties& role, void* opaque,
               std::string& error) {
  Conf conf(rd_kafka_conf_new());
  Properties all = {
      {"bootstrap.servers", o.brokers},
      {"client.id", o.client_id},
      {"socket.nagle.disable", "true"},
      {"reconnect.backoff.max.ms", std::to_string(kReconnectBackoffMaxMs)},
      {"topic.metadata.refresh.interval.ms", std::to_string(kMetadataRefreshMs)},
  };
  all.insert(all.end(), role.begin(), role.end());
  all.insert(all.end(), o.extra.begin(), o.extra.end());
  char why[512];
  for (const auto& [key, value] : all) {
    if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), why, sizeof why) !=
        RD_KAFKA_CONF_OK) {
      error = "kafka property " + key + ": " + why;
      return nullptr;
    }
  }
  rd_kafka_conf_set_log_cb(conf.get(), forward_log);
  rd_kafka_conf_set_opaque(conf.get(), opaque);
  return conf;
}

Handle make_handle(rd_kafka_type_t type, Conf conf, std::string& error) {
  char why[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), why, sizeof why);
  if (!rk) {
    error = std::string("kafka client: ") + why;
    return nullptr;
  }
  conf.release();
  return Handle(rk);
}

int partition_count(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (!rkt) return -1;
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &raw, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  Metadata md(raw);
  if (err || !md) return -1;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (topic == t.topic && !t.err) return t.partition_cnt;
  }
  return -1;
}

}  // namespace leadflow::kafka
