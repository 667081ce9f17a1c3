#include "leadflow/worker_app/worker_process.hpp"

#include <sys/socket.h>

#include <thread>
#include <vector>

#include <httplib.h>

#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/outcomes/outcomes.hpp"
#include "leadflow/queue/open_queue.hpp"
#include "leadflow/base/socket_util.hpp"
#include "leadflow/store/store.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/runtime/worker_pool.hpp"

namespace leadflow {

struct WorkerProcess::Impl {
  Config config;
  const Clock& clock;
  VerticalRegistry verticals = VerticalRegistry::defaults();
  std::unique_ptr<Store> store;
  std::unique_ptr<LeadQueue> queue;
  std::unique_ptr<QueueOutcomePublisher> publisher;
  std::unique_ptr<WorkerPool> workers;
  httplib::Server ops;
  std::thread ops_thread;
  int ops_port = 0;
  bool started = false;

  Impl(Config c, const Clock& k) : config(std::move(c)), clock(k) {}
};

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
    error = "LEADFLOW_SHAPE: the embedded shape runs the workers inside leadflow-ingest "
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

  m.publisher = std::make_unique<QueueOutcomePublisher>(m.queue->producer(), topics.results);
  m.workers = std::make_unique<WorkerPool>(c, *m.store, *m.queue, m.verticals, *m.publisher, m.clock);
  m.workers->start(std::max(1, c.workers));

  m.ops.set_tcp_nodelay(true);
  m.ops.set_read_timeout(5, 0);
  m.ops.set_write_timeout(5, 0);
  m.ops.new_task_queue = [] { return new httplib::ThreadPool(4); };
  m.ops.Get("/healthz", [&m](const httplib::Request&, httplib::Response& res) {
    // A producer only a restart cures (a fatal Kafka error) fails liveness, not just readiness.
    const bool broken = m.queue->producer().broken();
    res.status = broken ? 503 : 200;
    res.set_content(broken ? R"({"status":"broken","queue":"the producer needs a restart"})"
                           : R"({"status":"ok"})",
                    "application/json");
  });
  m.ops.Get("/readyz", [&m](const httplib::Request&, httplib::Response& res) {
    const bool store_ok = m.store->healthy();
    const bool queue_ok = m.queue->healthy();
    const bool workers_ok = m.workers->healthy();
    const bool ok = store_ok && queue_ok && workers_ok;
    res.status = ok ? 200 : 503;
    res.set_content(std::string(R"({"status":")") + (ok ? "ready" : "not_ready") +
                        R"(","store":")" + (store_ok ? "ok" : "unavailable") +
                        R"(","queue":")" + (queue_ok ? "ok" : "unavailable") +
                        R"(","workers":")" + (workers_ok ? "ok" : "retrying") + R"("})",
                    "application/json");
  });
  m.ops.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_metrics(), "text/plain; version=0.0.4");
  });
  const ListenAddress at = c.metrics_listen.value_or(ListenAddress{"127.0.0.1", 9464});
  m.ops_port = at.port == 0 ? m.ops.bind_to_any_port(at.host)
                            : (m.ops.bind_to_port(at.host, at.port) ? at.port : -1);
  if (m.ops_port <= 0) {
    error = "LEADFLOW_METRICS_LISTEN: cannot listen on " + at.host + ":" + std::to_string(at.port);
    return false;
  }
  m.ops_thread = std::thread([&m] { m.ops.listen_after_bind(); });
  m.started = true;
  log(LogLevel::kInfo, "worker_process_started",
      {{"metrics_listen", at.host + ":" + std::to_string(m.ops_port)},
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
  if (m.queue) {
    m.queue->producer().flush(std::chrono::seconds(5));
    m.queue->shutdown();
  }
  m.ops.stop();
  if (m.ops_thread.joinable()) {
    shut_down_accepted(m.ops_port, SHUT_RD);
    m.ops_thread.join();
  }
  if (m.started) log(LogLevel::kInfo, "worker_process_stopped");
  m.started = false;
}

}  // namespace leadflow
