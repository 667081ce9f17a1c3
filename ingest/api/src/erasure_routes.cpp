// POST /v1/leads/{id}/erase: a person's request to have their data erased, made by the operator.
// The rule (which fields, what tombstone) is leadflow/erasure/erasure.hpp's; the handler decodes,
// authorises, calls it and encodes.
#include "erasure_routes.hpp"

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/erasure/erasure.hpp"

namespace leadflow {

void answer_erasure(const ErasurePorts& ports, const ChangeActor& by, std::string_view lead_id,
                    http::Response& res) {
  const EraseStatus s =
      erase_lead(ports.intake, ports.erasure, ports.clock, lead_id, by, ErasureCause::kRequest);
  if (s != EraseStatus::kErased) return send_problem(res, refusal_for(s));
  // The queue's records of it (the embedded queue's segments); Kafka's age out with the topic.
  if (ports.queue != nullptr) erase_queued(*ports.queue, ports.topics, {std::string(lead_id)});
  // Read back: the time the store wrote is the one every view shows.
  const Lookup<LeadRecord> erased = ports.intake.get_lead(lead_id);
  const std::int64_t at_ms = erased.value ? erased.value->erased_at_ms : ports.clock.now_ms();
  http::send_json(res, 200,
                  {{"success", true},
                   {"data", {{"lead_id", lead_id}, {"erased_at", format_rfc3339_ms(at_ms)}}}});
}

void register_erasure(Routes& routes, IngestContext& ctx) {
  routes.post("/v1/leads/{id}/erase", [&ctx](const http::Request& req, http::Response& res) {
    const auto key = authorise(ctx, req, res, kScopeAdmin, /*operator_only=*/true);
    if (!key) return;  // 401, 403, 429 or 503 sent
    if (ctx.erasure == nullptr)
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite));
    answer_erasure(ErasurePorts{ctx.intake, *ctx.erasure, ctx.clock, &ctx.producer, ctx.topics},
                   actor_of(*key), req.match(1), res);
  });
}

}  // namespace leadflow
