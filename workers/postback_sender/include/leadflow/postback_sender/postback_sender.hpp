#pragma once
// The postback sender (docs/postbacks.md): one thread that claims due events from the outbox,
// sends each to its endpoint, signed, over the outbound HTTP client (which refuses private and
// metadata addresses at every connection unless allowed), and records the attempts in batches.
// It shares nothing with the workers but the store: a slow or hanging endpoint holds only this
// sender's own slots, never a worker.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/postbacks/rules.hpp"
#include "leadflow/store/postbacks.hpp"

namespace leadflow {

struct PostbackSenderOptions {
  /// Requests in flight in all (LEADFLOW_POSTBACK_CONCURRENCY).
  int max_in_flight = 256;
  /// Requests in flight to one endpoint: a hanging endpoint holds at most these.
  int max_in_flight_per_endpoint = 8;
  /// One attempt's whole exchange (LEADFLOW_POSTBACK_TIMEOUT_MS).
  std::chrono::milliseconds timeout{5000};
  /// How often the outbox is asked for due events, and the attempts recorded.
  std::chrono::milliseconds poll{200};
  /// With a backlog (the last claim got all it asked for), the next claim comes as soon as the
  /// events held run low, at most this often, not a poll later: one transaction a claim and one
  /// a flush whatever the rate, so the store's writer is shared in batches, never per event.
  std::chrono::milliseconds backlog_gap{10};
  /// Claimed events an endpoint at its limit may have waiting in this sender for a free slot
  /// (held under their lease, at no cost to the store); past it they go back to the outbox.
  int max_waiting_per_endpoint = 256;
  /// How long a claimed event is this sender's before another may claim it again: longer than
  /// an attempt can take, so only a sender that died loses its claims (to another sender).
  std::chrono::milliseconds lease{60'000};
  /// How long an event of an endpoint at its own limit waits to be claimed again: as long as
  /// the oldest event this sender holds for it has waited, at least this and at most half the
  /// lease, so a slow or hanging endpoint's events are not claimed and sent back every second.
  std::chrono::milliseconds busy_retry{1000};
  /// The same for an endpoint whose last attempts all failed (postbacks::endpoint_failing): as
  /// long as it has been failing, at least failing_retry and at most failing_retry_max, so over
  /// an outage of T each of its events is claimed about log2(T / failing_retry) + T /
  /// failing_retry_max times, not once every failing_retry, and claims carry the others'. One
  /// event at a time, sent back or failed, is due again in failing_retry whatever its schedule,
  /// to find out when the endpoint answers again; then the rest are due at once
  /// (PostbackStore::resume_postbacks). Its events fanned out meanwhile are due when those sent
  /// back would be, and are not claimed before (PostbackHold).
  std::chrono::milliseconds failing_retry{10'000};
  std::chrono::milliseconds failing_retry_max{3'600'000};
  /// The same for an endpoint switched off: as long as it has been off, at least paused_retry
  /// and at most failing_retry_max; once it is on again (as this sender reads its endpoints:
  /// within endpoints_refresh) its events are due at once.
  std::chrono::milliseconds paused_retry{60'000};
  /// How long endpoints are cached at most: they are read again as soon as the store says one
  /// changed (PostbackStore::postback_endpoints_version), and at least this often.
  std::chrono::milliseconds endpoints_refresh{2000};
  /// Delivered and expired events are deleted, with their attempts, this many days after their
  /// event (or last replay) (LEADFLOW_POSTBACK_RETENTION_DAYS; 0: kept for ever).
  int retention_days = postbacks::kDefaultRetentionDays;
  /// How often the outbox is pruned, one batch per state a round; while a round finds a full
  /// batch, the next comes a poll later, so a backlog drains without holding the writer long.
  std::chrono::milliseconds prune_every{600'000};
};

/// Counters and gauges of the sender; register_postback_metrics makes them once per process.
struct PostbackMetrics {
  prometheus::Family<prometheus::Counter>& attempts;  // leadflow_postback_attempts_total{result}
  prometheus::Histogram& latency;                     // leadflow_postback_attempt_seconds
  prometheus::Counter& expired;                       // leadflow_postback_expired_total
  prometheus::Counter& pruned;                        // leadflow_postback_pruned_total
};
PostbackMetrics& postback_metrics();

/// Sends the outbox's events. Thread-safe: start() and stop() from one thread; run_once() and
/// flush() drive it by hand where no thread was started (tests).
class PostbackSender {
 public:
  PostbackSender(PostbackStore& store, HttpClient& client, const Clock& clock,
                 PostbackSenderOptions options = {});
  ~PostbackSender();
  PostbackSender(const PostbackSender&) = delete;
  PostbackSender& operator=(const PostbackSender&) = delete;

  void start();
  /// Stops claiming, waits for the requests in flight (at most one timeout) and records them.
  void stop();

  /// One round: records the attempts that finished and claims due events (each at most once a
  /// poll), then sends the events held for as many as have a free slot, their endpoint's
  /// included. Returns how many it sent.
  int run_once();
  /// Records the attempts that finished.
  void flush();
  /// Deletes one batch of old delivered and of old expired events (postbacks::prune_before),
  /// with their attempts. Returns how many went, or nullopt when the store could not say; sets
  /// when the next round is due.
  std::optional<int> prune();
  int in_flight() const { return in_flight_.load(); }
  /// Endpoints whose last postbacks::kFailingAfter attempts from this process all failed.
  int failing_endpoints() const;

 private:
  struct Finished {
    PostbackAttempt attempt;
    bool ok = false;
  };
  struct Waiting {
    PostbackDelivery delivery;
    SteadyTime claimed;
  };
  void loop();
  int dispatch();
  void send(const PostbackDelivery& d, const PostbackEndpoint& e);
  const PostbackEndpoint* endpoint(const std::string& id);
  void refresh_endpoints();  // when the store says one changed, or they are old
  // Its events held back (failing, switched off) are due at once: it answers, or is on again.
  void resume(const std::string& endpoint_id);
  // The endpoints whose events would go back if claimed now, and until when: a claim fans
  // their events out due then, never to be claimed and sent back meanwhile.
  std::vector<PostbackHold> holds(SteadyTime steady, std::int64_t now);
  bool endpoint_failing(const std::string& id) const;
  // How long an event of endpoint `id` the sender cannot take now goes back to the outbox for.
  std::chrono::milliseconds failing_deferral(const std::string& id, SteadyTime now);
  std::chrono::milliseconds busy_deferral(const std::string& id, SteadyTime now) const;
  std::chrono::milliseconds paused_deferral(const PostbackEndpoint& e, std::int64_t now_ms) const;
  std::size_t ready_to_send() const;  // claimed events of endpoints with a free slot
  std::size_t failing_hold() const {
    return static_cast<std::size_t>(options_.max_in_flight_per_endpoint);
  }

  PostbackStore& store_;
  HttpClient& client_;
  const Clock& clock_;
  PostbackSenderOptions options_;

  std::atomic<int> in_flight_{0};
  mutable std::mutex mu_;  // guards the fields below
  std::condition_variable wake_;
  std::vector<Finished> finished_;
  std::unordered_map<std::string, int> in_flight_by_endpoint_;
  std::map<std::string, std::deque<bool>> recent_;  // newest first, per endpoint
  bool stopping_ = false;
  std::uint64_t completions_ = 0;  // requests ended so far: wakes the loop when events wait

  // The sender thread's own (or run_once's caller's).
  std::unordered_map<std::string, PostbackEndpoint> endpoints_;
  SteadyTime endpoints_read_at_{};
  std::uint64_t endpoints_version_ = 0;  // the store's version they were read at
  // Claimed events waiting for a slot of their endpoint, oldest first, and their number.
  std::unordered_map<std::string, std::deque<Waiting>> waiting_;
  std::size_t waiting_count_ = 0;
  // Each endpoint this sender found failing: since when, in a row, and when the one event that
  // finds out whether it answers again is next due.
  struct Failing {
    SteadyTime since;
    SteadyTime probe_at;
  };
  std::unordered_map<std::string, Failing> failing_;
  // Endpoint `id`'s entry, made failing since `now` if it had none.
  Failing& failing_entry(const std::string& id, SteadyTime now) {
    return failing_.try_emplace(id, Failing{now, now}).first->second;
  }
  // Whether the next event of `f` to go back is the one that tries it again within
  // failing_retry (at most one per failing_retry).
  bool probe_due(Failing& f, SteadyTime now);
  // How long its events go back for: as long as it has failed, within the options' bounds.
  std::chrono::milliseconds failing_for(const Failing& f, SteadyTime now) const;
  std::optional<SteadyTime> last_claim_, last_flush_;
  bool backlog_ = false;                  // the last claim got all it asked for: more are due
  std::optional<SteadyTime> next_prune_;  // unset: at the first round
  std::thread thread_;
  std::unique_ptr<ScrapeHook> scrape_;
};

}  // namespace leadflow

namespace leadflow {

struct Config;

/// What a process that runs workers starts beside them: a PostbackSender with an HTTP client of
/// its own (libcurl, HTTP/1.1, loopback, private and metadata addresses refused at every
/// connection unless LEADFLOW_ALLOW_PRIVATE_BUYERS; the buyers' CA file), sized by
/// LEADFLOW_POSTBACK_CONCURRENCY and LEADFLOW_POSTBACK_TIMEOUT_MS. Started at once; stops when
/// destroyed.
/// How many nice steps below the workers of its process the sender's threads run
/// (make_lowered): its events wait in the durable outbox, so with the cores saturated the
/// decisions come first (docs/postbacks.md).
inline constexpr int kPostbackNiceSteps = 9;

class PostbackService {
 public:
  PostbackService(const Config& config, PostbackStore& store, const Clock& clock);
  ~PostbackService();
  PostbackService(const PostbackService&) = delete;
  PostbackService& operator=(const PostbackService&) = delete;
  PostbackSender& sender() { return *sender_; }

 private:
  std::unique_ptr<HttpClient> client_;
  std::unique_ptr<PostbackSender> sender_;
};

}  // namespace leadflow
