// GET /v1/live: decode, authorise, subscribe, and hand the stream to the server. The fan-out
// and its poller are LiveFeed's (leadflow/api/live_feed.hpp).
#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/live_feed.hpp"
#include "leadflow/http/stream.hpp"
#include "viewer.hpp"

namespace leadflow {

void register_live(Routes& routes, IngestContext& ctx) {
  routes.get("/v1/live", [&c = ctx](const http::Request& req, http::Response& res) {
    const auto key = authorise(c, req, res, kScopeLeadsRead);
    if (!key) return;  // 401, 403, 429 or 503 sent
    if (!req.params().empty()) {
      http::send_problem(res, 400, "GET /v1/live takes no query parameter");
      return;
    }
    if (!c.live) return send_problem(res, refusal_for(LiveRefused::kOff));
    const Viewer viewer = viewer_of(c, *key);
    // On the blocking pool: a resume may read the store.
    auto opened = c.live->subscribe(viewer, seller_labels(c, viewer), req.header("Last-Event-ID"));
    if (opened.refused == LiveSubscription::Refused::kFull)
      return send_problem(res, refusal_for(LiveRefused::kFull));
    if (!opened.body) return send_problem(res, refusal_for(LiveRefused::kUnavailable));
    res.status = 200;
    res.set_header("Content-Type", "text/event-stream; charset=utf-8");
    res.set_header("X-Accel-Buffering", "no");  // a proxy in front passes events at once
    res.stream = std::move(opened.body);
  });
}

}  // namespace leadflow
