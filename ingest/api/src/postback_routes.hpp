#pragma once
// Private: the postback endpoints' routes (docs/postbacks.md): a seller's key or session manages
// its own endpoints, the operator every seller's; each endpoint's delivery log and replay.
#include "leadflow/api/api.hpp"
#include "leadflow/http/routes.hpp"

namespace leadflow {

/// /v1/postback-endpoints[/{id}[/deliveries[/{event_id}[/attempts|/replay]]]]. Answers 503 when
/// the process was given no postbacks port.
void register_postback_endpoints(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
