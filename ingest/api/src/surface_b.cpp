// Surface B: campaign-key lead posting under /api/v1, and the legacy form POST /{key}; the
// campaign's reads (stats, jobs, fields). The routes bind SurfaceBPorts to IngestContext and
// choose where each step runs: a lead post's checks on the event loop, anything that must wait
// on the blocking pool.
#include <atomic>
#include <memory>

#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/job_ids.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/reports/report.hpp"
#include "leadflow/visibility/projections.hpp"
#include "leadflow/visibility/verticals.hpp"
#include "surface_b.hpp"
#include "test_leads.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// On a blocking thread; `body` is what the event loop already read of the request, if anything.
void post_campaign_lead(IngestContext& ctx, const SurfaceBPorts& ports, const http::Request& req,
                        http::Response& res, const std::string* path_key, PostBody& body) {
  LeadIntake in;
  if (take_campaign_lead(ports, req, res, path_key, true, body, in) != Intake::kAccept) return;
  const AcceptResult r = accept_lead(ctx, in.lead, in.wait_ms);
  if (!in.lead.test)
    return answer_campaign_lead(res, in.lead.id, in.lead.seller_id, in.campaign_key, r);
  const json would_have = project_would_have(ports.vertical_buying(in.lead.vertical));
  answer_campaign_lead(res, in.lead.id, in.lead.seller_id, in.campaign_key, r, &would_have);
}

// Counts an invalid post for the campaign's stats on the blocking pool. A flood of invalid posts
// arrives faster than the store takes single counts: beyond 1,000 counts waiting, they are
// dropped (the stats undercount, the answers stay right) rather than queued without bound.
void count_invalid_later(IngestContext& ctx, Exchange& ex, std::string campaign_id,
                         std::int64_t at_ms) {
  static std::atomic<int> waiting{0};
  static prometheus::Counter& dropped =
      prometheus::BuildCounter()
          .Name("leadflow_invalid_counts_dropped_total")
          .Help("Invalid posts left out of campaign stats because too many counts were waiting")
          .Register(*metrics_registry())
          .Add({});
  if (waiting.fetch_add(1) >= 1000) {
    waiting.fetch_sub(1);
    dropped.Increment();
    return;
  }
  ex.run_detached([&ctx, id = std::move(campaign_id), at_ms] {
    ctx.reporting.count_invalid(id, at_ms);
    waiting.fetch_sub(1);
  });
}

// On the event loop: the checks run here when they need no I/O, and an async campaign's lead is
// answered by the queue's writer once durable. Anything that must wait moves to the pool, which
// holds the routes' ports while it runs.
void post_campaign_lead_inline(IngestContext& ctx,
                               const std::shared_ptr<const SurfaceBPorts>& shared_ports,
                               const std::shared_ptr<Exchange>& ex,
                               std::optional<std::string> path_key) {
  const SurfaceBPorts& ports = *shared_ports;
  LeadIntake in;
  PostBody body;
  switch (take_campaign_lead(ports, ex->req, ex->res, path_key ? &*path_key : nullptr, false, body,
                             in)) {
    case Intake::kMustBlock:
      ex->run_blocking([&ctx, shared_ports, path_key, body = std::move(body)](Exchange& e) mutable {
        post_campaign_lead(ctx, *shared_ports, e.req, e.res, path_key ? &*path_key : nullptr, body);
      });
      return;
    case Intake::kAnswered:
      if (!in.invalid_campaign.empty())
        count_invalid_later(ctx, *ex, std::move(in.invalid_campaign), in.invalid_at_ms);
      ex->done();
      return;
    case Intake::kAccept:
      break;
  }
  if (in.wait_ms > 0 || in.lead.test) {
    // A sync campaign waits for its auction: on the pool, bounded by the campaign's timeout. A
    // test lead's answer reads the store (would_have): on the pool too, sync or not.
    ex->run_blocking([&ctx, shared_ports, in = std::move(in)](Exchange& e) {
      const AcceptResult r = accept_lead(ctx, in.lead, in.wait_ms);
      if (!in.lead.test)
        return answer_campaign_lead(e.res, in.lead.id, in.lead.seller_id, in.campaign_key, r);
      const json would_have = project_would_have(shared_ports->vertical_buying(in.lead.vertical));
      answer_campaign_lead(e.res, in.lead.id, in.lead.seller_id, in.campaign_key, r, &would_have);
    });
    return;
  }
  accept_lead_async(ctx, in.lead,
                    [ex, id = in.lead.id, key = std::move(in.campaign_key)](ProduceStatus status) {
                      AcceptResult r;
                      r.produced = status;
                      // No outcome is awaited here: nothing of it for any seller to read.
                      answer_campaign_lead(ex->res, id, "", key, r);
                      ex->done();
                    });
}

std::int64_t period_start_ms(const std::string& period, std::int64_t now_ms) {
  if (period == "today" || period.empty()) return now_ms - now_ms % 86'400'000;  // UTC day
  if (period == "24h") return now_ms - 86'400'000LL;
  if (period == "7d") return now_ms - 7 * 86'400'000LL;
  if (period == "30d") return now_ms - 30 * 86'400'000LL;
  if (period == "all") return 0;
  return -1;
}

// The campaign of a key for a read (stats, jobs), asking the store when the cache cannot say;
// nothing when the key is not let in (`res` is the 401 or 429) or the store cannot say (503).
// An inactive campaign still reads its own stats and jobs.
std::optional<Campaign> reading_campaign(const SurfaceBPorts& ports, const std::string& key,
                                         std::string_view missing_kind, std::string_view message,
                                         const http::Request& req, http::Response& res) {
  bool unavailable = false;
  std::optional<Campaign> campaign;
  if (!key.empty() && key.size() <= 256) ports.find_campaign(key, true, campaign, unavailable);
  if (unavailable) {
    send_b_refusal(res, refusal_for(CampaignRefused::kReadUnavailable));
    return std::nullopt;
  }
  if (!campaign)
    ports.refuse_key(req, res, {key.empty() ? missing_kind : "unknown_key", key, {}, {}}, message,
                     true);
  return campaign;
}

}  // namespace

void answer_stats(const SurfaceBPorts& ports, const std::string& key, const http::Request& req,
                  http::Response& res) {
  const auto campaign = reading_campaign(ports, key, "unknown_key", kUnknownCampaignKey, req, res);
  if (!campaign) return;
  const std::string period = req.has_param("period") ? req.param("period") : "today";
  const std::int64_t now = ports.clock.now_ms();
  const std::int64_t since = period_start_ms(period, now);
  if (since < 0)
    return send_b_invalid(res, {{"period", "not_allowed", "must be today, 24h, 7d, 30d or all"}});
  // The reports' numbers (GET /v1/reports/performance and /revenue for this campaign), from the
  // same rollups, counted by quarter hour: a period starts at the quarter hour holding its
  // start. The rollups hold decided leads; the store counts those still queued.
  RollupQuery rq;
  rq.from_ms = since - since % kRollupBucketMs;
  rq.to_ms = now - now % kRollupBucketMs + kRollupBucketMs;
  rq.filters = {{ReportKey::kCampaign, campaign->id}};
  const auto perf = ports.reporting.performance_rollup(rq);
  const auto money = perf ? ports.reporting.revenue_rollup(rq) : std::nullopt;
  const auto queued = money ? ports.reporting.count_queued(campaign->id, rq.from_ms) : std::nullopt;
  if (!perf || !money || !queued)
    return send_b_refusal(res, refusal_for(CampaignRefused::kReadUnavailable));
  // Summed and rated as the reports sum and rate them (leadflow/reports/report.hpp).
  reports::PerformanceSums leads;
  for (const auto& cell : *perf) leads.add(cell);
  reports::RevenueSums sales;
  for (const auto& cell : *money) sales.add(cell);
  const auto& f = leads.f;
  http::send_json(res, 200,
                  {{"campaign_id", campaign->id},
                   {"period", period},
                   {"from", format_rfc3339_ms(rq.from_ms)},
                   {"received", f[kLeads] + *queued},
                   {"sold", f[kSold]},
                   {"unsold", f[kUnsold]},
                   {"duplicates", f[kDuplicates]},
                   {"invalid", f[kInvalid]},
                   {"queued", *queued},
                   {"errors", f[kFailed]},
                   {"acceptance_rate", leads.acceptance_rate(true).value_or(0.0)},
                   {"payout", cents_to_decimal(sales.net_payout())},
                   {"currency", "USD"}});
}

// A campaign learns nothing of ids that are not its own: another campaign's lead (queued or
// decided), an id never issued and anything malformed get one answer, 404 "no such job". Its own
// job is "queued" until decided: from the store once a worker has recorded it, and before that
// from the job id's tag, which only this campaign's key can make (job_ids.hpp).
void answer_job(const SurfaceBPorts& ports, const std::string& job_id, const http::Request& req,
                http::Response& res) {
  const std::string key(req.header("X-Campaign-Key"));
  const auto campaign = reading_campaign(
      ports, key, "missing_key", "X-Campaign-Key missing, unrecognised or inactive", req, res);
  if (!campaign) return;
  const JobRef job = parse_job_id(job_id, key);
  if (job.lead_id.empty()) return send_b_refusal(res, refusal_for(CampaignRefused::kNoSuchJob));
  const auto found = ports.intake.get_lead(job.lead_id);
  // A lead the store could not read is not "queued": that would be an answer.
  if (found.status == StoreStatus::kUnavailable)
    return send_b_refusal(res, refusal_for(CampaignRefused::kReadUnavailable));
  const auto& record = found.value;
  if (record && record->lead.campaign_id == campaign->id) {
    const auto& d = record->distribution;
    json body = d.status == DeliveryStatus::kPending
                    ? json{{"status", "queued"}, {"job_id", job_id}}
                    : campaign_outcome_body({job.lead_id, d.status, d.buyer_id, d.price, d.payout},
                                            record->lead.seller_id);
    // A test lead's poll says what it would have come to, as its post's answer did.
    if (record->lead.test) {
      body["test"] = true;
      body["would_have"] = project_would_have(ports.vertical_buying(record->lead.vertical));
    }
    return http::send_json(res, 200, body);
  }
  // Not stored under this campaign. Issued to this key: accepted and not picked up by a worker
  // yet (for a day after the id was made). A tag that checks but whose lead the store holds
  // under another campaign can only be one this key's holder made up: answered the same, so it
  // says nothing of that lead.
  const std::int64_t made = id_time_ms(job.lead_id, kLeadPrefix);
  if (job.issued_to_key && made > 0 && ports.clock.now_ms() - made < 24 * 3'600'000LL)
    return http::send_json(res, 200, {{"status", "queued"}, {"job_id", job_id}});
  send_b_refusal(res, refusal_for(CampaignRefused::kNoSuchJob));
}

void answer_fields(const SurfaceBPorts& ports, std::string_view vertical, http::Response& res) {
  const Vertical* v = ports.verticals.find(std::string(vertical));
  if (!v) return send_b_refusal(res, refusal_for(CampaignRefused::kUnknownVertical));
  // The re-offer policy in force: the operator's where one is set, else the configured one.
  const auto set = ports.reoffers_set();
  if (!set) return send_b_refusal(res, refusal_for(CampaignRefused::kReadUnavailable));
  // Open to anyone (sellers' developers): what any seller reads, never how buyers buy.
  http::send_json(res, 200,
                  public_vertical(ports.verticals.to_json(*v, vertical_setting(*set, v->name))));
}

void register_surface_b(Routes& routes, IngestContext& ctx) {
  auto& c = ctx;
  // Bound once, for every request of these routes: a lead post builds none of it.
  const auto ports = std::make_shared<const SurfaceBPorts>(SurfaceBPorts{
      c.intake, c.reporting, c.verticals, c.clock, c.limiter,
      [&c](const std::string& key, bool may_block, std::optional<Campaign>& out,
           bool& unavailable) {
        if (!may_block) return c.campaigns.find_cached(key, out);
        out = c.campaigns.find_by_key(key, unavailable);
        return true;
      },
      [&c](const http::Request& req, http::Response& res, const FailedCampaignAuth& failed,
           std::string_view message, bool may_block) {
        return answer_failed_campaign_auth(c, req, res, failed, message, may_block);
      },
      [&c](const http::Request& req, const Campaign& campaign) {
        audit_rate_limited(c, req, "campaign", "campaign", "", campaign.id, campaign.seller_id);
      },
      [&c](std::string_view vertical) { return vertical_has_active_buyers(c.accounts, vertical); },
      [&c] { return c.accounts.list_vertical_reoffers(); }, c.suppression});

  routes.post_inline("/api/v1/lead", [&c, ports](const std::shared_ptr<Exchange>& ex) {
    post_campaign_lead_inline(c, ports, ex, std::nullopt);
  });
  routes.get("/api/v1/stats/{key}", [ports](const http::Request& q, http::Response& r) {
    answer_stats(*ports, std::string(q.match(1)), q, r);
  });
  routes.get("/api/v1/jobs/{id}", [ports](const http::Request& q, http::Response& r) {
    answer_job(*ports, std::string(q.match(1)), q, r);
  });
  routes.get("/api/v1/fields/{vertical}", [ports](const http::Request& q, http::Response& r) {
    answer_fields(*ports, q.match(1), r);
  });
  // The legacy form: POST /{seller_campaign_key}. Registered last so every named route wins.
  routes.post_inline("/{seller_campaign_key}", [&c, ports](const std::shared_ptr<Exchange>& ex) {
    post_campaign_lead_inline(c, ports, ex, std::string(ex->req.match(1)));
  });
}

}  // namespace leadflow
