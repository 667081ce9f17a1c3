#pragma once
// Private: the queue append of a lead post, shared by Surface A and Surface B.
#include <functional>
#include <optional>

#include "errors.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// The result of handing a lead to the queue and, optionally, waiting for its outcome.
struct AcceptResult {
  ProduceStatus produced = ProduceStatus::kUnavailable;
  std::optional<OutcomeMessage> outcome;
};
/// Durably enqueues the lead (answered only once durable) and waits up to `wait_ms` for it to be
/// decided. The lead's id and timestamps must be set.
AcceptResult accept_lead(IngestContext& ctx, const Lead& lead, int wait_ms);
/// accept_lead without waiting for an outcome or blocking: `done` runs once, on a queue thread,
/// when the lead is durable or refused.
void accept_lead_async(IngestContext& ctx, const Lead& lead,
                       std::function<void(ProduceStatus)> done);

class SuppressionLists;

/// The operator's suppression lists' word on a validated lead (docs/suppression.md): nullopt to
/// go on, else why it is refused (on a list: 422; the lists not read yet: 503). No lists held
/// (`lists` null): nullopt.
std::optional<Refusal> suppression_refusal(const SuppressionLists* lists, const Lead& lead);

}  // namespace leadflow
