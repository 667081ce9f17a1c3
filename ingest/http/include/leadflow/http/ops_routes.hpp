#pragma once
// The operations routes every leadflow process serves: GET /healthz, /readyz and /metrics.
// Written once here and registered by both leadflow-ingest (on each of its listeners) and
// leadflow-worker (on its ops port), so the two answer alike.
#include <functional>
#include <string>
#include <vector>

#include "leadflow/http/routes.hpp"

namespace leadflow {

/// One part of readiness as /readyz reports it: {"store": "ok"}, or the not-ready word.
struct ReadinessCheck {
  std::string name;                       // the body's member: "store", "queue", "workers"
  std::function<bool()> ready;            // asked on every /readyz, from a pool thread
  std::string not_ready = "unavailable";  // the member's value when not ready
};

/// What the ops routes ask the process. The callbacks must be safe to call from any thread.
struct OpsProbes {
  /// Liveness: true once only a restart cures the process (a producer's fatal Kafka error).
  /// /healthz then answers 503 {"queue": "the producer needs a restart", "status": "broken"}.
  std::function<bool()> broken;
  /// /readyz: 200 {"status": "ready", ...every check...} when all are ready, else 503
  /// "not_ready". Every check is asked each time, so the body names each one's state.
  std::vector<ReadinessCheck> readiness;
};

/// Registers GET /healthz, /readyz (JSON bodies, members in name order) and /metrics (the text
/// exposition of base's metrics registry). They run on the blocking pool: a readiness check may
/// ask a store.
void register_ops_routes(Routes& routes, OpsProbes probes);

}  // namespace leadflow
