#include "leadflow/runtime/worker_pool.hpp"

#include "leadflow/auction/distributor.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/queue/open_queue.hpp"
#include "leadflow/runtime/worker.hpp"

namespace leadflow {

WorkerPool::WorkerPool(const Config& config, Store& store, LeadQueue& queue,
                       const VerticalRegistry& verticals, OutcomePublisher& publisher,
                       const Clock& clock)
    : config_(config), store_(store), queue_(queue), publisher_(publisher), clock_(clock) {
  CurlClientOptions co;
  co.allow_private_addresses = config.allow_private_buyers;
  http_client_ = make_curl_client(co);
  buyers_ = std::make_unique<BuyerDirectory>(store, clock);
  campaigns_ = std::make_unique<CampaignDirectory>(store, clock);
  DistributorOptions dopt;
  dopt.auction_timeout = std::chrono::milliseconds(config.auction_timeout_ms);
  distributor_ = std::make_unique<Distributor>(store, *http_client_, *buyers_, *campaigns_,
                                               verticals, clock, dopt);
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::start(int count) {
  for (int i = 0; i < count; ++i) {
    WorkerOptions wo;
    wo.group = config_.worker_group;
    wo.topics = topics_for(config_);
    wo.concurrency = config_.worker_concurrency;
    workers_.push_back(
        std::make_unique<Worker>(queue_, store_, *distributor_, publisher_, clock_, wo));
    workers_.back()->start();
  }
}

void WorkerPool::stop() {
  for (auto& w : workers_) w->stop();
  workers_.clear();
}

bool WorkerPool::healthy() const {
  for (const auto& w : workers_)
    if (!w->healthy()) return false;
  return true;
}

}  // namespace leadflow
