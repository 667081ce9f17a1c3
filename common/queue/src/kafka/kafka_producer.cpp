// Producer: idempotent (enable.idempotence, acks=all), so retries inside librdkafka never
// duplicate or reorder a partition's records. Two librdkafka producers (see kafka_producer.hpp):
// one sends at once, for records a caller is waiting on; one lingers, for the async bulk. produce()
// enqueues the record with a promise as its opaque and waits on the future; the delivery report,
// served by the poll thread, fulfils the promise and deletes it. The future shares the promise's
// state, so a caller that gave up (kTimedOut) leaves nothing dangling for the late report.
// Enqueueing never blocks: a full local queue (queue.buffering.max.messages) answers kQueueFull at
// once.
//
// Health: a health thread asks the cluster for metadata once a second (never a request thread);
// the answer, and librdkafka's "all brokers down" error in between, set the flag healthy() reads.

#include "kafka/kafka_producer.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "leadflow/base/log.hpp"

namespace leadflow::kafka {
namespace {

// How long open_kafka_queue waits for the first broker before giving up.
constexpr int kOpenTimeoutMs = 5000;
// Topic creation: the broker waits this long for the new topics to be ready before answering.
constexpr int kCreateTopicsTimeoutMs = 10000;
// produce_async() sends at once while fewer than this many async records wait for their reports,
// and lingers (KafkaQueueOptions::linger_ms) beyond: a seller posting one lead after another is
// never made to wait for a batch, while under load the brokers get a few large requests instead
// of one per record. On a real three-node cluster sharing two cores, 64 connections posting async
// leads got 960 posts/s at a 56 ms median with every record lingering 2 ms (the brokers' request
// handling and the client's wake-ups took the cores), 2,240/s at 27 ms with this rule
// (docs/benchmarks.md). produce() and send() never linger: a seller is waiting on
// each of those records, and two milliseconds each way were a third of what a sync post added to
// its buyers' time.
constexpr int kPromptAsyncRecords = 16;
constexpr auto kHealthInterval = std::chrono::seconds(1);
constexpr int kHealthProbeTimeoutMs = 1000;
// Shutdown waits at most this long for unacknowledged records before purging them.
constexpr int kShutdownFlushMaxMs = 10000;

// A record's opaque: what to do with its delivery report. Deleted by the report's handler.
using DeliveryReport = std::function<void(rd_kafka_resp_err_t)>;

ProduceStatus to_produce_status(rd_kafka_resp_err_t err) {
  if (!err) return ProduceStatus::kOk;
  if (err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT) return ProduceStatus::kTimedOut;
  return ProduceStatus::kUnavailable;
}

}  // namespace

Handle KafkaProducer::open_handle(int linger_ms, std::string& error) {
  const Properties role = {
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"linger.ms", std::to_string(linger_ms)},
      {"message.timeout.ms", std::to_string(options_.message_timeout_ms)},
      {"queue.buffering.max.messages", std::to_string(options_.max_buffered_messages)},
      // Same key, same partition as the Java client would choose (tools and other services).
      {"partitioner", "murmur2_random"},
      // Topics are created here with the configured partition count, never by a stray produce.
      {"allow.auto.create.topics", "false"},
  };
  Conf conf = make_conf(options_, role, this, error);
  if (!conf) return nullptr;
  rd_kafka_conf_set_dr_msg_cb(conf.get(), on_delivery);
  rd_kafka_conf_set_error_cb(conf.get(), on_error);
  return make_handle(RD_KAFKA_PRODUCER, std::move(conf), error);
}

bool KafkaProducer::open(std::string& error) {
  rk_ = open_handle(options_.linger_ms, error);
  if (!rk_) return false;
  poller_ = std::thread([this] { poll_loop(rk_.get()); });
  prompt_ = open_handle(0, error);
  if (!prompt_) return false;
  prompt_poller_ = std::thread([this] { poll_loop(prompt_.get()); });
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
    // As the manifests set on theirs: a record (the person as posted) is gone at most
    // retention.ms + segment.ms after it was written (docs/erasure.md).
    const std::int64_t retention =
        name == options_.topics.dead ? options_.dead_retention_ms : options_.retention_ms;
    for (const auto& [key, value] : {std::pair{"retention.ms", std::to_string(retention)},
                                     std::pair{"segment.ms", std::to_string(options_.segment_ms)},
                                     std::pair{"cleanup.policy", std::string("delete")}}) {
      if (rd_kafka_NewTopic_set_config(t, key, value.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        cleanup();
        error = "topic " + name + ": config " + key;
        return false;
      }
    }
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
               {"segment_ms", options_.segment_ms},
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

ProduceStatus KafkaProducer::enqueue(rd_kafka_t* rk, std::string_view topic, std::string_view key,
                                     std::string_view payload, void* opaque) {
  if (closed_) return ProduceStatus::kUnavailable;
  const std::string topic_name(topic);
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      rk, RD_KAFKA_V_TOPIC(topic_name.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
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
  const ProduceStatus queued = enqueue(prompt_.get(), topic, key, payload, done.get());
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
  const bool at_once =
      async_unreported_.fetch_add(1, std::memory_order_relaxed) < kPromptAsyncRecords;
  // A record counts until its caller has been told.
  auto report = std::make_unique<DeliveryReport>([this, done](rd_kafka_resp_err_t err) {
    done(to_produce_status(err));
    async_unreported_.fetch_sub(1, std::memory_order_relaxed);
  });
  const ProduceStatus queued =
      enqueue(at_once ? prompt_.get() : rk_.get(), topic, key, payload, report.get());
  if (queued != ProduceStatus::kOk) {
    async_unreported_.fetch_sub(1, std::memory_order_relaxed);
    done(queued);
    return;
  }
  report.release();
}

ProduceStatus KafkaProducer::send(std::string_view topic, std::string_view key,
                                  std::string_view payload) {
  return enqueue(prompt_.get(), topic, key, payload, nullptr);
}

bool KafkaProducer::flush(std::chrono::milliseconds timeout) {
  if (!rk_ || !prompt_) return false;
  // One deadline for both: the prompt producer's backlog is small, so it goes first.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (rd_kafka_flush(prompt_.get(), clamp_ms(timeout)) != RD_KAFKA_RESP_ERR_NO_ERROR) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return rd_kafka_flush(rk_.get(), clamp_ms(std::max(left, std::chrono::milliseconds(0)))) ==
         RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool KafkaProducer::healthy() { return !closed_ && brokers_up_ && rk_ && prompt_ && !broken(); }

bool KafkaProducer::broken() {
  char why[256];
  for (const Handle* h : {&rk_, &prompt_})
    if (*h && rd_kafka_fatal_error(h->get(), why, sizeof why) != RD_KAFKA_RESP_ERR_NO_ERROR)
      return true;
  return false;
}

void KafkaProducer::poll_loop(rd_kafka_t* rk) {
  while (!stop_polling_) rd_kafka_poll(rk, 100);
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
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(std::min(options_.message_timeout_ms, kShutdownFlushMaxMs));
  for (const Handle* h : {&prompt_, &rk_}) {
    if (!*h) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (rd_kafka_flush(h->get(), clamp_ms(std::max(left, std::chrono::milliseconds(0)))) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      log(LogLevel::kWarn, "kafka_flush_incomplete", {{"pending", rd_kafka_outq_len(h->get())}});
      // What is left fails with a _PURGE_ report, so no caller waits on it past its own timeout.
      rd_kafka_purge(h->get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      rd_kafka_flush(h->get(), 1000);
    }
  }
  {
    std::lock_guard lock(health_mu_);
    stop_health_ = true;
  }
  health_cv_.notify_all();
  if (health_.joinable()) health_.join();
  stop_polling_ = true;
  for (const Handle* h : {&prompt_, &rk_})
    if (*h) rd_kafka_yield(h->get());
  if (poller_.joinable()) poller_.join();
  if (prompt_poller_.joinable()) prompt_poller_.join();
  // Reports that arrived after the poll threads' last round.
  for (const Handle* h : {&prompt_, &rk_})
    if (*h) rd_kafka_poll(h->get(), 0);
}

}  // namespace leadflow::kafka
