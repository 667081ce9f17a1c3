// Handlers every listener has: request ids, metrics, error bodies, health and /metrics; the
// front's metric families.
#include <charconv>
#include <chrono>
#include <unordered_map>
#include <utility>

#include "auth.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/http/ops_routes.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow {

namespace {

// Every lead post's surface and result, each series made at 0 when the process starts: a rate
// or ratio over a counter with no series yet reads "no data" rather than 0, and an alert on
// `increase(...)` misses the first post of its kind.
constexpr std::pair<const char*, const char*> kLeadResults[] = {
    {"api", "accepted"},          {"api", "invalid"},         {"api", "suppressed"},
    {"api", "unavailable"},       {"campaign", "accepted"},   {"campaign", "invalid"},
    {"campaign", "rate_limited"}, {"campaign", "suppressed"}, {"campaign", "unauthorized"},
    {"campaign", "unavailable"}};

}  // namespace

IngestMetrics& ingest_metrics() {
  static IngestMetrics m = [] {
    auto& r = *metrics_registry();
    auto& produce = prometheus::BuildHistogram()
                        .Name("leadflow_queue_produce_seconds")
                        .Help("Time to make a lead durable in the queue")
                        .Register(r);
    return IngestMetrics{
        prometheus::BuildCounter()
            .Name("leadflow_http_requests_total")
            .Help("HTTP requests answered, by route, method and status")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("leadflow_http_request_seconds")
            .Help("HTTP request latency by route and method")
            .Register(r),
        prometheus::BuildCounter()
            .Name("leadflow_leads_received_total")
            .Help("Lead posts by surface and result (accepted, invalid, unauthorized, "
                  "rate_limited, unavailable, suppressed)")
            .Register(r),
        produce.Add({}, latency_buckets()),
        prometheus::BuildCounter()
            .Name("leadflow_queue_produce_failures_total")
            .Help("Leads the queue could not make durable, by reason")
            .Register(r)};
  }();
  static const bool made = [] {
    for (const auto& [surface, result] : kLeadResults)
      m.leads.Add({{"surface", surface}, {"result", result}});
    return true;
  }();
  (void)made;
  return m;
}

void IngestMetrics::lead(const char* surface, const char* result) {
  thread_local std::unordered_map<const void*,
                                  std::unordered_map<const void*, prometheus::Counter*>>
      resolved;
  auto& slot = resolved[surface][result];
  if (slot == nullptr) slot = &leads.Add({{"surface", surface}, {"result", result}});
  slot->Increment();
}

namespace {

bool sane_request_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (unsigned char c : id)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// Surface B's routes answer {"status", "message"} rather than problem+json.
bool surface_b_route(std::string_view route) {
  return route.rfind("/api/", 0) == 0 || route == "/{seller_campaign_key}";
}

// The server reads a multipart body for any route before the route runs, and answers 400 when
// it cannot. Only the legacy form takes forms: anywhere else the body's type is the fault, 415,
// whether or not the multipart body was readable.
bool multipart_on_a_json_route(const http::Request& req, const http::Response& res) {
  return res.status == 400 && !req.route().empty() && req.route() != "/{seller_campaign_key}" &&
         iequals(trim(req.header("Content-Type")).substr(0, 19), "multipart/form-data");
}

}  // namespace

void install_common_handlers(Routes& routes, IngestContext&) {
  routes.before = [](const http::Request& req, http::Response& res) {
    const std::string_view given = req.header("X-Request-Id");
    res.set_header("X-Request-Id",
                   sane_request_id(given) ? std::string(given) : new_id(kRequestPrefix));
    // Answers carry leads' personal data, keys shown once, and account records: no cache (a
    // browser's, a proxy's) may keep any of them.
    res.set_header("Cache-Control", "no-store");
  };
  routes.on_error = [](const http::Request& req, http::Response& res, std::string_view detail) {
    if (!res.has_header("X-Request-Id")) res.set_header("X-Request-Id", new_id(kRequestPrefix));
    res.set_header("Cache-Control", "no-store");
    if (multipart_on_a_json_route(req, res)) {
      if (surface_b_route(req.route())) {
        http::send_json(res, 415,
                        {{"status", "unsupported_media_type"},
                         {"message", "Content-Type must be application/json"}});
      } else {
        http::send_problem(res, 415, "Content-Type must be application/json");
      }
      return;
    }
    if (res.status == 400 && req.route() == "/{seller_campaign_key}") {
      http::send_json(res, 400,
                      {{"status", "invalid"},
                       {"errors",
                        {{{"field", "body"},
                          {"code", "invalid_format"},
                          {"message", "the multipart body could not be read"}}}}});
      return;
    }
    switch (res.status) {
      case 404:
        http::send_problem(res, 404, "no such resource");
        break;
      case 405:
        http::send_problem(res, 405, "method not allowed on this resource");
        break;
      case 413:
        http::send_problem(res, 413,
                           "the body is larger than the limit: 64 KiB (a suppression list's "
                           "entries: 1 GiB)");
        break;
      case 414:
        http::send_problem(res, 414, "the request target is too long");
        break;
      case 431:
        http::send_problem(res, 431,
                           detail.empty() ? "the request's header section is too large" : detail);
        break;
      case 400:
        http::send_problem(res, 400, detail.empty() ? "the request could not be read" : detail);
        break;
      default:
        http::send_problem(res, res.status,
                           detail.empty() ? http::reason_phrase(res.status) : detail);
        break;
    }
  };
  routes.on_exception = [](http::Response& res, const std::string&) {
    http::send_problem(res, 500, "internal error");
  };
  routes.after = [](const http::Request& req, const http::Response& res, double seconds) {
    // Family::Add builds a label map and takes the family's lock; on the hot path each thread
    // keeps the metrics it has already resolved.
    struct Resolved {
      prometheus::Counter* requests;
      prometheus::Histogram* latency;
    };
    thread_local std::unordered_map<std::string, Resolved> resolved;
    thread_local std::string key;  // reused: a known series costs no allocation
    // Methods are whatever a client sends: only the known ones become label values.
    static const char* kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"};
    const char* method = "other";
    for (const char* m : kMethods)
      if (req.method() == m) method = m;
    // The route's pattern is its label ("/v1/leads/{id}"): bounded, and never out of step with
    // the routes. A request no route took is "other".
    const std::string_view route = req.route().empty() ? std::string_view("other") : req.route();
    char status[8];
    const auto status_end = std::to_chars(status, status + sizeof status, res.status).ptr;
    key.assign(route).append(1, ' ').append(method).append(1, ' ').append(status, status_end);
    auto it = resolved.find(key);
    if (it == resolved.end()) {
      auto& m = ingest_metrics();
      const std::string route_label(route);
      Resolved r{&m.requests.Add({{"route", route_label},
                                  {"method", method},
                                  {"status", std::string(status, status_end)}}),
                 &m.latency.Add({{"route", route_label}, {"method", method}}, latency_buckets())};
      it = resolved.emplace(key, r).first;
    }
    it->second.requests->Increment();
    it->second.latency->Observe(seconds);
  };
}

void register_ops_routes(Routes& routes, IngestContext& ctx, OpsListener listener) {
  if (listener == OpsListener::kPublic) {
    // Registered first, so this /metrics wins over the open one of the ops routes: revenue and
    // per-buyer series are for the operator (an operator key with reports:read; a Prometheus
    // scrape sends it as a bearer token), or for the dedicated metrics listener.
    routes.get("/metrics", [&ctx](const http::Request& req, http::Response& res) {
      if (!authorise(ctx, req, res, kScopeReportsRead, true)) return;
      res.set_content(render_metrics(), "text/plain; version=0.0.4");
    });
  }
  OpsProbes probes;
  probes.broken = [&ctx] { return ctx.producer.broken(); };
  probes.readiness = {
      {"store", [&ctx] { return ctx.intake.healthy(); }},  // any port: they are one store
      {"queue", [&ctx] { return ctx.producer.healthy(); }},
      {"workers", [&ctx] { return !ctx.ready || ctx.ready(); }},
  };
  leadflow::register_ops_routes(routes, std::move(probes));
}

}  // namespace leadflow
