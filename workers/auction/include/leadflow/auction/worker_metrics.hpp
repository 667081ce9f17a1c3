#pragma once
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include "leadflow/delivery/http_client.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// The distribution side's metric families, registered once in the process registry.
struct WorkerMetrics {
  prometheus::Family<prometheus::Counter>& leads_decided;  // leadflow_leads_decided_total{status}
  prometheus::Family<prometheus::Histogram>&
      buyer_latency;  // leadflow_buyer_request_seconds{buyer_id,kind}
  prometheus::Family<prometheus::Counter>&
      buyer_requests;  // leadflow_buyer_requests_total{buyer_id,kind,result}
  prometheus::Family<prometheus::Counter>& buyer_pauses;  // leadflow_buyer_pauses_total{buyer_id}
  prometheus::Family<prometheus::Counter>&
      buyer_at_capacity;                  // leadflow_buyer_at_capacity_total{buyer_id}
  prometheus::Histogram& decide_seconds;  // leadflow_lead_decide_seconds
  prometheus::Counter& redeliveries;      // leadflow_worker_redeliveries_total
  prometheus::Counter& recoveries;        // leadflow_worker_post_recoveries_total
  prometheus::Counter& store_errors;      // leadflow_worker_store_errors_total
  prometheus::Family<prometheus::Counter>& revenue_cents;  // leadflow_revenue_cents_total{buyer_id}
  prometheus::Counter& payout_cents;                       // leadflow_payout_cents_total
  prometheus::Counter& margin_cents;                       // leadflow_margin_cents_total
  prometheus::Counter& stale_records;                      // leadflow_worker_stale_records_total
  prometheus::Counter& retried;                            // leadflow_worker_retried_total
  prometheus::Counter& dead_lettered;                      // leadflow_worker_dead_lettered_total
  prometheus::Counter& post_outcome_unknown;  // leadflow_worker_post_outcome_unknown_total
  prometheus::Counter& refused;               // leadflow_worker_leads_refused_total

  void decided(DeliveryStatus s);
  /// One recorded sale: what the buyer paid, what the seller earns and what is left for us.
  /// Called once per sale (a lead sold to several buyers counts each sale).
  void count_sale(const std::string& buyer_id, Cents price, Cents payout);
  /// One ping or post answered: its result and latency. One never sent, or timed out while this
  /// process was starved of CPU (HttpResponse::stalled_here), counts as held_up.
  void observe_buyer(const std::string& buyer_id, const char* kind, const HttpResponse& r);
  /// One ping or post held up in this process (never sent, or sent too late to be answered in
  /// time): result="held_up", which says nothing of the buyer.
  void held_up(const std::string& buyer_id, const char* kind);
};

WorkerMetrics& worker_metrics();

}  // namespace leadflow
