#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "kafka/rdkafka_handles.hpp"
#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow::kafka {

/// The queue's producer. Thread-safe: request threads produce concurrently; a poll thread per
/// librdkafka handle serves delivery reports and one health thread probes the cluster. Owned by
/// KafkaQueue.
///
/// Two idempotent librdkafka producers: records someone is waiting on right now (produce(): a
/// sync seller's lead, a Surface A post; send(): the outcome notice a sync seller waits for) go
/// out at once (linger.ms 0). produce_async() (an async campaign's leads, the bulk of the traffic)
/// goes out at once too while few async records wait for their reports, and through the second
/// producer, which lingers (KafkaQueueOptions::linger_ms) so that many records share a request,
/// once many do. Every record's key is unique across the two (a lead id, or a lead id and
/// attempt), so no ordering between them is lost.
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
    return prompt_ &&
           rd_kafka_test_fatal_error(prompt_.get(), RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                                     "raised by a test") == RD_KAFKA_RESP_ERR_NO_ERROR;
  }

 private:
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  Handle open_handle(int linger_ms, std::string& error);
  bool ensure_topics(std::string& error);
  ProduceStatus enqueue(rd_kafka_t* rk, std::string_view topic, std::string_view key,
                        std::string_view payload, void* opaque);
  void set_brokers_up(bool up, const char* why);
  void poll_loop(rd_kafka_t* rk);
  void health_loop();

  const KafkaQueueOptions options_;
  Handle rk_;      // lingers: produce_async under load
  Handle prompt_;  // sends at once: produce, send, produce_async while few wait
  std::atomic<int> async_unreported_{0};  // produce_async records waiting for their reports
  std::thread poller_;
  std::thread prompt_poller_;
  std::thread health_;
  std::atomic<bool> stop_polling_{false};
  std::atomic<bool> closed_{false};
  std::atomic<bool> brokers_up_{true};
  std::mutex health_mu_;
  std::condition_variable health_cv_;
  bool stop_health_ = false;  // guarded by health_mu_
  std::mutex shutdown_mu_;
};

}  // namespace leadflow::kafka
