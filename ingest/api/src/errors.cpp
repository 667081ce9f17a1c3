#include "errors.hpp"

#include "leadflow/api/http_util.hpp"

namespace leadflow {

Refusal refusal_for(ProduceStatus) {
  return {503, "unavailable", "the lead could not be queued durably; nothing was accepted, retry",
          true};
}

Refusal refusal_for(StoreStatus status, StoreStep step) {
  switch (status) {
    case StoreStatus::kConflict:
      return {409, "conflict", "conflicts with an existing record"};
    case StoreStatus::kNotFound:
      return {404, "not_found", "no such resource"};
    default:
      break;
  }
  switch (step) {
    case StoreStep::kWrite:
      return {503, "unavailable", "the store is unavailable; nothing was changed"};
    case StoreStep::kClaimLead:
      return {503, "unavailable", "the store is unavailable; nothing was accepted, retry"};
    case StoreStep::kCheckApiKey:
      return {503, "unavailable", "the service cannot check API keys right now; retry"};
    case StoreStep::kCheckCampaignKey:
      return {503, "unavailable", "the service cannot check campaign keys right now; retry"};
    case StoreStep::kRead:
      return {503, "unavailable", "the store cannot be reached; retry"};
  }
  return {503, "unavailable", "the store is unavailable"};
}

void send_problem(http::Response& res, const Refusal& refusal) {
  if (refusal.retry_after) res.set_header("Retry-After", "1");
  http::send_problem(res, refusal.status, refusal.detail);
}

}  // namespace leadflow
