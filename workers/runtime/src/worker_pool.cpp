#include "leadflow/runtime/worker_pool.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

#include "leadflow/auction/distributor.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/open_files.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/queue/open_queue.hpp"
#include "leadflow/runtime/reoffer_runner.hpp"
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

WorkerPool::WorkerPool(const Config& config, WorkerPorts store, LeadQueue& queue,
                       const VerticalRegistry& verticals, OutcomePublisher& publisher,
                       const Clock& clock, const SuppressionLists* suppression)
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
  buyers_ = std::make_unique<BuyerDirectory>(store.accounts, clock);
  campaigns_ = std::make_unique<CampaignDirectory>(store.accounts, clock);
  DistributorOptions dopt;
  dopt.auction_timeout = std::chrono::milliseconds(config.auction_timeout_ms);
  dopt.suppression = suppression;
  distributor_ = std::make_unique<Distributor>(store.distribution, *http_client_, *buyers_,
                                               *campaigns_, verticals, clock, dopt);
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::start(int count, const std::string& search_secret) {
  for (int i = 0; i < count; ++i) {
    WorkerOptions wo;
    wo.search_secret = search_secret;
    wo.group = config_.worker_group;
    wo.topics = topics_for(config_);
    wo.concurrency = config_.worker_concurrency;
    workers_.push_back(
        std::make_unique<Worker>(queue_, store_.intake, *distributor_, publisher_, clock_, wo));
    workers_.back()->start();
  }
  // Second chances run in the capacity live leads leave: none is claimed while a worker holds
  // a lead it has not started (its auctions are at their concurrency).
  ReofferRunnerOptions ro;
  ro.concurrency = count > 0 ? config_.reoffer_concurrency : 0;
  ro.lease = std::chrono::milliseconds(3 * config_.auction_timeout_ms);  // past a re-offer's end
  reoffers_ = std::make_unique<ReofferRunner>(
      store_.reoffers, store_.intake, *distributor_, clock_,
      [this] {
        for (const auto& w : workers_)
          if (w->leads_waiting()) return true;
        return false;
      },
      ro);
  reoffers_->start();
  scrape_ = std::make_unique<ScrapeHook>(
      [this](std::vector<prometheus::MetricFamily>& families) { collect(families); });
}

void WorkerPool::stop() {
  scrape_.reset();                   // waits for a scrape reading the workers
  if (reoffers_) reoffers_->stop();  // before the workers it asks
  reoffers_.reset();
  for (auto& w : workers_) w->stop();
  workers_.clear();
}

void WorkerPool::collect(std::vector<prometheus::MetricFamily>& families) {
  int running = 0, held = 0, window = 0;
  std::optional<std::int64_t> oldest;
  std::vector<GaugeSample> end, committed, lag;
  for (const auto& w : workers_) {
    running += w->running();
    window += w->window();
    held += w->held();
    if (const auto ms = w->oldest_held_received_ms(); ms && (!oldest || *ms < *oldest)) oldest = ms;
    for (const PartitionLag& p : w->lag()) {
      const GaugeSample::Labels labels = {{"topic", p.topic},
                                          {"partition", std::to_string(p.partition)}};
      end.push_back({labels, static_cast<double>(p.end)});
      committed.push_back({labels, static_cast<double>(p.committed)});
      lag.push_back({labels, static_cast<double>(p.lag())});
    }
  }
  families.push_back(gauge_family("leadflow_auctions_in_flight",
                                  "Auctions running now in this process",
                                  static_cast<double>(running)));
  families.push_back(gauge_family(
      "leadflow_worker_auction_window",
      "Auctions this process lets run at once now: grown while they finish in time, halved when "
      "a ping is held up in the process",
      static_cast<double>(window)));
  families.push_back(gauge_family(
      "leadflow_worker_leads_in_flight",
      "Records this process's worker loops hold: auctions, read-ahead, leads being recorded",
      static_cast<double>(held)));
  families.push_back(gauge_family("leadflow_reoffers_in_flight",
                                  "Re-offers of unsold leads running now in this process",
                                  reoffers_ ? static_cast<double>(reoffers_->running()) : 0.0));
  // The whole schedule's backlog, as the store holds it (every process says the same); left out
  // while the store cannot answer.
  const std::int64_t now = clock_.now_ms();
  if (const auto scheduled = store_.reoffers.count_reoffers(now, false))
    families.push_back(gauge_family("leadflow_reoffers_scheduled",
                                    "Re-offers of unsold leads scheduled, due or not, in the store",
                                    static_cast<double>(*scheduled)));
  if (const auto due = store_.reoffers.count_reoffers(now, true))
    families.push_back(gauge_family("leadflow_reoffers_due",
                                    "Re-offers of unsold leads due now and not yet run",
                                    static_cast<double>(*due)));
  const double age_ms =
      oldest ? static_cast<double>(std::max<std::int64_t>(0, clock_.now_ms() - *oldest)) : 0.0;
  families.push_back(gauge_family(
      "leadflow_oldest_lead_age_seconds",
      "Age (since the ingest accepted it) of the oldest lead this process took from the queue and "
      "has not finished; 0 when it holds none",
      age_ms / 1000.0));
  families.push_back(gauge_family("leadflow_queue_end_offset",
                                  "Offset the next record produced to the partition will get",
                                  end));
  families.push_back(gauge_family(
      "leadflow_queue_committed_offset",
      "The worker group's committed offset (where a restart resumes) on the partitions this "
      "process owns",
      committed));
  families.push_back(gauge_family(
      "leadflow_queue_consumer_lag",
      "Records of the partition the worker group has not finished (end minus committed offset)",
      lag));
  std::vector<GaugeSample> paused, in_flight, limits;
  const auto out = distributor_->in_flight_now(std::chrono::milliseconds(200));
  static const std::vector<Buyer> kNone;
  const auto buyers = buyers_->snapshot();  // nullptr: never listed yet
  for (const Buyer& b : buyers ? *buyers : kNone) {
    if (!b.active) continue;
    const double value = distributor_->buyer_paused(b.id) ? 1 : 0;
    for (const auto& v : b.verticals)
      paused.push_back({{{"buyer_id", b.id}, {"vertical", v}}, value});
    const auto it = out.find(b.id);
    in_flight.push_back({{{"buyer_id", b.id}}, it == out.end() ? 0.0 : it->second});
    if (b.max_concurrency > 0)
      limits.push_back({{{"buyer_id", b.id}}, static_cast<double>(b.max_concurrency)});
  }
  families.push_back(gauge_family(
      "leadflow_buyer_paused",
      "1 while this process keeps the active buyer out of auctions for failing, else 0; one "
      "series per vertical the buyer buys",
      paused));
  // max_concurrency is counted per process: summed over the workers, these two show how many
  // requests a buyer really has in flight against its limit (docs/operations.md).
  families.push_back(gauge_family(
      "leadflow_buyer_in_flight",
      "Pings and posts this process has in flight to the active buyer now", in_flight));
  families.push_back(gauge_family(
      "leadflow_buyer_max_concurrency",
      "The active buyer's max_concurrency, which each worker process applies on its own; only "
      "buyers with a limit",
      limits));
}

bool WorkerPool::healthy() const {
  for (const auto& w : workers_)
    if (!w->healthy()) return false;
  return true;
}

}  // namespace leadflow
