#include "leadflow/auction/worker_metrics.hpp"

#include <algorithm>

#include "leadflow/base/metrics.hpp"

namespace leadflow {

WorkerMetrics& worker_metrics() {
  static WorkerMetrics m = [] {
    auto& r = *metrics_registry();
    auto& decide = prometheus::BuildHistogram()
                       .Name("leadflow_lead_decide_seconds")
                       .Help("Time from a lead's consumption to its recorded outcome")
                       .Register(r);
    auto& redeliveries =
        prometheus::BuildCounter()
            .Name("leadflow_worker_redeliveries_total")
            .Help("Lead records delivered to a worker again (the lead was already stored)")
            .Register(r);
    auto& stale = prometheus::BuildCounter()
                      .Name("leadflow_worker_stale_records_total")
                      .Help("Records dropped unprocessed because a rebalance took their partition")
                      .Register(r);
    auto& recoveries = prometheus::BuildCounter()
                           .Name("leadflow_worker_post_recoveries_total")
                           .Help("Redelivered leads re-posted to the buyer of an unfinished post")
                           .Register(r);
    auto& store_errors = prometheus::BuildCounter()
                             .Name("leadflow_worker_store_errors_total")
                             .Help("Store calls of the worker that failed and will be retried")
                             .Register(r);
    auto& payout = prometheus::BuildCounter()
                       .Name("leadflow_payout_cents_total")
                       .Help("Sum of the sellers' payouts of recorded sales, in cents")
                       .Register(r);
    auto& margin = prometheus::BuildCounter()
                       .Name("leadflow_margin_cents_total")
                       .Help("Sum of sale prices minus the sellers' payouts, in cents")
                       .Register(r);
    auto& retried = prometheus::BuildCounter()
                        .Name("leadflow_worker_retried_total")
                        .Help("Leads whose auction failed and were sent to the retry topic")
                        .Register(r);
    auto& dead = prometheus::BuildCounter()
                     .Name("leadflow_worker_dead_lettered_total")
                     .Help(
                         "Leads recorded failed after their last attempt and copied to the "
                         "dead-letter topic")
                     .Register(r);
    auto& unknown = prometheus::BuildCounter()
                        .Name("leadflow_worker_post_outcome_unknown_total")
                        .Help(
                            "Auctions stopped because a buyer never answered a post (the lead goes "
                            "to the retry topic, not to another buyer)")
                        .Register(r);
    return WorkerMetrics{
        prometheus::BuildCounter()
            .Name("leadflow_leads_decided_total")
            .Help("Leads decided by the workers, by final status")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("leadflow_buyer_request_seconds")
            .Help("Latency of pings and posts to buyers")
            .Register(r),
        prometheus::BuildCounter()
            .Name("leadflow_buyer_requests_total")
            .Help("Pings and posts to buyers, by result")
            .Register(r),
        prometheus::BuildCounter()
            .Name("leadflow_buyer_pauses_total")
            .Help("Times a buyer was taken out of auctions for failing or timing out")
            .Register(r),
        prometheus::BuildCounter()
            .Name("leadflow_buyer_at_capacity_total")
            .Help("Auctions a buyer sat out because it had max_concurrency pings and posts in "
                  "flight from this worker process")
            .Register(r),
        decide.Add({}, latency_buckets()),
        redeliveries.Add({}),
        recoveries.Add({}),
        store_errors.Add({}),
        prometheus::BuildCounter()
            .Name("leadflow_revenue_cents_total")
            .Help("Sum of sale prices recorded, in cents, by buyer")
            .Register(r),
        payout.Add({}),
        margin.Add({}),
        stale.Add({}),
        retried.Add({}),
        dead.Add({}),
        unknown.Add({}),
        prometheus::BuildCounter()
            .Name("leadflow_worker_leads_refused_total")
            .Help("Leads the store refused to record for good (a constraint no retry gets past), "
                  "set aside on the dead-letter topic as posted")
            .Register(r)
            .Add({})};
  }();
  // Every final status's series at 0 from the start: a rate or ratio over the decisions (the
  // alerts' sold rate, the store errors' share) reads 0 rather than "no data" before the first
  // lead of that status.
  static const bool made = [] {
    for (DeliveryStatus s :
         {DeliveryStatus::kDelivered, DeliveryStatus::kUnsold, DeliveryStatus::kDuplicate,
          DeliveryStatus::kRejected, DeliveryStatus::kFailed})
      m.leads_decided.Add({{"status", std::string(to_string(s))}});
    return true;
  }();
  (void)made;
  return m;
}

void WorkerMetrics::decided(DeliveryStatus s) {
  leads_decided.Add({{"status", std::string(to_string(s))}}).Increment();
}

void WorkerMetrics::count_sale(const std::string& buyer_id, Cents price, Cents payout) {
  revenue_cents.Add({{"buyer_id", buyer_id}}).Increment(static_cast<double>(price));
  payout_cents.Increment(static_cast<double>(payout));
  // A payout is never more than its sale; a counter cannot go down, so a negative margin (a rule
  // that broke that promise) would be lost rather than counted.
  margin_cents.Increment(static_cast<double>(std::max<Cents>(0, price - payout)));
}

void WorkerMetrics::held_up(const std::string& buyer_id, const char* kind) {
  buyer_requests.Add({{"buyer_id", buyer_id}, {"kind", kind}, {"result", "held_up"}}).Increment();
}

void WorkerMetrics::observe_buyer(const std::string& buyer_id, const char* kind,
                                  const HttpResponse& r) {
  // Never sent, or timed out while this process was starved of CPU: no latency of the buyer's.
  if (r.not_sent || (r.timed_out && r.stalled_here)) return held_up(buyer_id, kind);
  const char* result = r.timed_out                         ? "timeout"
                       : r.status == 0                     ? "error"
                       : r.status >= 200 && r.status < 300 ? "ok"
                                                           : "http_error";
  buyer_requests.Add({{"buyer_id", buyer_id}, {"kind", kind}, {"result", result}}).Increment();
  buyer_latency.Add({{"buyer_id", buyer_id}, {"kind", kind}}, latency_buckets())
      .Observe(std::chrono::duration<double>(r.elapsed).count());
}

}  // namespace leadflow
