#include "leadflow/http/ops_routes.hpp"

#include <memory>

#include <nlohmann/json.hpp>

#include "leadflow/base/metrics.hpp"

namespace leadflow {
namespace {

// nlohmann's objects keep their members in name order, which is the order the front has always
// answered in.
void send_json(http::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

}  // namespace

void register_ops_routes(Routes& routes, OpsProbes probes) {
  auto shared = std::make_shared<const OpsProbes>(std::move(probes));
  routes.get("/healthz", [shared](const http::Request&, http::Response& res) {
    if (shared->broken && shared->broken()) {
      send_json(res, 503, {{"status", "broken"}, {"queue", "the producer needs a restart"}});
      return;
    }
    send_json(res, 200, {{"status", "ok"}});
  });
  routes.get("/readyz", [shared](const http::Request&, http::Response& res) {
    nlohmann::json body = nlohmann::json::object();
    bool all = true;
    for (const ReadinessCheck& check : shared->readiness) {
      const bool ok = check.ready();
      all = all && ok;
      body[check.name] = ok ? std::string("ok") : check.not_ready;
    }
    body["status"] = all ? "ready" : "not_ready";
    send_json(res, all ? 200 : 503, body);
  });
  routes.get("/metrics", [](const http::Request&, http::Response& res) {
    res.set_content(render_metrics(), "text/plain; version=0.0.4");
  });
}

}  // namespace leadflow
