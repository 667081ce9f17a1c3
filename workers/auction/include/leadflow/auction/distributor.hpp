#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "leadflow/auction/event_loop.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/delivery/buyer_health.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/reoffers.hpp"
#include "leadflow/suppression/suppression_lists.hpp"

namespace leadflow {

/// The active buyer configurations, reloaded from the store when its buyers_version moves
/// (checked at most every `refresh`). Readers get an immutable snapshot: the last one read whole
/// while the store cannot list them, nullptr if it never could (never an empty or partial list
/// for an outage). Thread-safe.
class BuyerDirectory {
 public:
  BuyerDirectory(AccountsStore& store, const Clock& clock,
                 std::chrono::milliseconds refresh = std::chrono::milliseconds(500))
      : store_(store), clock_(clock), refresh_(refresh) {}
  std::shared_ptr<const std::vector<Buyer>> snapshot();

 private:
  AccountsStore& store_;
  const Clock& clock_;
  std::chrono::milliseconds refresh_;
  std::mutex mu_;
  std::shared_ptr<const std::vector<Buyer>> buyers_;
  std::int64_t version_ = -1;
  SteadyTime checked_at_{};
};

/// The payout rules of campaigns (Surface B leads; with their own re-offer policies) and sellers
/// (Surface A leads) by id, and the verticals' re-offer policies the operator set, cached for 5 s
/// of `clock`'s time. A record the store cannot read now is the one last read (however old), or
/// kUnavailable if none was: never "none", which would pay the default rule or follow the
/// configured policy. Thread-safe.
class CampaignDirectory {
 public:
  CampaignDirectory(AccountsStore& store, const Clock& clock) : store_(store), clock_(clock) {}
  Lookup<Campaign> find(const std::string& id);
  Lookup<Seller> find_seller(const std::string& id);
  /// The re-offer policy the operator set for `vertical` (kOk), none (kNotFound: the configured
  /// one applies), or kUnavailable when the store could never list them.
  Lookup<ReofferPolicy> vertical_reoffer(const std::string& vertical);

 private:
  template <class T, class Get>
  Lookup<T> cached(std::unordered_map<std::string, std::pair<T, SteadyTime>>& cache,
                   const std::string& id, Get&& get);

  AccountsStore& store_;
  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, std::pair<Campaign, SteadyTime>> cache_;
  std::unordered_map<std::string, std::pair<Seller, SteadyTime>> sellers_;
  std::optional<std::vector<VerticalReoffer>> vertical_reoffers_;  // as last read whole
  SteadyTime vertical_reoffers_at_{};
};

struct DistributorOptions {
  std::chrono::milliseconds auction_timeout{10000};  // pings + posts, whole auction
  BuyerHealth::Options health;                       // when a failing buyer sits out
  std::chrono::milliseconds post_retry_pause{200};   // between re-asks of a post that got no answer
  int store_threads = 4;                             // blocking store calls of the auctions
  /// The buyers' suppression lists (a buyer never gets a lead its lists hold); none: no lists.
  const SuppressionLists* suppression = nullptr;
};

/// Thrown by Distributor::decide_and_wait when our own store cannot answer (a post intent it
/// cannot write): the lead is not decided, it goes back to the queue for a later attempt, which
/// does not count against its attempts (the buyers did nothing wrong).
class AuctionDeferred : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What became of one auction.
struct Decision {
  enum class Kind {
    kDecided,   // `distribution` is the outcome to record
    kFailed,    // the auction failed (`error`): retried through the retry topic, counted;
                // `distribution.attempts` holds the pings and posts it made all the same
    kDeferred,  // our store could not answer: back to the queue, not counted as an attempt
  };
  Kind kind = Kind::kDecided;
  Distribution distribution;
  std::string error;
  /// A live lead decided unsold that its vertical lets be offered again: when its first
  /// re-offer is due (docs/reoffers.md); 0: never.
  std::int64_t reoffer_at_ms = 0;
  /// A re-offer's outcome (kDecided of Distributor::reoffer): what to record.
  std::optional<ReofferOutcome> reoffer = std::nullopt;
};

/// What decides a pending lead: the Distributor in production; tests substitute their own.
class LeadDecider {
 public:
  virtual ~LeadDecider() = default;
  /// Starts deciding `lead`; `done` runs exactly once, on any thread, and must not block.
  virtual void decide(const Lead& lead, std::function<void(Decision)> done) = 0;
  /// How long the decider's own work has waited to run (zero: none waits): its store calls, its
  /// requests for a connection. While it is long, the worker starts no new auction
  /// (WorkerOptions::own_backlog_limit). Any thread.
  virtual std::chrono::milliseconds own_backlog() const { return std::chrono::milliseconds{0}; }
  /// How many times the decider's own work has been late so far (a ping held up in this
  /// process): each is a sign that it took in more auctions than it can serve in their buyers'
  /// time, and the worker lets fewer run at once (leadflow/runtime/auction_window.hpp). Any
  /// thread.
  virtual std::uint64_t times_behind() const { return 0; }
};

/// Decides leads: intake dedupe, eligibility, then the ping tree: the eligible buyers of tier 1
/// are pinged at once, ranked, and posted with fallback down the ranking when a buyer refuses;
/// only when a tier does not sell is the next tier asked, within the one auction deadline. The
/// outcome carries every attempt with its tier. A post that gets no answer is asked again (same
/// Idempotency-Key) until the auction deadline, never passed on to the next bidder or tier;
/// still unanswered, the auction fails so the worker retries the lead later.
/// A post intent our store cannot write is tried again until the deadline, then the lead is
/// deferred, never decided by our own failure. Recovers a lead redelivered after a crash
/// mid-post by re-posting to the buyer of the recorded post intent first.
///
/// Buyer capacity: the pings and posts in flight to each buyer are counted here, for the whole
/// process (one Distributor per process). A buyer with `max_concurrency` of them in flight when
/// its tier comes up sits that auction out (`at_capacity`, not a failure). A post to a buyer
/// admitted to the auction is never held back: it follows the buyer's own bid.
///
/// Each auction is a state machine on one EventLoop: pings, posts, the post-intent write, the
/// pause between re-asks and the deadline are events, and blocking store calls run on the
/// loop's pool, so thousands of auctions are in flight at once without a thread each. Every
/// wait runs on `clock`, so a test drives whole auctions on simulated time. Thread-safe.
class Distributor final : public LeadDecider {
 public:
  Distributor(DistributionStore& store, HttpClient& http, BuyerDirectory& buyers,
              CampaignDirectory& campaigns, const VerticalRegistry& verticals, const Clock& clock,
              DistributorOptions options);
  ~Distributor() override;

  void decide(const Lead& lead, std::function<void(Decision)> done) override;
  /// The longest any of the auctions' own work has waited: a blocking store call (an
  /// eligibility read, a batch of post intents) for a thread of the pool, a post intent for its
  /// batch, or (as the last answer to come said) a ping or post in the HTTP client's queue for
  /// a connection. Any thread.
  std::chrono::milliseconds own_backlog() const override;
  /// The pings held up in this process so far (each also counted as result="held_up").
  std::uint64_t times_behind() const override { return held_up_.load(std::memory_order_relaxed); }

  /// Offers `record`'s lead again as an aged lead, its `round`th re-offer (docs/reoffers.md):
  /// only to buyers that take aged leads and were never posted it, at their aged prices, for
  /// the sales its vertical still allows. `done` gets kDecided with `Decision::reoffer` (sold or
  /// not, and the next re-offer's time; past the consent window it offers nobody and schedules
  /// nothing), kFailed (a post with no answer: its intent stays for the next attempt) or
  /// kDeferred (our store could not answer). Runs on the same loop as live auctions.
  void reoffer(const LeadRecord& record, int round, std::function<void(Decision)> done);

  /// Runs one auction and waits (in real time) for it: the outcome, or throws AuctionDeferred
  /// (deferred) or std::runtime_error (failed). For tests and tools.
  Distribution decide_and_wait(const Lead& lead);

  /// Whether the buyer sits out auctions now for failing (for the leadflow_buyer_paused gauge).
  bool buyer_paused(const std::string& buyer_id) { return health_.paused(buyer_id); }
  /// The pings and posts in flight from this process now, per buyer id (for the
  /// leadflow_buyer_in_flight gauge). Read on the loop, so it waits behind the events already
  /// posted; empty when the loop has not answered within `wait`.
  std::unordered_map<std::string, int> in_flight_now(std::chrono::milliseconds wait);

 private:
  friend class Auction;
  /// Whether `b` has max_concurrency pings and posts in flight. Loop thread only.
  bool at_capacity(const Buyer& b) const;
  /// A ping or post to the buyer was sent / was answered (or gave up). Loop thread only.
  void request_sent(const std::string& buyer_id);
  void request_answered(const std::string& buyer_id);
  /// How long the request just answered waited on us (our HTTP client's queue before it went
  /// out, all of its time if it never went; then the loop). Loop thread only; own_backlog()
  /// reads it from any thread.
  void observe_request_queue(std::chrono::nanoseconds queued);
  /// A ping was held up in this process (times_behind). Any thread.
  void note_held_up() { held_up_.fetch_add(1, std::memory_order_relaxed); }
  /// Why buyer `b` may not take `lead` now ("" when it may): its own filters and schedule, its
  /// suppression list (`person`, hashed only when some buyer has a list), its health, its caps
  /// and budgets, and the people it bought before. A reason ending ":unknown" is our store's
  /// (or the lists') failure to say. Blocking: reads the store.
  std::string ineligibility(const Buyer& b, const Lead& lead, std::int64_t now_ms,
                            const std::optional<PersonFingerprints>& person);
  /// Counts a ping or post for the buyer's health, and logs and counts a pause it causes.
  void observe_health(const std::string& buyer_id, const HttpResponse& r);
  /// Writes a post intent with others waiting at the same time, in one batch; `then` runs on
  /// the loop with the store's answer. Loop thread only.
  void write_intent(DistributionStore::PostIntentWrite write,
                    std::function<void(StoreStatus)> then);
  void write_intents();

  struct PendingIntent {
    DistributionStore::PostIntentWrite write;
    std::function<void(StoreStatus)> then;
  };
  // At most this many batches at the store at once (SQLite writes them one after the other
  // anyway); the rest gather into the next batch meanwhile.
  static constexpr int kMaxIntentBatches = 2;

  DistributionStore& store_;
  HttpClient& http_;
  BuyerDirectory& buyers_;
  CampaignDirectory& campaigns_;
  const VerticalRegistry& verticals_;
  const Clock& clock_;
  DistributorOptions options_;
  BuyerHealth health_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
  std::vector<PendingIntent> intents_waiting_;  // loop thread only
  int intent_batches_out_ = 0;                  // loop thread only
  // When the oldest intent in intents_waiting_ came (steady nanoseconds); kNoIntentWaiting
  // when none waits. Written on the loop, read by own_backlog() on any thread.
  static constexpr std::int64_t kNoIntentWaiting = std::numeric_limits<std::int64_t>::min();
  std::atomic<std::int64_t> intents_waiting_since_{kNoIntentWaiting};
  std::atomic<std::int64_t> request_queue_ns_{0};   // the last answer's wait for a connection
  std::atomic<std::uint64_t> held_up_{0};           // pings held up in this process
  std::unordered_map<std::string, int> in_flight_;  // requests out per buyer id; loop thread only
  std::unique_ptr<EventLoop> loop_;  // last: stops first, before what its auctions use
};

}  // namespace leadflow
