#include "leadflow/ingest_app/ingest_app.hpp"

#include "buyer_pinger.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "leadflow/api/api.hpp"
#include "leadflow/api/buyer_test_ping.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/live_feed.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/priority.hpp"
#include "leadflow/erasure/retention.hpp"
#include "leadflow/http/server.hpp"
#include "leadflow/http/tls_cert.hpp"
#include "leadflow/ingest_app/dashboard.hpp"
#include "leadflow/limits/rate_bucket_sweeper.hpp"
#include "leadflow/postback_sender/postback_sender.hpp"
#include "leadflow/queue/backlog_monitor.hpp"
#include "leadflow/queue/open_queue.hpp"
#include "leadflow/runtime/health_metrics.hpp"
#include "leadflow/runtime/worker_pool.hpp"
#include "leadflow/store/store.hpp"
#include "leadflow/suppression/suppression_lists.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

namespace {

// One listener: its routes, then the server. `port` is set once listening.
struct Listener {
  std::unique_ptr<HttpServer> server;
  int port = 0;

  bool start(Routes routes, const ListenAddress& at, const Config& c, int blocking_threads,
             const std::string& cert, const std::string& key, std::string& error,
             const char* setting) {
    HttpServerOptions o;
    o.host = at.host;
    o.port = at.port;
    o.loops = c.http_loops;
    o.blocking_threads = blocking_threads;
    o.tls_cert = cert;
    o.tls_key = key;
    o.name = setting;
    o.header_timeout = std::chrono::milliseconds(c.header_timeout_ms);
    o.body_timeout = std::chrono::milliseconds(c.body_timeout_ms);
    o.body_min_rate = static_cast<std::size_t>(c.body_min_rate);
    o.tls_handshake_timeout = std::chrono::milliseconds(c.tls_handshake_timeout_ms);
    o.max_connections = static_cast<std::size_t>(c.max_connections);
    o.max_connections_per_address = static_cast<std::size_t>(c.max_connections_per_address);
    // A trusted proxy's connections carry many clients: it is capped where it stands.
    if (!c.trusted_proxies.empty()) {
      o.uncapped = [proxies = c.trusted_proxies](std::string_view address) {
        return http::address_in_cidrs(std::string(address), proxies);
      };
    }
    server = std::make_unique<HttpServer>(std::move(routes), std::move(o));
    if (!server->start(error)) {
      const bool certificate = error.rfind("cannot load", 0) == 0;
      error = std::string(certificate ? "LEADFLOW_TLS_CERT" : setting) + ": " + error;
      server.reset();
      return false;
    }
    port = server->port();
    return true;
  }
  void stop() {
    if (server) server->stop();
  }
};

// LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL and _PASSWORD_FILE: the first operator user, made when the
// store has no user at all. Several processes starting at once make it once (the e-mail is
// unique); a restart finds users and does nothing.
bool ensure_bootstrap_operator(const Config& c, Management& management, std::string& error) {
  std::ifstream in(c.bootstrap_operator_password_file);
  std::string password;
  if (!in || !std::getline(in, password)) {
    error = "LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE: cannot read a password from " +
            c.bootstrap_operator_password_file;
    return false;
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  std::string why;
  switch (management.ensure_bootstrap_operator(c.bootstrap_operator_email, password, why)) {
    case Management::Bootstrap::kCreated:
      log(LogLevel::kInfo, "bootstrap_operator_created");
      return true;
    case Management::Bootstrap::kUsersExist:
      return true;
    case Management::Bootstrap::kInvalid:
      error = (why.rfind("the password", 0) == 0 ? "LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE: "
                                                 : "LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL: ") +
              why;
      return false;
    case Management::Bootstrap::kUnavailable:
      break;
  }
  error = "LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL: cannot store the first operator user";
  return false;
}

}  // namespace

struct App::Impl {
  Config config;
  const Clock& clock;
  VerticalRegistry verticals = VerticalRegistry::defaults();
  std::unique_ptr<Store> store;
  std::unique_ptr<LeadQueue> queue;
  OutcomeWaiters waiters;
  std::unique_ptr<LocalOutcomePublisher> publisher;
  std::unique_ptr<StoreWatch> outcomes;      // scale-out: outcomes announced through the store
  std::unique_ptr<ResultsListener> results;  // ... or read from the results topic
  std::unique_ptr<SuppressionLists> suppression;
  std::unique_ptr<SuppressionRefresh> suppression_refresh;  // before what reads the lists
  std::unique_ptr<WorkerPool> workers;
  std::unique_ptr<PostbackService> postbacks;  // beside the workers (docs/postbacks.md)
  std::unique_ptr<RateLimiter> limiter, ip_limiter;
  std::unique_ptr<Management> management;
  std::unique_ptr<CampaignCache> campaigns;
  std::unique_ptr<ApiKeyCache> api_keys;
  std::unique_ptr<BuyerVisibilityCache> buyer_visibility;
  std::unique_ptr<AuditLog> audit;
  std::unique_ptr<SignInLimits> logins;
  std::unique_ptr<BuyerPinger> pinger;  // POST /v1/buyers/{id}/test-ping
  std::unique_ptr<LiveFeed> live;       // GET /v1/live: one poller for every stream of the process
  std::unique_ptr<IngestContext> ctx;
  Listener tls, plain, metrics;
  std::unique_ptr<ScrapeHook> up;           // leadflow_store_up, leadflow_queue_up
  std::unique_ptr<BacklogMonitor> backlog;  // leadflow_queue_backlog
  // The retention pass (LEADFLOW_RETENTION_DAYS, docs/erasure.md); none while it is off.
  std::unique_ptr<RetentionPass> retention;
  // The clean-up of shared rate buckets (docs/limits.md); none while limits are per process.
  std::unique_ptr<RateBucketSweeper> bucket_sweeper;
  bool started = false;

  Impl(Config c, const Clock& k) : config(std::move(c)), clock(k) {}
};

App::App(Config config, const Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(config), clock)) {}
App::~App() { stop(); }

int App::tls_port() const { return impl_->tls.port; }
int App::http_port() const { return impl_->plain.port; }
int App::metrics_port() const { return impl_->metrics.port; }
Store& App::store() { return *impl_->store; }
Management& App::management() { return *impl_->management; }

bool App::start(std::string& error) {
  Impl& m = *impl_;
  const Config& c = m.config;
  LogLevel level;
  if (parse_log_level(c.log_level, level)) set_log_level(level);

  if (!c.verticals_file.empty()) {
    if (std::string why = m.verticals.load_file(c.verticals_file); !why.empty()) {
      error = "LEADFLOW_VERTICALS: " + why;
      return false;
    }
  }

  std::error_code ec;
  std::filesystem::create_directories(c.data_dir, ec);
  m.store = open_migrated_store(c.store_url, error);
  if (!m.store) return false;
  // The operator's and the buyers' suppression lists, read now and then every second
  // (docs/suppression.md): the front refuses a lead on the operator's, the auctions keep a lead
  // from a buyer whose list holds it.
  m.suppression = std::make_unique<SuppressionLists>(*m.store);
  m.suppression_refresh =
      std::make_unique<SuppressionRefresh>(*m.suppression, std::chrono::seconds(1));
  m.management = std::make_unique<Management>(*m.store, m.verticals, m.clock, *m.store);
  if (!c.bootstrap_key.empty() &&
      m.management->ensure_bootstrap_key(c.bootstrap_key) != StoreStatus::kOk) {
    error = "LEADFLOW_BOOTSTRAP_KEY: cannot store the bootstrap key";
    return false;
  }
  if (!c.bootstrap_operator_email.empty() && !ensure_bootstrap_operator(c, *m.management, error))
    return false;
  if (c.totp_key.empty())
    log(LogLevel::kWarn, "totp_secrets_plain",
        {{"detail",
          "LEADFLOW_TOTP_KEY_FILE is not set: dashboard users' two-factor secrets are stored "
          "unsealed (docs/two-factor.md)"}});

  // Made once for the installation by whichever process asks first, then read by every other:
  // it keys buyers' source codes and the search keys of leads.
  const auto secret = m.store->shared_secret(kVisibilitySecretName, new_visibility_secret());
  if (!secret) {
    error = "LEADFLOW_STORE: cannot read the visibility secret";
    return false;
  }

  m.queue = open_queue(c, error);
  if (!m.queue) return false;
  const Topics topics = topics_for(c);
  m.up = scrape_store_and_queue_up(*m.store, *m.queue);
  // The workers' backlog read from the queue's side: it shows with no worker running, which
  // the workers' own lag cannot (docs/operations.md#metrics). The embedded queue knows a group
  // from its first subscription: one made and closed here holds the leads for the workers from
  // the first, so leads posted before any worker loop ran (LEADFLOW_WORKERS=0) are counted.
  if (!c.kafka_queue()) m.queue->make_consumer(c.worker_group, {topics.leads, topics.retry});
  m.backlog = std::make_unique<BacklogMonitor>(
      *m.queue, m.clock,
      BacklogMonitor::Options{c.worker_group, c.kafka_queue() ? "broker" : "embedded",
                              std::chrono::milliseconds(c.backlog_interval_ms)});
  m.backlog->start();

  // Scale-out: the workers are leadflow-worker processes; outcomes come back announced through
  // the store, or on the results topic when the store cannot announce them.
  if (c.scale_out()) {
    m.outcomes = listen_for_outcomes(*m.store, *m.store, m.waiters);
    if (!m.outcomes) {
      auto tail = m.queue->make_tail_consumer({topics.results});
      if (!tail) {
        error = "LEADFLOW_QUEUE: cannot read the results topic " + topics.results;
        return false;
      }
      m.results = std::make_unique<ResultsListener>(std::move(tail), m.waiters);
    }
  } else {
    m.publisher = std::make_unique<LocalOutcomePublisher>(m.waiters);
    // The auctions run at a lower CPU priority than the front: when the cores are saturated,
    // sellers are acknowledged promptly and the auctions catch up from the durable queue. Every
    // worker thread (the consumers, the auction pool, the HTTP client's loop) is made from one
    // lowered thread, whose nice value they inherit.
    make_lowered(c.worker_nice, "worker", [&] {
      m.workers = std::make_unique<WorkerPool>(
          c, WorkerPorts{*m.store, *m.store, *m.store, *m.store}, *m.queue, m.verticals,
          *m.publisher, m.clock, m.suppression.get());
      m.workers->start(c.workers, *secret);
      // The postbacks go out from the process that runs the workers, on threads of their own,
      // lower still: they wait in the durable outbox and are retried for a day, so with the
      // cores saturated the decisions come first and the postbacks catch up. On a quiet 2-core
      // machine, with a third of 3 endpoints hanging, one worker decided 0.75-0.77 of its rate
      // without endpoints this way, 0.59-0.64 with the sender at the workers' own priority
      // (docs/benchmarks.md).
      make_lowered(c.worker_nice > 0 ? kPostbackNiceSteps : 0, "postback",
                   [&] { m.postbacks = std::make_unique<PostbackService>(c, *m.store, m.clock); });
    });
  }

  // Every limit counted in the store when several processes take requests (docs/limits.md).
  if (c.limits_shared()) {
    m.limiter = std::make_unique<SharedRateLimiter>(m.clock, *m.store);
    m.ip_limiter = std::make_unique<SharedRateLimiter>(m.clock, *m.store);
    m.logins = std::make_unique<SignInLimits>(m.clock, *m.store);
    m.bucket_sweeper =
        std::make_unique<RateBucketSweeper>(*m.store, m.clock, RateBucketSweeper::Options{});
    m.bucket_sweeper->start();
  } else {
    m.limiter = std::make_unique<RateLimiter>(m.clock);
    m.ip_limiter = std::make_unique<RateLimiter>(m.clock);
    m.logins = std::make_unique<SignInLimits>(m.clock);
  }
  m.campaigns = std::make_unique<CampaignCache>(*m.store, m.clock);
  m.api_keys = std::make_unique<ApiKeyCache>(*m.store, m.clock);
  m.buyer_visibility = std::make_unique<BuyerVisibilityCache>(*m.store, m.clock);
  m.audit = std::make_unique<AuditLog>(m.clock);
  m.pinger = make_worker_protocol_pinger(c);
  m.ctx = std::make_unique<IngestContext>(IngestContext{
      c,
      // intake, accounts, sign_in, money, reporting, distribution, changes:
      *m.store, *m.store, *m.store, *m.store, *m.store, *m.store, *m.store, m.queue->producer(),
      topics, m.waiters, m.verticals, *m.limiter, *m.ip_limiter, m.clock, *m.management,
      *m.campaigns, *m.api_keys, *m.buyer_visibility, *m.audit, *m.logins,
      // The way to the workers and back: the queue, in-process workers, and
      // (scale-out) the watch that hears their outcomes.
      [&m] {
        return m.queue->healthy() && (!m.workers || m.workers->healthy()) &&
               (!m.outcomes || m.outcomes->listening());
      },
      /*visibility_secret=*/{}});

  m.ctx->visibility_secret = *secret;
  m.ctx->suppression = m.suppression.get();
  m.ctx->suppression_store = m.store.get();
  m.ctx->erasure = m.store.get();
  if (c.retention_days > 0) {
    // A pass at start and then every hour, each a lead per transaction (docs/erasure.md).
    RetentionPass::Options ro{c.retention_days, 500, &m.queue->producer(), topics};
    m.retention = std::make_unique<RetentionPass>(*m.store, *m.store, m.clock, ro);
    m.retention->start(std::chrono::hours(1));
  }
  m.ctx->statements = m.store.get();
  m.ctx->postbacks = m.store.get();
  {
    LiveOptions lo;
    lo.max_connections = static_cast<std::size_t>(c.live_max_connections);
    lo.poll_interval = std::chrono::milliseconds(c.live_poll_ms);
    m.live = std::make_unique<LiveFeed>(*m.store, lo);
    m.live->start();
    m.ctx->live = m.live.get();
  }

  std::string cert = c.tls_cert, key = c.tls_key;
  if (cert.empty()) {
    cert = c.data_dir + "/tls/cert.pem";
    key = c.data_dir + "/tls/key.pem";
    if (std::string why = ensure_self_signed(cert, key); !why.empty()) {
      error = "LEADFLOW_TLS_CERT: " + why;
      return false;
    }
  }
  {
    Routes routes;
    install_common_handlers(routes, *m.ctx);
    register_ops_routes(routes, *m.ctx, OpsListener::kPublic);
    register_surface_a(routes, *m.ctx);
    register_buyer_test_ping(routes, *m.ctx, *m.pinger);
    register_surface_b(routes, *m.ctx);
    register_console(routes, *m.ctx);
    register_live(routes, *m.ctx);
    register_dashboard(routes);  // last: it takes every other GET path
    if (!m.tls.start(std::move(routes), c.listen, c, c.http_threads, cert, key, error,
                     "LEADFLOW_LISTEN"))
      return false;
  }
  if (c.http_listen) {
    Routes routes;
    install_common_handlers(routes, *m.ctx);
    register_ops_routes(routes, *m.ctx, OpsListener::kPublic);
    register_surface_a(routes, *m.ctx);  // answers 403 unless via a trusted proxy
    register_buyer_test_ping(routes, *m.ctx, *m.pinger);
    register_surface_b(routes, *m.ctx);
    register_console(routes, *m.ctx);  // answers 403 unless via a trusted proxy
    register_live(routes, *m.ctx);     // the same
    register_dashboard(routes);        // static files: no secret, and signs in over HTTPS only
    if (!m.plain.start(std::move(routes), *c.http_listen, c, c.http_threads, "", "", error,
                       "LEADFLOW_HTTP_LISTEN"))
      return false;
  }
  if (c.metrics_listen) {
    Routes routes;
    install_common_handlers(routes, *m.ctx);
    register_ops_routes(routes, *m.ctx, OpsListener::kMetrics);
    if (!m.metrics.start(std::move(routes), *c.metrics_listen, c, 2, "", "", error,
                         "LEADFLOW_METRICS_LISTEN"))
      return false;
  }
  m.started = true;
  log(LogLevel::kInfo, "started",
      {{"listen", c.listen.host + ":" + std::to_string(m.tls.port)},
       {"http_listen",
        c.http_listen ? c.http_listen->host + ":" + std::to_string(m.plain.port) : ""},
       {"store", c.store_url.rfind("sqlite:", 0) == 0 ? c.store_url : "postgresql"},
       {"queue", c.queue_url},
       {"workers", m.workers ? m.workers->size() : 0}});
  return true;
}

void App::stop() {
  Impl& m = *impl_;
  // Listeners first (in-flight requests finish, and may still wait for outcomes while the
  // workers run), then the workers (in-flight auctions finish and commit), then the queue.
  m.tls.stop();
  m.plain.stop();
  m.metrics.stop();
  if (m.live) m.live->stop();
  m.retention.reset();
  m.bucket_sweeper.reset();
  if (m.workers) m.workers->stop();
  m.postbacks.reset();
  m.up.reset();
  m.backlog.reset();
  m.outcomes.reset();
  if (m.results) m.results->stop();
  if (m.queue) {
    m.queue->producer().flush(std::chrono::seconds(5));
    m.queue->shutdown();
  }
  if (m.started) log(LogLevel::kInfo, "stopped");
  m.started = false;
}

}  // namespace leadflow
