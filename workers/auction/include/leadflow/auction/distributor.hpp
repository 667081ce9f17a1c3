#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/store/store.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/delivery/buyer_health.hpp"

namespace leadflow {

/// The active buyer configurations, reloaded from the store when its buyers_version moves
/// (checked at most every `refresh`). Readers get an immutable snapshot. Thread-safe.
class BuyerDirectory {
 public:
  BuyerDirectory(Store& store, const Clock& clock,
                 std::chrono::milliseconds refresh = std::chrono::milliseconds(500))
      : store_(store), clock_(clock), refresh_(refresh) {}
  std::shared_ptr<const std::vector<Buyer>> snapshot();

 private:
  Store& store_;
  const Clock& clock_;
  std::chrono::milliseconds refresh_;
  std::mutex mu_;
  std::shared_ptr<const std::vector<Buyer>> buyers_;
  std::int64_t version_ = -1;
  SteadyTime checked_at_{};
};

/// Campaign payout rules by id, cached for 5 s of `clock`'s time. Thread-safe.
class CampaignDirectory {
 public:
  CampaignDirectory(Store& store, const Clock& clock) : store_(store), clock_(clock) {}
  std::optional<Campaign> find(const std::string& id);

 private:
  Store& store_;
  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, std::pair<Campaign, SteadyTime>> cache_;
};

struct DistributorOptions {
  std::chrono::milliseconds auction_timeout{10000};  // pings + posts, whole auction
  BuyerHealth::Options health;                        // when a failing buyer sits out
  std::chrono::milliseconds post_retry_pause{200};    // between re-asks of a post that got no answer
};

/// Thrown by an auction that cannot go on because our own store cannot answer (a post intent it
/// cannot write): the lead is not decided, it goes back to the queue for a later attempt, which
/// does not count against its attempts (the buyers did nothing wrong).
class AuctionDeferred : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What decides a pending lead: the Distributor in production; tests substitute their own.
class LeadDecider {
 public:
  virtual ~LeadDecider() = default;
  virtual Distribution decide(const Lead& lead) = 0;
};

/// Decides one lead: intake dedupe, eligibility, concurrent pings, ranking, posts with fallback
/// down the ranking when a buyer refuses, and the outcome with every attempt. A post that gets
/// no answer is asked again (same Idempotency-Key) until the auction deadline, never passed on
/// to the next bidder; still unanswered, decide() throws so the worker retries the lead later.
/// Recovers a lead redelivered after a crash mid-post by re-posting to the buyer of the recorded
/// post intent first. Every wait (a ping, a post, the pause between re-asks, the deadline) runs
/// on `clock`, so a test drives a whole auction on simulated time.
/// Thread-safe: many worker threads call decide() at once.
class Distributor final : public LeadDecider {
 public:
  Distributor(Store& store, HttpClient& http, BuyerDirectory& buyers, CampaignDirectory& campaigns,
              const VerticalRegistry& verticals, const Clock& clock, DistributorOptions options);

  /// Runs the auction for a pending lead (already inserted in the store) and returns the outcome
  /// to record. Not expected to throw; if it does, the worker retries the lead (retry topic).
  Distribution decide(const Lead& lead) override;

 private:
  Cents payout_for(const Lead& lead, Cents price);
  /// Counts a ping or post for the buyer's health, and logs and counts a pause it causes.
  void observe_health(const std::string& buyer_id, const HttpResponse& r);

  Store& store_;
  HttpClient& http_;
  BuyerDirectory& buyers_;
  CampaignDirectory& campaigns_;
  const VerticalRegistry& verticals_;
  const Clock& clock_;
  DistributorOptions options_;
  BuyerHealth health_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace leadflow
