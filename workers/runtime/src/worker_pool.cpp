#include "leadflow/runtime/worker_pool.hpp"

#include <algorithm>
#include <mutex>

#include "leadflow/auction/distributor.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/open_files.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/queue/open_queue.hpp"
#include "leadflow/runtime/worker.hpp"

namespace leadflow {

namespace {

// Descriptors kept for everything but buyer connections: the store, the queue's files, the
// metrics listener, logs, DNS.
constexpr long kReservedFiles = 1024;

// Buyer connections within the process's descriptor limit: past it a connection would fail with
// EMFILE and count against a buyer that did nothing wrong. In the embedded shape the front's
// listeners share the limit, each up to LEADFLOW_MAX_CONNECTIONS.
CurlClientOptions connection_limits(const Config& config) {
  CurlClientOptions co;
  co.max_connections = config.buyer_connections;
  co.max_host_connections = config.buyer_host_connections;
  const auto limit = static_cast<long>(open_file_limit());
  if (limit <= 0) return co;
  long front = 0;
  if (config.shape == Shape::kEmbedded) {
    front = static_cast<long>(config.max_connections) * (config.http_listen ? 2 : 1);
  }
  const long room = std::max(64L, limit - kReservedFiles - front);
  if (co.max_connections > room) {
    log(LogLevel::kWarn, "buyer_connections_limited",
        {{"configured", co.max_connections},
         {"allowed", room},
         {"open_file_limit", limit},
         {"hint", "raise the hard limit (ulimit -Hn) or lower LEADFLOW_MAX_CONNECTIONS"}});
    co.max_connections = room;
  }
  co.max_host_connections = std::min(co.max_host_connections, co.max_connections);
  return co;
}

}  // namespace

WorkerPool::WorkerPool(const Config& config, Store& store, LeadQueue& queue,
                       const VerticalRegistry& verticals, OutcomePublisher& publisher,
                       const Clock& clock)
    : config_(config), store_(store), queue_(queue), publisher_(publisher), clock_(clock) {
  CurlClientOptions co = connection_limits(config);
  co.allow_private_addresses = config.allow_private_buyers;
  co.ca_file = config.buyer_ca_file;
  if (config.buyer_http2 != "auto") co.http2 = config.buyer_http2 == "on";
  static std::once_flag said;
  std::call_once(said, [&] {
    // HTTP/2 goes through leadflow's own transport (nghttp2); libcurl speaks HTTP/1.1 only.
    log(LogLevel::kInfo, "buyer_protocols",
        {{"http2", co.http2},
         {"setting", config.buyer_http2},
         {"nghttp2", nghttp2_version()},
         {"libcurl", libcurl_version()}});
  });
  http_client_ = make_buyer_client(co);
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
