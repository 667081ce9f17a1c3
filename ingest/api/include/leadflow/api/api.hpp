#pragma once
// Private: what the HTTP handlers share, and the registration functions of each surface.
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "leadflow/http/message.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include "leadflow/http/routes.hpp"

#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/config.hpp"
#include "leadflow/base/expiring_cache.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/limits/rate_limiter.hpp"
#include "leadflow/limits/sign_in_limits.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/audit.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/erasure.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/store/postbacks.hpp"
#include "leadflow/store/reporting.hpp"
#include "leadflow/store/sign_in.hpp"
#include "leadflow/store/statements.hpp"

namespace leadflow {

class LiveFeed;  // leadflow/api/live_feed.hpp

/// The front's metric families, registered once.
struct IngestMetrics {
  prometheus::Family<prometheus::Counter>&
      requests;  // leadflow_http_requests_total{route,method,status}
  prometheus::Family<prometheus::Histogram>&
      latency;                                     // leadflow_http_request_seconds{route,method}
  prometheus::Family<prometheus::Counter>& leads;  // leadflow_leads_received_total{surface,result}
  prometheus::Histogram& produce_seconds;          // leadflow_queue_produce_seconds
  prometheus::Family<prometheus::Counter>&
      produce_failures;  // leadflow_queue_produce_failures_total{reason}

  /// Counts a lead post. `surface` and `result` are string literals: their addresses key a
  /// per-thread cache of resolved counters.
  void lead(const char* surface, const char* result);
};
IngestMetrics& ingest_metrics();

/// Campaigns by key hash, cached for a second (so a paused campaign stops within a second)
/// including misses (so a flood of bad keys does not reach the store). Thread-safe.
class CampaignCache {
 public:
  CampaignCache(AccountsStore& store, const Clock& clock)
      : store_(store), cache_(clock, std::chrono::seconds(1)) {}
  /// The campaign of `key`, or nullopt. `unavailable` is set when the store could not say (a
  /// miss then is not cached, and the caller answers 503 rather than "unknown key").
  std::optional<Campaign> find_by_key(const std::string& key, bool& unavailable);
  /// find_by_key without asking the store (for the event loop): false when only the store can
  /// say, and then `out` is untouched.
  bool find_cached(const std::string& key, std::optional<Campaign>& out);

 private:
  AccountsStore& store_;
  ExpiringCache<std::optional<Campaign>> cache_;
};

/// Surface A's API keys by the SHA-256 of the secret, kept for a second like campaigns, so that
/// a busy key costs the store one read a second rather than one a request. Only keys the store
/// found are kept (revoked ones too, so that they are refused as revoked): a miss or a lookup the
/// store could not answer is asked again next time. A key revoked through this replica is
/// refused at once (a revocation forgets every key: they are rare); through another replica or
/// leadflow-admin, within a second. Thread-safe.
class ApiKeyCache {
 public:
  ApiKeyCache(AccountsStore& store, const Clock& clock)
      : store_(store), cache_(clock, std::chrono::seconds(1)) {}
  /// AccountsStore::find_api_key_by_hash, or what it answered less than a second ago.
  Lookup<ApiKey> find_by_hash(const std::string& key_hash);
  /// The key's use at `at_ms` was written to the store: the kept copy says so too, so the next
  /// requests do not write it again.
  void used(const std::string& key_hash, std::int64_t at_ms);
  /// After a revocation through this replica.
  void forget_all() { cache_.clear(); }

 private:
  AccountsStore& store_;
  ExpiringCache<ApiKey> cache_;
};

/// Whether the operator shows a buyer sellers' names (its configuration's
/// visibility.seller_names), which the visibility model asks on every read by that buyer: kept
/// for 1 s per buyer, like a campaign in CampaignCache, so a change shows within a second in every
/// replica. A buyer the store cannot read is shown source codes and is not kept. Thread-safe.
class BuyerVisibilityCache {
 public:
  BuyerVisibilityCache(AccountsStore& store, const Clock& clock)
      : store_(store), cache_(clock, std::chrono::seconds(1)) {}
  bool shows_seller_names(const std::string& buyer_id);
  /// After a change to the buyer through this replica.
  void forget(const std::string& buyer_id) { cache_.erase(buyer_id); }

 private:
  AccountsStore& store_;
  ExpiringCache<bool> cache_;
};

class SuppressionLists;
class SuppressionStore;

struct IngestContext {
  const Config& config;
  // The store, through the role ports the handlers use (docs/store-ports.md): all of them one
  // store, so any of them answers healthy() for it.
  IntakeStore& intake;              // leads, their outcomes, Idempotency-Keys
  AccountsStore& accounts;          // sellers, campaigns, API keys, buyers, dashboard users
  SignInStore& sign_in;             // sign-ins, sessions, second factors
  MoneyStore& money;                // returns, settlements, the ledger
  ReportingStore& reporting;        // the rollups reports read
  DistributionStore& distribution;  // the post intents a settlement reads
  AuditStore& changes;              // the change log of the records above (buyers' written here)
  QueueProducer& producer;
  Topics topics;
  OutcomeWaiters& waiters;
  const VerticalRegistry& verticals;
  // Shared across replicas through the store when Config::limits_shared(), else this process's:
  RateLimiter& limiter;     // keys and campaigns
  RateLimiter& ip_limiter;  // failed authentications per address, test pings
  const Clock& clock;
  Management& management;
  CampaignCache& campaigns;
  ApiKeyCache& api_keys;
  BuyerVisibilityCache& buyer_visibility;
  AuditLog& audit;              // failed authentications, refusals, keys made and revoked
  SignInLimits& logins;         // attempts at dashboard users' passwords
  std::function<bool()> ready;  // /readyz
  /// The key of buyers' opaque source codes (leadflow/visibility/visibility.hpp): the store's
  /// shared secret "visibility", the same in every replica.
  std::string visibility_secret;
  /// The operator's and buyers' suppression lists this process holds (docs/suppression.md); a
  /// lead on the operator's is refused at intake. None: no lists.
  const SuppressionLists* suppression = nullptr;
  /// The lists' records and entries, for their routes (/v1/suppression-lists); none: the routes
  /// are not registered.
  SuppressionStore* suppression_store = nullptr;
  /// The live feed (GET /v1/live); none: the route answers 503.
  LiveFeed* live = nullptr;
  /// Erasure of a lead's personal data (POST /v1/leads/{id}/erase); none: the route answers 503.
  ErasureStore* erasure = nullptr;
  /// Closes and statements (docs/statements.md); none: their routes answer 503.
  StatementStore* statements = nullptr;
  /// Sellers' postback endpoints and their delivery logs (docs/postbacks.md); none: 503.
  PostbackStore* postbacks = nullptr;
};

void install_common_handlers(Routes& routes, IngestContext& ctx);

/// Which listener the ops routes are for.
enum class OpsListener {
  kPublic,   // LEADFLOW_LISTEN, LEADFLOW_HTTP_LISTEN: /metrics needs an operator key
  kMetrics,  // LEADFLOW_METRICS_LISTEN: all open, for Prometheus and probes
};
/// The ops routes (leadflow/http/ops_routes.hpp) with the front's probes: the producer for
/// liveness; the store, the producer and the in-process workers for readiness. /healthz and
/// /readyz are open on every listener.
void register_ops_routes(Routes& routes, IngestContext& ctx, OpsListener listener);
/// Surface A. A request that did not come over TLS is refused unless a trusted proxy forwarded it.
void register_surface_a(Routes& routes, IngestContext& ctx);
void register_surface_b(Routes& routes, IngestContext& ctx);
/// The dashboard's sign-in (POST, GET, DELETE /v1/session) and the operator's user management
/// (/v1/users). Like Surface A, over HTTPS only (or from a trusted proxy that says it was).
void register_console(Routes& routes, IngestContext& ctx);
/// GET /v1/live: the reader's leads received and decided, as Server-Sent Events
/// (leadflow/api/live_feed.hpp). Over HTTPS only, like Surface A.
void register_live(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
