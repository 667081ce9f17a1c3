// The Kafka adapter of LeadQueue, over librdkafka's C API.
//
// Handles: one producer rd_kafka_t per queue; one rd_kafka_t per consumer (group or tail), owned
// by that consumer; one small consumer-type rd_kafka_t per group asked about in backlog(), owned
// by the queue. Consumers share nothing with the queue, so they may outlive it.
//
// Producer: idempotent (enable.idempotence, acks=all), so retries inside librdkafka never
// duplicate or reorder a partition's records. produce() enqueues the record with a promise as its
// opaque and waits on the future; the delivery report, served by the poll thread, fulfils the
// promise and deletes it. The future shares the promise's state, so a caller that gave up
// (kTimedOut) leaves nothing dangling for the late report. Enqueueing never blocks: a full local
// queue (queue.buffering.max.messages) answers kQueueFull at once.
//
// Health: a health thread asks the cluster for metadata once a second (never a request thread);
// the answer, and librdkafka's "all brokers down" error in between, set the flag healthy() reads.
//
// Consumer groups: offsets are stored only when the caller commits (enable.auto.offset.store
// =false) and written by auto-commit every second, on revoke and on close. Assignment is eager
// (roundrobin): a rebalance revokes every partition, so the revoke handler can finish everything
// in flight, commit it, and only then let the partitions go (see revoke()).

#include "leadflow/queue/kafka_queue.hpp"

#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "leadflow/base/log.hpp"

namespace leadflow {

namespace {

// How long open_kafka_queue waits for the first broker before giving up.
constexpr int kOpenTimeoutMs = 5000;
// Topic creation: the broker waits this long for the new topics to be ready before answering.
constexpr int kCreateTopicsTimeoutMs = 10000;
// A few milliseconds of batching: many request threads produce at once, so records still share
// requests, while a lone record waits no longer than this.
constexpr int kLingerMs = 2;
// librdkafka's default backs off up to 10 s between reconnects; after an outage we want delivery
// and readiness back within a couple of seconds.
constexpr int kReconnectBackoffMaxMs = 2000;
// Stored offsets are written this often (and always on revoke and close): a crash redelivers at
// most about a second of completed records.
constexpr int kAutoCommitIntervalMs = 1000;
constexpr auto kHealthInterval = std::chrono::seconds(1);
constexpr int kHealthProbeTimeoutMs = 1000;
constexpr auto kBacklogCacheTtl = std::chrono::seconds(1);
constexpr int kQueryTimeoutMs = 2000;
// Shutdown waits at most this long for unacknowledged records before purging them.
constexpr int kShutdownFlushMaxMs = 10000;

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

// Logs the errors librdkafka raises on a handle; fatal ones at error level. Transport errors are
// left out: librdkafka's own log line (forward_log) already says which broker failed and how.
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

// The properties every handle gets, then the role's, then the operator's extras (last, so they
// can override anything).
Conf make_conf(const KafkaQueueOptions& o, const Properties& role, void* opaque,
               std::string& error) {
  Conf conf(rd_kafka_conf_new());
  Properties all = {
      {"bootstrap.servers", o.brokers},
      {"client.id", o.client_id},
      {"socket.nagle.disable", "true"},
      {"reconnect.backoff.max.ms", std::to_string(kReconnectBackoffMaxMs)},
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

// rd_kafka_new takes the configuration only when it succeeds.
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

// Partition count of `topic`, or -1. Only for consumer handles: they never auto-create a topic
// they ask about (allow.auto.create.topics is false for consumers).
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

// Milliseconds for librdkafka's int timeouts, from a duration that may be milliseconds::max().
int clamp_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<std::int64_t>(d.count(), 0, std::numeric_limits<int>::max()));
}

// ---------------------------------------------------------------------------------------------

/// The queue's producer. Thread-safe: request threads produce concurrently; one poll thread
/// serves delivery reports and one health thread probes the cluster. Owned by KafkaQueue.
class KafkaProducer final : public QueueProducer {
 public:
  explicit KafkaProducer(const KafkaQueueOptions& options) : options_(options) {}
  ~KafkaProducer() override { shutdown(); }

  bool open(std::string& error);
  void shutdown();

  ProduceStatus produce(std::string_view topic, std::string_view key, std::string_view payload,
                        std::chrono::milliseconds timeout) override;
  void produce_async(std::string_view topic, std::string_view key, std::string_view payload,
                     ProduceCallback done) override;
  ProduceStatus send(std::string_view topic, std::string_view key,
                     std::string_view payload) override;
  bool flush(std::chrono::milliseconds timeout) override;
  bool healthy() override;
  bool broken() override;
  /// Every record is reported within message.timeout.ms; a second more covers the report's trip.
  std::chrono::milliseconds answer_within() const override {
    return std::chrono::milliseconds(options_.message_timeout_ms + 1000);
  }
  /// Raises a fatal error as a fenced idempotent producer would (tests).
  bool raise_fatal_for_test() {
    return rk_ && rd_kafka_test_fatal_error(rk_.get(), RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                                            "raised by a test") == RD_KAFKA_RESP_ERR_NO_ERROR;
  }

 private:
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  bool ensure_topics(std::string& error);
  ProduceStatus enqueue(std::string_view topic, std::string_view key, std::string_view payload,
                        void* opaque);
  void set_brokers_up(bool up, const char* why);
  void poll_loop();
  void health_loop();

  const KafkaQueueOptions options_;
  Handle rk_;
  std::thread poller_;
  std::thread health_;
  std::atomic<bool> stop_polling_{false};
  std::atomic<bool> closed_{false};
  std::atomic<bool> brokers_up_{true};
  std::mutex health_mu_;
  std::condition_variable health_cv_;
  bool stop_health_ = false;  // guarded by health_mu_
  std::mutex shutdown_mu_;
};

// A record's opaque: what to do with its delivery report. Deleted by the report's handler.
using DeliveryReport = std::function<void(rd_kafka_resp_err_t)>;

ProduceStatus to_produce_status(rd_kafka_resp_err_t err) {
  if (!err) return ProduceStatus::kOk;
  if (err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT) return ProduceStatus::kTimedOut;
  return ProduceStatus::kUnavailable;
}

bool KafkaProducer::open(std::string& error) {
  const Properties role = {
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"linger.ms", std::to_string(kLingerMs)},
      {"message.timeout.ms", std::to_string(options_.message_timeout_ms)},
      {"queue.buffering.max.messages", std::to_string(options_.max_buffered_messages)},
      // Same key, same partition as the Java client would choose (tools and other services).
      {"partitioner", "murmur2_random"},
      // Topics are created here with the configured partition count, never by a stray produce.
      {"allow.auto.create.topics", "false"},
  };
  Conf conf = make_conf(options_, role, this, error);
  if (!conf) return false;
  rd_kafka_conf_set_dr_msg_cb(conf.get(), on_delivery);
  rd_kafka_conf_set_error_cb(conf.get(), on_error);
  rk_ = make_handle(RD_KAFKA_PRODUCER, std::move(conf), error);
  if (!rk_) return false;
  poller_ = std::thread([this] { poll_loop(); });
  if (!ensure_topics(error)) return false;
  health_ = std::thread([this] { health_loop(); });
  return true;
}

bool KafkaProducer::ensure_topics(std::string& error) {
  // Metadata for all topics never auto-creates one; it doubles as the reachability check.
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_.get(), 1, nullptr, &raw, kOpenTimeoutMs);
  Metadata md(raw);
  if (err || !md) {
    error = "Kafka cluster at " + options_.brokers + " not reachable within " +
            std::to_string(kOpenTimeoutMs / 1000) + " s: " + rd_kafka_err2str(err);
    return false;
  }
  std::vector<std::string> missing;
  for (const std::string* name : {&options_.topics.leads, &options_.topics.results,
                                  &options_.topics.retry, &options_.topics.dead}) {
    bool found = false;
    for (int i = 0; i < md->topic_cnt && !found; ++i)
      found = *name == md->topics[i].topic && !md->topics[i].err;
    if (!found && std::find(missing.begin(), missing.end(), *name) == missing.end())
      missing.push_back(*name);
  }
  if (missing.empty()) return true;

  char why[512];
  std::vector<rd_kafka_NewTopic_t*> new_topics;
  auto cleanup = [&] { rd_kafka_NewTopic_destroy_array(new_topics.data(), new_topics.size()); };
  for (const std::string& name : missing) {
    rd_kafka_NewTopic_t* t = rd_kafka_NewTopic_new(name.c_str(), options_.partitions,
                                                   options_.replication_factor, why, sizeof why);
    if (!t) {
      cleanup();
      error = "topic " + name + ": " + why;
      return false;
    }
    new_topics.push_back(t);
  }
  rd_kafka_AdminOptions_t* admin =
      rd_kafka_AdminOptions_new(rk_.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(admin, kCreateTopicsTimeoutMs, why, sizeof why);
  rd_kafka_AdminOptions_set_operation_timeout(admin, kCreateTopicsTimeoutMs, why, sizeof why);
  rd_kafka_queue_t* results = rd_kafka_queue_new(rk_.get());
  rd_kafka_CreateTopics(rk_.get(), new_topics.data(), new_topics.size(), admin, results);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(results, kCreateTopicsTimeoutMs + 2000);
  bool ok = true;
  const std::string what = std::to_string(options_.partitions) + " partitions, replication " +
                           std::to_string(options_.replication_factor);
  if (!ev) {
    ok = false;
    error = "creating topics (" + what + "): no answer from the cluster";
  } else if (rd_kafka_event_error(ev)) {
    // The whole request failed, e.g. a cluster without the CreateTopics API (librdkafka's mock):
    // such a cluster needs the topics created beforehand.
    ok = false;
    error = "creating topics (" + what + "): " + rd_kafka_event_error_string(ev) +
            "; missing: " + missing.front() + (missing.size() > 1 ? " and others" : "");
  } else {
    std::size_t n = 0;
    const rd_kafka_topic_result_t** per_topic =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    for (std::size_t i = 0; i < n && ok; ++i) {
      const rd_kafka_resp_err_t terr = rd_kafka_topic_result_error(per_topic[i]);
      if (terr == RD_KAFKA_RESP_ERR_NO_ERROR || terr == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        if (!terr)
          log(LogLevel::kInfo, "kafka_topic_created",
              {{"topic", rd_kafka_topic_result_name(per_topic[i])},
               {"partitions", options_.partitions},
               {"replication_factor", options_.replication_factor}});
        continue;
      }
      ok = false;
      const char* detail = rd_kafka_topic_result_error_string(per_topic[i]);
      error = std::string("creating topic ") + rd_kafka_topic_result_name(per_topic[i]) + " (" +
              what + "): " + (detail && *detail ? detail : rd_kafka_err2str(terr));
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(results);
  rd_kafka_AdminOptions_destroy(admin);
  cleanup();
  return ok;
}

void KafkaProducer::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void*) {
  // send() passes no promise: its reports are dropped.
  if (auto* done = static_cast<DeliveryReport*>(msg->_private)) {
    (*done)(msg->err);
    delete done;
  } else if (msg->err && log_enabled(LogLevel::kDebug)) {
    log(LogLevel::kDebug, "kafka_send_failed", {{"error", rd_kafka_err2name(msg->err)}});
  }
}

void KafkaProducer::on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  log_kafka_error(rk, err, reason);
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    static_cast<KafkaProducer*>(opaque)->set_brokers_up(false, "all brokers down");
}

void KafkaProducer::set_brokers_up(bool up, const char* why) {
  if (brokers_up_.exchange(up) == up) return;
  // One line per change of state, not per failed probe.
  log(up ? LogLevel::kInfo : LogLevel::kWarn, up ? "kafka_reachable" : "kafka_unreachable",
      {{"brokers", options_.brokers}, {"reason", why}});
}

ProduceStatus KafkaProducer::enqueue(std::string_view topic, std::string_view key,
                                     std::string_view payload, void* opaque) {
  if (closed_) return ProduceStatus::kUnavailable;
  const std::string topic_name(topic);
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      rk_.get(), RD_KAFKA_V_TOPIC(topic_name.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(payload.data()), payload.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
  if (!err) return ProduceStatus::kOk;
  if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) return ProduceStatus::kQueueFull;
  log(LogLevel::kWarn, "kafka_enqueue_failed",
      {{"topic", topic_name}, {"error", rd_kafka_err2name(err)}});
  return ProduceStatus::kUnavailable;
}

ProduceStatus KafkaProducer::produce(std::string_view topic, std::string_view key,
                                     std::string_view payload, std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<rd_kafka_resp_err_t>>();
  std::future<rd_kafka_resp_err_t> delivered = promise->get_future();
  auto done = std::make_unique<DeliveryReport>(
      [promise](rd_kafka_resp_err_t err) { promise->set_value(err); });
  const ProduceStatus queued = enqueue(topic, key, payload, done.get());
  if (queued != ProduceStatus::kOk) return queued;
  done.release();  // the delivery report deletes it
  // wait_for(milliseconds::max()) would overflow inside the clock arithmetic.
  constexpr auto kForever = std::chrono::hours(24 * 365);
  if (timeout >= kForever) {
    delivered.wait();
  } else if (delivered.wait_for(timeout) != std::future_status::ready) {
    // Outcome unknown: the record may still be delivered, until message.timeout.ms.
    return ProduceStatus::kTimedOut;
  }
  return to_produce_status(delivered.get());
}

void KafkaProducer::produce_async(std::string_view topic, std::string_view key,
                                  std::string_view payload, ProduceCallback done) {
  // The delivery report comes within message.timeout.ms (served by the poll thread), or at
  // shutdown when librdkafka purges what it could not deliver.
  auto report = std::make_unique<DeliveryReport>(
      [done](rd_kafka_resp_err_t err) { done(to_produce_status(err)); });
  const ProduceStatus queued = enqueue(topic, key, payload, report.get());
  if (queued != ProduceStatus::kOk) {
    done(queued);
    return;
  }
  report.release();
}

ProduceStatus KafkaProducer::send(std::string_view topic, std::string_view key,
                                  std::string_view payload) {
  return enqueue(topic, key, payload, nullptr);
}

bool KafkaProducer::flush(std::chrono::milliseconds timeout) {
  if (!rk_) return false;
  return rd_kafka_flush(rk_.get(), clamp_ms(timeout)) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool KafkaProducer::healthy() {
  if (closed_ || !brokers_up_ || !rk_) return false;
  char why[256];
  return rd_kafka_fatal_error(rk_.get(), why, sizeof why) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool KafkaProducer::broken() {
  if (!rk_) return false;
  char why[256];
  return rd_kafka_fatal_error(rk_.get(), why, sizeof why) != RD_KAFKA_RESP_ERR_NO_ERROR;
}

void KafkaProducer::poll_loop() {
  while (!stop_polling_) rd_kafka_poll(rk_.get(), 100);
}

void KafkaProducer::health_loop() {
  std::unique_lock lock(health_mu_);
  while (!stop_health_) {
    lock.unlock();
    // Brokers only (no topic list): a cheap round trip to any broker, connecting if need be.
    const rd_kafka_metadata_t* raw = nullptr;
    const rd_kafka_resp_err_t err =
        rd_kafka_metadata(rk_.get(), 0, nullptr, &raw, kHealthProbeTimeoutMs);
    Metadata md(raw);
    set_brokers_up(!err && md && md->broker_cnt > 0,
                   err ? rd_kafka_err2name(err) : "metadata answered");
    lock.lock();
    health_cv_.wait_for(lock, kHealthInterval, [this] { return stop_health_; });
  }
}

void KafkaProducer::shutdown() {
  std::lock_guard guard(shutdown_mu_);
  if (closed_.exchange(true) || !rk_) {
    return;
  }
  const int flush_ms = std::min(options_.message_timeout_ms, kShutdownFlushMaxMs);
  if (rd_kafka_flush(rk_.get(), flush_ms) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    log(LogLevel::kWarn, "kafka_flush_incomplete", {{"pending", rd_kafka_outq_len(rk_.get())}});
    // What is left fails with a _PURGE_ report, so no caller waits on it past its own timeout.
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(rk_.get(), 1000);
  }
  {
    std::lock_guard lock(health_mu_);
    stop_health_ = true;
  }
  health_cv_.notify_all();
  if (health_.joinable()) health_.join();
  stop_polling_ = true;
  rd_kafka_yield(rk_.get());
  if (poller_.joinable()) poller_.join();
  rd_kafka_poll(rk_.get(), 0);  // reports that arrived after the poll thread's last round
}

// ---------------------------------------------------------------------------------------------

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

 private:
  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                           rd_kafka_topic_partition_list_t* partitions, void* opaque);
  void assign(rd_kafka_topic_partition_list_t* partitions);
  void revoke(rd_kafka_topic_partition_list_t* partitions);
  bool assign_tail(const std::vector<std::string>& topics, std::string& error);
  bool cooperative() const;

  const Mode mode_;
  const std::string group_;
  Handle rk_;
  std::atomic<std::uint64_t> generation_{0};
  std::function<void()> revoke_handler_;
  bool closing_ = false;
};

bool KafkaConsumer::open(const KafkaQueueOptions& options, const std::vector<std::string>& topics,
                         std::string& error) {
  Properties role = {
      {"group.id", group_},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
  };
  if (mode_ == Mode::kGroup) {
    const int heartbeat_ms = std::clamp(options.session_timeout_ms / 3, 1, 3000);
    role.insert(
        role.end(),
        {
            {"enable.auto.commit", "true"},
            {"auto.commit.interval.ms", std::to_string(kAutoCommitIntervalMs)},
            // Eager: every rebalance revokes everything first, which is what lets the revoke
            // handler drain in-flight work before anyone else may read those partitions.
            {"partition.assignment.strategy", "roundrobin"},
            {"session.timeout.ms", std::to_string(options.session_timeout_ms)},
            {"heartbeat.interval.ms", std::to_string(heartbeat_ms)},
        });
  } else {
    role.push_back({"enable.auto.commit", "false"});
  }
  Conf conf = make_conf(options, role, this, error);
  if (!conf) return false;
  rd_kafka_conf_set_error_cb(conf.get(), consumer_error_cb);
  if (mode_ == Mode::kGroup) rd_kafka_conf_set_rebalance_cb(conf.get(), on_rebalance);
  rk_ = make_handle(RD_KAFKA_CONSUMER, std::move(conf), error);
  if (!rk_) return false;
  // Errors, logs and rebalances are served by poll(), on the caller's thread.
  rd_kafka_poll_set_consumer(rk_.get());

  if (mode_ == Mode::kTail) return assign_tail(topics, error);
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())));
  for (const auto& t : topics)
    rd_kafka_topic_partition_list_add(list.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  if (const rd_kafka_resp_err_t err = rd_kafka_subscribe(rk_.get(), list.get())) {
    error = std::string("subscribe: ") + rd_kafka_err2str(err);
    return false;
  }
  return true;
}

bool KafkaConsumer::assign_tail(const std::vector<std::string>& topics, std::string& error) {
  PartitionList list(rd_kafka_topic_partition_list_new(8));
  for (const auto& t : topics) {
    const int n = partition_count(rk_.get(), t, kQueryTimeoutMs);
    if (n <= 0) {
      error = "no partitions found for topic " + t;
      return false;
    }
    for (int p = 0; p < n; ++p)
      rd_kafka_topic_partition_list_add(list.get(), t.c_str(), p)->offset = RD_KAFKA_OFFSET_END;
  }
  // Resolve "the end" now rather than when the fetcher starts: a record produced right after this
  // returns must be seen, and OFFSET_END resolved later would skip it. Looking up timestamp -1
  // answers each partition's end offset. On failure fall back to a lazy OFFSET_END.
  PartitionList ends(rd_kafka_topic_partition_list_copy(list.get()));
  if (rd_kafka_offsets_for_times(rk_.get(), ends.get(), kQueryTimeoutMs) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < ends->cnt; ++i)
      if (!ends->elems[i].err && ends->elems[i].offset >= 0)
        list->elems[i].offset = ends->elems[i].offset;
  } else {
    log(LogLevel::kWarn, "kafka_tail_end_lookup_failed", {{"topics", topics}});
  }
  if (const rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), list.get())) {
    error = std::string("assign: ") + rd_kafka_err2str(err);
    return false;
  }
  return true;
}

std::optional<QueueRecord> KafkaConsumer::poll(std::chrono::milliseconds timeout) {
  if (closing_ || !rk_) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    const int wait_ms = timeout > spent ? clamp_ms(timeout - spent) : 0;
    Message msg(rd_kafka_consumer_poll(rk_.get(), wait_ms));
    if (!msg) return std::nullopt;
    if (msg->err) {
      // Transient (broker down, coordinator moving, partition end): librdkafka recovers by itself.
      if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        log(LogLevel::kWarn, "kafka_consume_error",
            {{"group", group_},
             {"topic", msg->rkt ? rd_kafka_topic_name(msg->rkt) : ""},
             {"partition", msg->partition},
             {"error", rd_kafka_err2name(msg->err)},
             {"reason", rd_kafka_message_errstr(msg.get())}});
      if (wait_ms == 0) return std::nullopt;
      continue;
    }
    QueueRecord r;
    r.topic = rd_kafka_topic_name(msg->rkt);
    r.partition = msg->partition;
    r.offset = msg->offset;
    if (msg->key) r.key.assign(static_cast<const char*>(msg->key), msg->key_len);
    if (msg->payload) r.payload.assign(static_cast<const char*>(msg->payload), msg->len);
    // Read after consumer_poll returned: a rebalance it ran already bumped the generation.
    r.generation = generation_.load();
    return r;
  }
}

void KafkaConsumer::commit(std::string_view topic, int partition, std::int64_t next_offset) {
  // Allowed while closing: the revoke handler commits from inside close().
  if (mode_ == Mode::kTail || !rk_) return;
  PartitionList list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), std::string(topic).c_str(), partition)->offset =
      next_offset;
  rd_kafka_resp_err_t err = rd_kafka_offsets_store(rk_.get(), list.get());
  if (!err) err = list->elems[0].err;
  if (!err) return;
  // _STATE: the partition is no longer ours (a late commit after a rebalance); its new owner
  // reads from the last committed offset, which at-least-once allows.
  log(err == RD_KAFKA_RESP_ERR__STATE ? LogLevel::kDebug : LogLevel::kWarn, "kafka_commit_dropped",
      {{"group", group_},
       {"topic", std::string(topic)},
       {"partition", partition},
       {"error", rd_kafka_err2name(err)}});
}

// Eager unless the operator chose cooperative-sticky through `extra`; both are handled.
bool KafkaConsumer::cooperative() const {
  const char* protocol = rd_kafka_rebalance_protocol(rk_.get());
  return protocol && std::strcmp(protocol, "COOPERATIVE") == 0;
}

void KafkaConsumer::on_rebalance(rd_kafka_t*, rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* self = static_cast<KafkaConsumer*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    self->assign(partitions);
  } else {
    if (err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
      log(LogLevel::kError, "kafka_rebalance_error",
          {{"group", self->group_}, {"error", rd_kafka_err2name(err)}});
    self->revoke(partitions);
  }
}

void KafkaConsumer::assign(rd_kafka_topic_partition_list_t* partitions) {
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  if (cooperative()) {
    if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk_.get(), partitions)) {
      err = rd_kafka_error_code(e);
      rd_kafka_error_destroy(e);
    }
  } else {
    err = rd_kafka_assign(rk_.get(), partitions);
  }
  log(err ? LogLevel::kError : LogLevel::kInfo, "kafka_partitions_assigned",
      {{"group", group_}, {"partitions", partitions->cnt}, {"error", rd_kafka_err2name(err)}});
}

// In this order, so that no record is worked on by two consumers at once and none is skipped:
//   1. the handler finishes what is in flight and commit()s it (offsets stored, partitions still
//      ours, so the store succeeds);
//   2. the generation moves on: records handed out before are stale from now on;
//   3. the stored offsets are committed synchronously, so the next owner starts after them;
//   4. only then are the partitions given up.
// When the partitions were lost (session timed out) someone else may own them already: the
// handler still runs, so the caller drains cleanly, but the commit is skipped, as the group would
// refuse it.
void KafkaConsumer::revoke(rd_kafka_topic_partition_list_t* partitions) {
  const bool lost = rd_kafka_assignment_lost(rk_.get()) != 0;
  if (revoke_handler_) {
    try {
      revoke_handler_();
    } catch (const std::exception& e) {
      log(LogLevel::kError, "kafka_revoke_handler_failed", {{"group", group_}, {"what", e.what()}});
    }
  }
  generation_.fetch_add(1);
  if (!lost) {
    const rd_kafka_resp_err_t err = rd_kafka_commit(rk_.get(), nullptr, 0);
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
      log(LogLevel::kWarn, "kafka_revoke_commit_failed",
          {{"group", group_}, {"error", rd_kafka_err2name(err)}});
  }
  if (cooperative()) {
    if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk_.get(), partitions))
      rd_kafka_error_destroy(e);
  } else {
    rd_kafka_assign(rk_.get(), nullptr);
  }
  log(lost ? LogLevel::kWarn : LogLevel::kInfo, "kafka_partitions_revoked",
      {{"group", group_}, {"partitions", partitions ? partitions->cnt : 0}, {"lost", lost}});
}

void KafkaConsumer::close() {
  if (closing_ || !rk_) return;
  closing_ = true;
  // Leaves the group: the rebalance callback runs here, on this thread (revoke handler, commit).
  if (const rd_kafka_resp_err_t err = rd_kafka_consumer_close(rk_.get()))
    log(LogLevel::kWarn, "kafka_consumer_close_failed",
        {{"group", group_}, {"error", rd_kafka_err2name(err)}});
  rk_.reset();
}

// ---------------------------------------------------------------------------------------------

/// Answers backlog(group) for one group: a consumer handle with that group.id that never joins
/// the group, only reads its committed offsets and the watermarks. Guarded by KafkaQueue.
struct BacklogProbe {
  Handle rk;
  std::int64_t value = -1;
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

  // -1 when the cluster did not answer (unknown, which a gauge must not show as "empty"); 0 only
  // when nothing is waiting.
  std::int64_t backlog(const std::string& group) override {
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
  std::int64_t measure_backlog(BacklogProbe& probe, const std::string& group);
  std::string unique_group_id();

  const KafkaQueueOptions options_;
  std::unique_ptr<KafkaProducer> producer_;
  std::mutex probes_mu_;
  std::map<std::string, std::unique_ptr<BacklogProbe>> probes_;
};

std::int64_t KafkaQueue::measure_backlog(BacklogProbe& probe, const std::string& group) {
  if (!probe.rk) {
    std::string error;
    Conf conf =
        make_conf(options_, {{"group.id", group}, {"enable.auto.commit", "false"}}, nullptr, error);
    if (conf) probe.rk = make_handle(RD_KAFKA_CONSUMER, std::move(conf), error);
    if (!probe.rk) {
      log(LogLevel::kWarn, "kafka_backlog_failed", {{"group", group}, {"error", error}});
      return -1;
    }
  }
  rd_kafka_t* rk = probe.rk.get();
  rd_kafka_poll(rk, 0);  // nobody else serves this handle's events; do not let them pile up
  const std::string& topic = options_.topics.leads;
  const int n = partition_count(rk, topic, kQueryTimeoutMs);
  if (n <= 0) return -1;
  PartitionList list(rd_kafka_topic_partition_list_new(n));
  for (int p = 0; p < n; ++p) rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p);
  if (rd_kafka_committed(rk, list.get(), kQueryTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR) return -1;
  std::int64_t total = 0;
  for (int i = 0; i < list->cnt; ++i) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(rk, topic.c_str(), list->elems[i].partition, &low, &high,
                                         kQueryTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR)
      return -1;
    // Nothing committed, or committed below what retention kept: the group starts at the oldest
    // record (auto.offset.reset=earliest).
    const std::int64_t committed = list->elems[i].offset;
    const std::int64_t from = committed < 0 ? low : std::clamp(committed, low, high);
    total += high - from;
  }
  return total;
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

bool raise_fatal_producer_error_for_test(LeadQueue& queue) {
  auto* kafka = dynamic_cast<KafkaQueue*>(&queue);
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
  auto q = std::make_unique<KafkaQueue>(options);
  if (!q->open(error)) return nullptr;
  log(LogLevel::kInfo, "kafka_queue_opened",
      {{"brokers", options.brokers}, {"leads", options.topics.leads}});
  return q;
}

}  // namespace leadflow
