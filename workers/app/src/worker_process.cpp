#include "leadflow/worker_app/worker_process.hpp"

#include <vector>

#include "leadflow/base/log.hpp"
#include "leadflow/base/priority.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/http/ops_routes.hpp"
#include "leadflow/http/server.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/postback_sender/postback_sender.hpp"
#include "leadflow/queue/open_queue.hpp"
#include "leadflow/runtime/health_metrics.hpp"
#include "leadflow/runtime/worker_pool.hpp"
#include "leadflow/store/store.hpp"
#include "leadflow/suppression/suppression_lists.hpp"

namespace leadflow {

struct WorkerProcess::Impl {
  Config config;
  const Clock& clock;
  VerticalRegistry verticals = VerticalRegistry::defaults();
  std::unique_ptr<Store> store;
  std::unique_ptr<LeadQueue> queue;
  std::unique_ptr<QueueOutcomePublisher> publisher;
  std::unique_ptr<SuppressionLists> suppression;
  std::unique_ptr<SuppressionRefresh> suppression_refresh;
  std::unique_ptr<WorkerPool> workers;
  std::unique_ptr<PostbackService> postbacks;  // beside the workers (docs/postbacks.md)
  std::unique_ptr<HttpServer> ops;             // /healthz, /readyz, /metrics
  std::unique_ptr<ScrapeHook> up;              // leadflow_store_up, leadflow_queue_up
  int ops_port = 0;
  bool started = false;

  Impl(Config c, const Clock& k) : config(std::move(c)), clock(k) {}
};

namespace {

ListenAddress ops_address(const Config& c) {
  return c.metrics_listen.value_or(ListenAddress{"127.0.0.1", 9464});
}

// The ops port: leadflow's own HTTP server, with the ops routes ingest serves too. A small one:
// probes and scrapes are a few requests a second.
std::unique_ptr<HttpServer> start_ops(const Config& c, LeadQueue& queue, Store& store,
                                      WorkerPool& workers, std::string& error) {
  OpsProbes probes;
  // A producer only a restart cures (a fatal Kafka error) fails liveness, not just readiness.
  probes.broken = [&queue] { return queue.producer().broken(); };
  probes.readiness = {
      {"store", [&store] { return store.healthy(); }},
      {"queue", [&queue] { return queue.healthy(); }},
      {"workers", [&workers] { return workers.healthy(); }, "retrying"},
  };
  Routes routes;
  register_ops_routes(routes, std::move(probes));
  const ListenAddress at = ops_address(c);
  HttpServerOptions o;
  o.host = at.host;
  o.port = at.port;
  o.loops = 1;
  o.blocking_threads = 4;
  o.idle_timeout = std::chrono::seconds(5);
  o.io_timeout = std::chrono::seconds(5);
  o.name = "LEADFLOW_METRICS_LISTEN";
  auto server = std::make_unique<HttpServer>(std::move(routes), std::move(o));
  if (!server->start(error)) {
    error = "LEADFLOW_METRICS_LISTEN: " + error;
    return nullptr;
  }
  return server;
}

}  // namespace

WorkerProcess::WorkerProcess(Config config, const Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(config), clock)) {}
WorkerProcess::~WorkerProcess() { stop(); }
int WorkerProcess::metrics_port() const { return impl_->ops_port; }

bool WorkerProcess::start(std::string& error) {
  Impl& m = *impl_;
  const Config& c = m.config;
  LogLevel level;
  if (parse_log_level(c.log_level, level)) set_log_level(level);
  if (!c.scale_out()) {
    error =
        "LEADFLOW_SHAPE: the embedded shape runs the workers inside leadflow-ingest "
        "(LEADFLOW_WORKERS); a separate worker process needs LEADFLOW_QUEUE=kafka://... "
        "(LEADFLOW_SHAPE=scale-out)";
    return false;
  }
  if (!c.verticals_file.empty()) {
    if (std::string why = m.verticals.load_file(c.verticals_file); !why.empty()) {
      error = "LEADFLOW_VERTICALS: " + why;
      return false;
    }
  }
  m.store = open_migrated_store(c.store_url, error);
  if (!m.store) return false;
  m.queue = open_queue(c, error);
  if (!m.queue) return false;
  const Topics topics = topics_for(c);
  m.up = scrape_store_and_queue_up(*m.store, *m.queue);

  m.publisher =
      std::make_unique<QueueOutcomePublisher>(m.queue->producer(), topics.results, *m.store);
  // The buyers' suppression lists, read now and then every second (docs/suppression.md).
  m.suppression = std::make_unique<SuppressionLists>(*m.store);
  m.suppression_refresh =
      std::make_unique<SuppressionRefresh>(*m.suppression, std::chrono::seconds(1));
  m.workers =
      std::make_unique<WorkerPool>(c, WorkerPorts{*m.store, *m.store, *m.store, *m.store}, *m.queue,
                                   m.verticals, *m.publisher, m.clock, m.suppression.get());
  // The installation's secret keys the search keys of the leads the workers record; the first
  // process to ask makes it.
  const auto secret = m.store->shared_secret(kInstallationSecretName, new_installation_secret());
  if (!secret) {
    error = "LEADFLOW_STORE: cannot read the installation secret";
    return false;
  }
  m.workers->start(std::max(1, c.workers), *secret);
  // The sender's threads run below the workers': a slow endpoint's events wait in the outbox
  // while the cores decide leads (docs/postbacks.md).
  make_lowered(kPostbackNiceSteps, "postback",
               [&] { m.postbacks = std::make_unique<PostbackService>(c, *m.store, m.clock); });

  m.ops = start_ops(c, *m.queue, *m.store, *m.workers, error);
  if (!m.ops) return false;
  m.ops_port = m.ops->port();
  m.started = true;
  log(LogLevel::kInfo, "worker_process_started",
      {{"metrics_listen", ops_address(c).host + ":" + std::to_string(m.ops_port)},
       {"group", c.worker_group},
       {"workers", m.workers->size()},
       {"concurrency", c.worker_concurrency}});
  return true;
}

void WorkerProcess::stop() {
  Impl& m = *impl_;
  // Workers first: in-flight auctions finish, are recorded and committed, and their outcome
  // notices are flushed to the results topic; the ops listener goes last so /readyz answers
  // until the end.
  if (m.workers) m.workers->stop();
  m.postbacks.reset();
  m.up.reset();
  if (m.queue) {
    m.queue->producer().flush(std::chrono::seconds(5));
    m.queue->shutdown();
  }
  if (m.ops) m.ops->stop();
  if (m.started) log(LogLevel::kInfo, "worker_process_stopped");
  m.started = false;
}

}  // namespace leadflow
