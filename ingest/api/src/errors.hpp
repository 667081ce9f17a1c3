#pragma once
// Private: how the front answers a domain result that is not a success, in one table, so that a
// result means the same status on every route. Surface A sends the answer as problem+json,
// Surface B as {"status": code, "message": detail}.
#include <string_view>

#include "leadflow/http/message.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// The answer to a failed step.
struct Refusal {
  int status = 503;
  std::string_view code;     // Surface B's status word: "unavailable", "conflict", "not_found"
  std::string_view detail;   // the problem's detail, Surface B's message
  bool retry_after = false;  // also sends "Retry-After: 1"
};

/// What the handler was doing when the store said no: the same outage reads differently to a
/// client whose write was not made than to one whose key could not be checked.
enum class StoreStep {
  kWrite,             // a management or buyer write: nothing was changed
  kClaimLead,         // the Idempotency-Key claim of a lead post: nothing was accepted
  kCheckApiKey,       // authenticating a Surface A key
  kCheckCampaignKey,  // authenticating a Surface B campaign key for a lead post
  kRead,              // reading for an answer (stats, jobs)
};

/// A lead the queue did not make durable (any status but kOk): 503, nothing was accepted.
Refusal refusal_for(ProduceStatus status);
/// A store step that did not succeed (any status but kOk): 409 on a conflict, 404 when not
/// found, 503 otherwise.
Refusal refusal_for(StoreStatus status, StoreStep step);

/// Surface A: the refusal as an RFC 9457 problem (and Retry-After when it says so).
void send_problem(http::Response& res, const Refusal& refusal);

}  // namespace leadflow
