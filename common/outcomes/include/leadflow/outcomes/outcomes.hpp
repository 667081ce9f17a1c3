#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// What a waiting seller request needs to know about a decided lead.
struct OutcomeMessage {
  std::string lead_id;
  DeliveryStatus status = DeliveryStatus::kPending;
  std::string buyer_id;
  Cents price = 0;
  Cents payout = 0;
  /// A request may be waiting for it (its seller asked to wait, or the lead was decided
  /// before and is announced again). Not part of the encoded message.
  bool awaited = true;
};
std::string encode_outcome(const OutcomeMessage& m);
std::optional<OutcomeMessage> decode_outcome(std::string_view payload);

/// The requests of this process that wait for an outcome, by lead id. Register before producing
/// (no lost wake-up), wait with a deadline, and the ticket unregisters on destruction.
/// Thread-safe.
class OutcomeWaiters {
 public:
  struct Slot {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<OutcomeMessage> outcome;
  };

  class Ticket {
   public:
    Ticket(OutcomeWaiters& owner, std::string lead_id, std::shared_ptr<Slot> slot)
        : owner_(&owner), lead_id_(std::move(lead_id)), slot_(std::move(slot)) {}
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();
    /// The outcome if it arrives before `deadline`.
    std::optional<OutcomeMessage> wait_until(SteadyTime deadline);

   private:
    OutcomeWaiters* owner_;
    std::string lead_id_;
    std::shared_ptr<Slot> slot_;
  };

  std::unique_ptr<Ticket> expect(const std::string& lead_id);
  /// Wakes the request waiting for this lead, if it is in this process. Returns whether one was.
  bool deliver(const OutcomeMessage& m);
  std::size_t waiting() const;
  /// The leads requests are waiting for now.
  std::vector<std::string> waiting_for() const;

 private:
  friend class Ticket;
  void forget(const std::string& lead_id);
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

/// Where workers send outcomes. Embedded: straight to this process's waiters. Scale-out: the
/// results topic, read by every ingest replica.
class OutcomePublisher {
 public:
  virtual ~OutcomePublisher() = default;
  virtual void publish(const OutcomeMessage& m) = 0;
};

/// The embedded publisher: delivers to waiters in the same process.
class LocalOutcomePublisher final : public OutcomePublisher {
 public:
  explicit LocalOutcomePublisher(OutcomeWaiters& waiters) : waiters_(waiters) {}
  void publish(const OutcomeMessage& m) override { waiters_.deliver(m); }

 private:
  OutcomeWaiters& waiters_;
};

class QueueProducer;
class QueueConsumer;
class AnnouncementStore;
class IntakeStore;
class StoreWatch;

/// The store channel outcomes are announced on (scale-out).
inline constexpr std::string_view kOutcomeChannel = "leadflow_outcomes";

/// The scale-out publisher. Every outcome goes to the results topic, keyed by lead id, without
/// waiting for it to be durable: the record of every decision, for whoever reads that topic.
/// An awaited one is also announced through the store (PostgreSQL NOTIFY), which every ingest
/// replica hears within a round trip, so the waiting request is woken without a Kafka crossing
/// (a consumer's fetch, a producer's batching). Announcements go out from a thread of their own,
/// all those waiting in one statement. A lost notice costs a waiting request only its early
/// answer (it answers 202; the outcome is in the store). Thread-safe; destroying it sends what
/// is still waiting first. `store` outlives it.
class QueueOutcomePublisher final : public OutcomePublisher {
 public:
  QueueOutcomePublisher(QueueProducer& producer, std::string topic, AnnouncementStore& store);
  ~QueueOutcomePublisher() override;
  QueueOutcomePublisher(const QueueOutcomePublisher&) = delete;
  QueueOutcomePublisher& operator=(const QueueOutcomePublisher&) = delete;
  void publish(const OutcomeMessage& m) override;

 private:
  void announce_loop();

  QueueProducer& producer_;
  std::string topic_;
  AnnouncementStore& store_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> to_announce_;  // guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  std::thread announcer_;
};

/// Wakes this process's waiting requests with the outcomes announced through the store, so a
/// seller's synchronous wait works whichever worker process decided the lead. Each time the watch
/// starts listening (at first, and again after the store was unreachable) the leads still waited
/// for are read from the store, so an outcome announced while it could not hear is not missed.
/// nullptr when the store cannot be watched (then ResultsListener tails the results topic).
std::unique_ptr<StoreWatch> listen_for_outcomes(AnnouncementStore& store, IntakeStore& leads,
                                                OutcomeWaiters& waiters);

/// Tails the results topic on a thread of its own and wakes this process's waiting requests: the
/// way outcomes come back when the store cannot announce them. Owns the consumer.
class ResultsListener {
 public:
  ResultsListener(std::unique_ptr<QueueConsumer> consumer, OutcomeWaiters& waiters);
  ~ResultsListener();
  ResultsListener(const ResultsListener&) = delete;
  ResultsListener& operator=(const ResultsListener&) = delete;
  void stop();

 private:
  std::unique_ptr<QueueConsumer> consumer_;
  OutcomeWaiters& waiters_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace leadflow
