#pragma once
#include <memory>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/config.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/reoffers.hpp"

namespace leadflow {

class SuppressionLists;

class HttpClient;
class BuyerDirectory;
class CampaignDirectory;
class Distributor;
class Worker;
class ReofferRunner;

/// The store's ports the distribution side holds (docs/store-ports.md): the workers record leads
/// and outcomes through `intake`, the re-offer runner claims and records second chances through
/// `reoffers`, the auction reserves caps and writes post intents through
/// `distribution`, and the buyer and campaign directories read `accounts`. One store in every
/// process today; each must outlive the pool.
struct WorkerPorts {
  IntakeStore& intake;
  DistributionStore& distribution;
  AccountsStore& accounts;
  ReofferStore& reoffers;  // the schedule of second chances (docs/reoffers.md)
};

/// The distribution side of one process: the outbound HTTP client, the buyer and campaign caches,
/// the distributor, and `count` Worker loops of the consumer group LEADFLOW_WORKER_GROUP. Built by
/// App (embedded: inside leadflow-ingest) and by WorkerProcess (scale-out). The store, queue,
/// registry and publisher must outlive it. start()/stop() from one thread.
class WorkerPool {
 public:
  /// `suppression`: the buyers' suppression lists the process holds (none: no lists).
  WorkerPool(const Config& config, WorkerPorts store, LeadQueue& queue,
             const VerticalRegistry& verticals, OutcomePublisher& publisher, const Clock& clock,
             const SuppressionLists* suppression = nullptr);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Starts `count` workers; `search_secret` keys the search keys of the leads they record
  /// (WorkerOptions::search_secret), read by the composition root from the store.
  void start(int count, const std::string& search_secret);
  /// Stops consuming; in-flight auctions finish, are recorded and committed.
  void stop();
  /// False while a worker is retrying a store it cannot reach.
  bool healthy() const;
  int size() const { return static_cast<int>(workers_.size()); }

 private:
  /// The distribution gauges read at each scrape (docs/operations.md, "Metrics"): auctions in
  /// flight, the oldest lead held, the consumer group's lag per partition, buyers' pause state.
  void collect(std::vector<prometheus::MetricFamily>& families);

  const Config& config_;
  WorkerPorts store_;
  LeadQueue& queue_;
  OutcomePublisher& publisher_;
  const Clock& clock_;
  std::unique_ptr<HttpClient> http_client_;
  std::unique_ptr<BuyerDirectory> buyers_;
  std::unique_ptr<CampaignDirectory> campaigns_;
  std::unique_ptr<Distributor> distributor_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<ReofferRunner> reoffers_;  // between start() and stop()
  std::unique_ptr<ScrapeHook> scrape_;       // between start() and stop()
};

}  // namespace leadflow
