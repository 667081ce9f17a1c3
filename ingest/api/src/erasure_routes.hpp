#pragma once
// Private: the operator's erasure of a lead's personal data (POST /v1/leads/{id}/erase,
// docs/erasure.md).
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/erasure.hpp"
#include "leadflow/store/intake.hpp"

namespace leadflow {

/// What the erasure handler uses besides the key that authorised the request.
struct ErasurePorts {
  IntakeStore& intake;    // the lead, read before and after
  ErasureStore& erasure;  // the tombstone and its change-log entry
  const Clock& clock;
  QueueProducer* queue = nullptr;  // its records rewritten too (erase_queued); none: the store's
  Topics topics;
};

/// Erases the lead `lead_id` for `by` (an operator): 200 {"lead_id", "erased_at"}, or the
/// refusal of errors.hpp (404, 409 pending or erased already, 503). The request has no body.
void answer_erasure(const ErasurePorts& ports, const ChangeActor& by, std::string_view lead_id,
                    http::Response& res);

/// POST /v1/leads/{id}/erase: the operator only (an admin key or an operator's session).
void register_erasure(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
