// The queue append of a lead post: encode the lead, make it durable, count how long that took
// and why it failed, and (for a waiting request) wait for its outcome.
#include "intake.hpp"

#include <chrono>

#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/suppression/suppression_lists.hpp"

namespace leadflow {

namespace {
void count_produce(IngestContext& ctx, SteadyTime started, ProduceStatus status) {
  auto& m = ingest_metrics();
  m.produce_seconds.Observe(
      std::chrono::duration<double>(ctx.clock.steady_now() - started).count());
  if (status != ProduceStatus::kOk) {
    m.produce_failures.Add({{"reason", std::string(to_string(status))}}).Increment();
    log(LogLevel::kWarn, "produce_failed", {{"reason", to_string(status)}});
  }
}
}  // namespace

void accept_lead_async(IngestContext& ctx, const Lead& lead,
                       std::function<void(ProduceStatus)> done) {
  const SteadyTime started = ctx.clock.steady_now();
  ctx.producer.produce_async(ctx.topics.leads, lead.id, encode_lead(lead),
                             [&ctx, started, done = std::move(done)](ProduceStatus status) {
                               count_produce(ctx, started, status);
                               done(status);
                             });
}

std::optional<Refusal> suppression_refusal(const SuppressionLists* lists, const Lead& lead) {
  if (lists == nullptr) return std::nullopt;
  const auto field = lists->operator_listed_field(lead.email, lead.phone);
  if (!field) return refusal_for(PersonRefused::kListsUnknown, "");
  if (field->empty()) return std::nullopt;
  return refusal_for(PersonRefused::kSuppressed, *field);
}

AcceptResult accept_lead(IngestContext& ctx, const Lead& lead, int wait_ms) {
  AcceptResult result;
  std::unique_ptr<OutcomeWaiters::Ticket> ticket;
  if (wait_ms > 0) ticket = ctx.waiters.expect(lead.id);  // before producing: no lost wake-up
  const std::string payload = encode_lead(lead);
  const SteadyTime started = ctx.clock.steady_now();
  // Waiting as long as the queue needs for a certain answer means a 503 is never given for a
  // record that is made durable afterwards.
  result.produced =
      ctx.producer.produce(ctx.topics.leads, lead.id, payload, ctx.producer.answer_within());
  count_produce(ctx, started, result.produced);
  if (result.produced != ProduceStatus::kOk) return result;
  if (ticket) result.outcome = ticket->wait_until(started + std::chrono::milliseconds(wait_ms));
  return result;
}

}  // namespace leadflow
