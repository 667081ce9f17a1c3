// Surface B: campaign-key lead posting under /api/v1, and the legacy form POST /{key}.
#include <atomic>

#include "auth.hpp"
#include "errors.hpp"
#include "intake.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/job_ids.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/http/forms.hpp"
#include "leadflow/reports/report.hpp"
#include "leadflow/validation/validation.hpp"
#include "leadflow/visibility/projections.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

void send_invalid(http::Response& res, const FieldErrors& errors) {
  json list = json::array();
  for (const auto& e : errors)
    list.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  http::send_json(res, 400, {{"status", "invalid"}, {"errors", std::move(list)}});
}

void send_b_error(http::Response& res, int status, std::string_view code,
                  std::string_view message) {
  http::send_json(res, status, {{"status", code}, {"message", message}});
}

void send_b_error(http::Response& res, const Refusal& refusal) {
  if (refusal.retry_after) res.set_header("Retry-After", "1");
  send_b_error(res, refusal.status, refusal.code, refusal.detail);
}

// A campaign's answer: the outcome as its seller may see it (the visibility model): the price is
// the seller's payout, and no buyer is named.
json sold_body(const OutcomeMessage& m, const std::string& seller_id) {
  const Viewer seller = Viewer::seller(seller_id);
  Distribution d;
  d.status = m.status;
  d.buyer_id = m.buyer_id;
  d.price = m.price;
  d.payout = m.payout;
  const json seen = project_distribution(seller, d, seller_id);
  const auto payout = seen.find("payout");
  const bool sold = m.status == DeliveryStatus::kDelivered;
  const char* status = sold                                     ? "sold"
                       : m.status == DeliveryStatus::kDuplicate ? "duplicate"
                                                                : "unsold";
  return {{"status", status},
          {"sold", sold},
          {"price", sold && payout != seen.end() ? payout->get<double>() : 0.0},
          {"currency", "USD"},
          {"lead_id", m.lead_id}};
}

// The body of a Surface B post, in whatever form it came.
enum class BodyKind { kJson, kForm, kMultipart, kOther };

BodyKind body_kind(const http::Request& req) {
  if (http::is_json(req)) return BodyKind::kJson;
  const std::string mt = http::media_type(req);
  if (mt == "application/x-www-form-urlencoded") return BodyKind::kForm;
  if (mt == "multipart/form-data") return BodyKind::kMultipart;
  return BodyKind::kOther;
}

std::vector<std::pair<std::string, std::string>> form_fields(const http::Request& req,
                                                             BodyKind kind) {
  std::vector<std::pair<std::string, std::string>> out;
  if (kind == BodyKind::kForm) {
    http::parse_urlencoded(req.body(), out);
  } else {
    for (const http::FormPart& part : req.form_parts()) out.emplace_back(part.name, part.content);
  }
  return out;
}

// A Surface B post's body, read once and carried from the event loop to the pool when a check
// must wait there. A JSON body is parsed once: its key is read first and the lead validated
// against that key's campaign's vertical, known from the campaign cache. Only when the cache
// cannot say (at most once a second per key) does the loop leave the lead unvalidated, and the
// pool parses it again once the campaign is found.
struct PostBody {
  bool read = false;
  BodyKind kind = BodyKind::kOther;
  std::string key;                                          // SELLER_CAMPAIGN_KEY as sent, or ""
  std::vector<std::pair<std::string, std::string>> fields;  // a form post's fields
  ParsedLead parsed;                                        // a JSON post (see validated_for)
};

// The vertical a key's campaign has, for validation: "" for no usable campaign (the key check
// answers first anyway), nullopt when only the store can say and `may_block` is false.
std::optional<std::string> campaign_vertical(IngestContext& ctx, std::string_view sent,
                                             const std::string* path_key, bool may_block) {
  const std::string key = path_key ? *path_key : std::string(sent);
  if (key.empty() || key.size() > 256) return std::string();
  std::optional<Campaign> campaign;
  if (may_block) {
    bool unavailable = false;
    campaign = ctx.campaigns.find_by_key(key, unavailable);
  } else if (!ctx.campaigns.find_cached(key, campaign)) {
    return std::nullopt;
  }
  return campaign && campaign->active ? campaign->vertical : std::string();
}

void read_body(IngestContext& ctx, const http::Request& req, PostBody& body,
               const std::string* path_key, bool may_block) {
  body.read = true;
  if (body.kind == BodyKind::kJson) {
    body.parsed = parse_campaign_lead_json(req.body(), ctx.verticals, [&](std::string_view sent) {
      return campaign_vertical(ctx, sent, path_key, may_block);
    });
    // A body that is not a readable JSON object may still show its key to an on-demand scan;
    // the key is checked (401, 429) before the body's errors are reported.
    body.key = body.parsed.malformed ? peek_campaign_key(req.body()) : body.parsed.campaign_key;
  } else {
    body.fields = form_fields(req, body.kind);
    for (const auto& [k, v] : body.fields)
      if (k == "SELLER_CAMPAIGN_KEY") body.key = v;
  }
}

// The JSON lead validated against `vertical`: the one parse already made, unless the loop could
// not know the campaign then, or the campaign changed its vertical since. (An unreadable body
// reads the same for every vertical.)
ParsedLead& validated_for(IngestContext& ctx, const http::Request& req, PostBody& body,
                          std::string_view vertical) {
  if (!body.parsed.malformed && body.parsed.validated_for != vertical)
    body.parsed = parse_lead_json(req.body(), LeadShape::kCampaign, ctx.verticals, vertical);
  return body.parsed;
}

// Where a lead post stands after its checks.
enum class Intake {
  kAnswered,   // `res` is the answer (an error)
  kAccept,     // the lead passed: hand it to the queue
  kMustBlock,  // (may_block false) only the store can answer a check; nothing was spent
};

struct LeadIntake {
  Lead lead;
  int wait_ms = 0;
  std::string campaign_key;      // for the job id of a 202
  std::string invalid_campaign;  // (may_block false) count an invalid lead for this campaign
  std::int64_t invalid_at_ms = 0;
};

// The checks of /api/v1/lead (key in the body) and the legacy form (key in the path): media
// type, key, campaign, rate limit, validation. With may_block false it never waits on I/O (the
// event loop runs it) and says kMustBlock where it would, with `body` read for the retry.
Intake take_campaign_lead(IngestContext& ctx, const http::Request& req, http::Response& res,
                          const std::string* path_key, bool may_block, PostBody& body,
                          LeadIntake& out) {
  auto& metrics = ingest_metrics();
  if (!body.read) body.kind = body_kind(req);
  const BodyKind kind = body.kind;
  if (kind == BodyKind::kOther || (!path_key && kind != BodyKind::kJson)) {
    send_b_error(res, 415, "unsupported_media_type",
                 path_key ? "Content-Type must be application/x-www-form-urlencoded, "
                            "multipart/form-data or application/json"
                          : "Content-Type must be application/json");
    return Intake::kAnswered;
  }
  if (!body.read) read_body(ctx, req, body, path_key, may_block);
  std::string key = body.key;
  if (path_key) {
    if (!key.empty() && key != *path_key) {
      send_invalid(
          res, {{"SELLER_CAMPAIGN_KEY", "mismatch", "differs from the campaign key in the path"}});
      return Intake::kAnswered;
    }
    key = *path_key;
  }
  if (key.empty() && kind == BodyKind::kJson && !path_key) {
    // Either not JSON at all or no key: let validation name what is wrong.
    const ParsedLead& parsed = validated_for(ctx, req, body, "");
    metrics.lead("campaign", "invalid");
    send_invalid(res, parsed.errors.empty()
                          ? FieldErrors{{"SELLER_CAMPAIGN_KEY", "required", "is required"}}
                          : parsed.errors);
    return Intake::kAnswered;
  }
  bool unavailable = false;
  std::optional<Campaign> campaign;
  if (key.size() <= 256) {
    if (may_block)
      campaign = ctx.campaigns.find_by_key(key, unavailable);
    else if (!ctx.campaigns.find_cached(key, campaign))
      return Intake::kMustBlock;
  }
  if (unavailable) {
    metrics.lead("campaign", "unavailable");
    send_b_error(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kCheckCampaignKey));
    return Intake::kAnswered;
  }
  if (!campaign || !campaign->active) {
    FailedCampaignAuth failed{campaign ? "inactive_campaign" : "unknown_key", key, {}, {}};
    if (campaign) {
      failed.campaign_id = campaign->id;
      failed.seller_id = campaign->seller_id;
    }
    if (!answer_failed_campaign_auth(ctx, req, res, failed, "unrecognised or inactive campaign key",
                                     may_block))
      return Intake::kMustBlock;
    metrics.lead("campaign", "unauthorized");
    return Intake::kAnswered;
  }
  const std::optional<RateDecision> decided =
      may_block ? ctx.limiter.acquire(campaign->id, campaign->rate_limit_per_minute, 0)
                : ctx.limiter.try_acquire(campaign->id, campaign->rate_limit_per_minute, 0);
  if (!decided) return Intake::kMustBlock;
  const RateDecision& d = *decided;
  http::set_rate_headers(res, d);
  if (!d.allowed) {
    metrics.lead("campaign", "rate_limited");
    audit_rate_limited(ctx, req, "campaign", "campaign", "", campaign->id, campaign->seller_id);
    send_b_error(res, 429, "rate_limited", "the campaign's per-minute ceiling is reached");
    return Intake::kAnswered;
  }

  // No check waits from here on: what the body holds may be moved out of it.
  ParsedLead parsed;
  if (kind == BodyKind::kJson) {
    parsed = std::move(validated_for(ctx, req, body, campaign->vertical));
    if (path_key) {
      // The legacy form carries the key in its path; a JSON body there need not repeat it.
      std::erase_if(parsed.errors, [](const FieldError& e) {
        return e.field == "SELLER_CAMPAIGN_KEY" && e.code == "required";
      });
    }
  } else {
    std::vector<std::pair<std::string, std::string>> without_key;
    for (auto& f : body.fields)
      if (f.first != "SELLER_CAMPAIGN_KEY") without_key.push_back(std::move(f));
    without_key.emplace_back("SELLER_CAMPAIGN_KEY", key);
    parsed = parse_lead_form(without_key, ctx.verticals, campaign->vertical);
  }
  if (!parsed.errors.empty()) {
    metrics.lead("campaign", "invalid");
    if (may_block) {
      ctx.reporting.count_invalid(campaign->id, ctx.clock.now_ms());
    } else {
      out.invalid_campaign = campaign->id;
      out.invalid_at_ms = ctx.clock.now_ms();
    }
    send_invalid(res, parsed.errors);
    return Intake::kAnswered;
  }
  Lead& lead = parsed.lead;
  lead.received_at_ms = ctx.clock.now_ms();
  lead.id = new_id(kLeadPrefix, lead.received_at_ms);
  lead.seller_id = campaign->seller_id;
  lead.campaign_id = campaign->id;
  lead.surface = Surface::kCampaign;
  const bool async = campaign->async_mode || http::prefers_async(req);
  const int wait_ms = async ? 0 : campaign->sync_timeout_ms;
  lead.sync_wait_ms = wait_ms;
  out.wait_ms = wait_ms;
  out.lead = std::move(lead);
  out.campaign_key = std::move(key);
  return Intake::kAccept;
}

// The answer to a lead handed to the queue. A 202's job id is the lead id tagged for the key it
// was posted with (job_ids.hpp).
// `seller_id`: the campaign's seller, who reads the outcome.
void answer_accepted(http::Response& res, const std::string& lead_id, const std::string& seller_id,
                     const std::string& campaign_key, const AcceptResult& r) {
  auto& metrics = ingest_metrics();
  if (r.produced != ProduceStatus::kOk) {
    metrics.lead("campaign", "unavailable");
    send_b_error(res, refusal_for(r.produced));
    return;
  }
  metrics.lead("campaign", "accepted");
  if (!r.outcome) {
    // The hot path of an async campaign: ids are plain ASCII, so no JSON tree is needed.
    res.status = 202;
    res.set_content("{\"status\":\"queued\",\"job_id\":\"" + job_id_for(lead_id, campaign_key) +
                        "\",\"lead_id\":\"" + lead_id + "\"}",
                    "application/json");
    return;
  }
  http::send_json(res, 200, sold_body(*r.outcome, seller_id));
}

// On a blocking thread; `body` is what the event loop already read of the request, if anything.
void post_campaign_lead(IngestContext& ctx, const http::Request& req, http::Response& res,
                        const std::string* path_key, PostBody& body) {
  LeadIntake in;
  if (take_campaign_lead(ctx, req, res, path_key, true, body, in) != Intake::kAccept) return;
  answer_accepted(res, in.lead.id, in.lead.seller_id, in.campaign_key,
                  accept_lead(ctx, in.lead, in.wait_ms));
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
// answered by the queue's writer once durable. Anything that must wait moves to the pool.
void post_campaign_lead_inline(IngestContext& ctx, const std::shared_ptr<Exchange>& ex,
                               std::optional<std::string> path_key) {
  LeadIntake in;
  PostBody body;
  switch (
      take_campaign_lead(ctx, ex->req, ex->res, path_key ? &*path_key : nullptr, false, body, in)) {
    case Intake::kMustBlock:
      ex->run_blocking([&ctx, path_key, body = std::move(body)](Exchange& e) mutable {
        post_campaign_lead(ctx, e.req, e.res, path_key ? &*path_key : nullptr, body);
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
  if (in.wait_ms > 0) {
    // A sync campaign waits for its auction: on the pool, bounded by the campaign's timeout.
    ex->run_blocking([&ctx, in = std::move(in)](Exchange& e) {
      answer_accepted(e.res, in.lead.id, in.lead.seller_id, in.campaign_key,
                      accept_lead(ctx, in.lead, in.wait_ms));
    });
    return;
  }
  accept_lead_async(ctx, in.lead,
                    [ex, id = in.lead.id, key = std::move(in.campaign_key)](ProduceStatus status) {
                      AcceptResult r;
                      r.produced = status;
                      // No outcome is awaited here: nothing of it for any seller to read.
                      answer_accepted(ex->res, id, "", key, r);
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

}  // namespace

void register_surface_b(Routes& routes, IngestContext& ctx) {
  auto& c = ctx;
  routes.post_inline("/api/v1/lead", [&c](const std::shared_ptr<Exchange>& ex) {
    post_campaign_lead_inline(c, ex, std::nullopt);
  });

  routes.get("/api/v1/stats/{key}", [&c](const http::Request& q, http::Response& r) {
    const std::string key(q.match(1));
    bool unavailable = false;
    auto campaign = key.size() <= 256 ? c.campaigns.find_by_key(key, unavailable) : std::nullopt;
    if (unavailable)
      return send_b_error(r, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    if (!campaign)
      return (void)answer_failed_campaign_auth(c, q, r, {"unknown_key", key, {}, {}},
                                               "unrecognised or inactive campaign key");
    const std::string period = q.has_param("period") ? q.param("period") : "today";
    const std::int64_t now = c.clock.now_ms();
    const std::int64_t since = period_start_ms(period, now);
    if (since < 0) {
      send_invalid(r, {{"period", "not_allowed", "must be today, 24h, 7d, 30d or all"}});
      return;
    }
    // The reports' numbers (GET /v1/reports/performance and /revenue for this campaign), from
    // the same rollups, counted by quarter hour: a period starts at the quarter hour holding its
    // start. The rollups hold decided leads; the store counts those still queued.
    RollupQuery rq;
    rq.from_ms = since - since % kRollupBucketMs;
    rq.to_ms = now - now % kRollupBucketMs + kRollupBucketMs;
    rq.filters = {{ReportKey::kCampaign, campaign->id}};
    const auto perf = c.reporting.performance_rollup(rq);
    const auto money = perf ? c.reporting.revenue_rollup(rq) : std::nullopt;
    const auto queued = money ? c.reporting.count_queued(campaign->id, rq.from_ms) : std::nullopt;
    if (!perf || !money || !queued)
      return send_b_error(r, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    // Summed and rated as the reports sum and rate them (leadflow/reports/report.hpp).
    reports::PerformanceSums leads;
    for (const auto& cell : *perf) leads.add(cell);
    reports::RevenueSums sales;
    for (const auto& cell : *money) sales.add(cell);
    const auto& f = leads.f;
    http::send_json(r, 200,
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
  });

  // A campaign learns nothing of ids that are not its own: another campaign's lead (queued or
  // decided), an id never issued and anything malformed get one answer, 404 "no such job". Its
  // own job is "queued" until decided: from the store once a worker has recorded it, and before
  // that from the job id's tag, which only this campaign's key can make (job_ids.hpp).
  routes.get("/api/v1/jobs/{id}", [&c](const http::Request& q, http::Response& r) {
    const std::string key(q.header("X-Campaign-Key"));
    bool unavailable = false;
    auto campaign = !key.empty() && key.size() <= 256 ? c.campaigns.find_by_key(key, unavailable)
                                                      : std::nullopt;
    if (unavailable)
      return send_b_error(r, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    if (!campaign)
      return (void)answer_failed_campaign_auth(
          c, q, r, {key.empty() ? "missing_key" : "unknown_key", key, {}, {}},
          "X-Campaign-Key missing, unrecognised or inactive");
    const std::string id(q.match(1));
    const JobRef job = parse_job_id(id, key);
    const auto not_found = [&r] { send_b_error(r, 404, "not_found", "no such job"); };
    if (job.lead_id.empty()) return not_found();
    const auto record = c.intake.get_lead(job.lead_id);
    if (record && record->lead.campaign_id == campaign->id) {
      const auto& d = record->distribution;
      if (d.status == DeliveryStatus::kPending)
        return http::send_json(r, 200, {{"status", "queued"}, {"job_id", id}});
      return http::send_json(r, 200,
                             sold_body({job.lead_id, d.status, d.buyer_id, d.price, d.payout},
                                       record->lead.seller_id));
    }
    // Not stored under this campaign. Issued to this key: accepted and not picked up by a worker
    // yet (for a day after the id was made). A tag that checks but whose lead the store holds
    // under another campaign can only be one this key's holder made up: answered the same, so
    // it says nothing of that lead.
    const std::int64_t made = id_time_ms(job.lead_id, kLeadPrefix);
    if (job.issued_to_key && made > 0 && c.clock.now_ms() - made < 24 * 3'600'000LL)
      return http::send_json(r, 200, {{"status", "queued"}, {"job_id", id}});
    not_found();
  });

  routes.get("/api/v1/fields/{vertical}", [&c](const http::Request& q, http::Response& r) {
    const Vertical* v = c.verticals.find(std::string(q.match(1)));
    if (!v) return send_b_error(r, 404, "not_found", "unknown vertical");
    http::send_json(r, 200, c.verticals.to_json(*v));
  });

  // The legacy form: POST /{seller_campaign_key}. Registered last so every named route wins.
  routes.post_inline("/{seller_campaign_key}", [&c](const std::shared_ptr<Exchange>& ex) {
    post_campaign_lead_inline(c, ex, std::string(ex->req.match(1)));
  });
}

}  // namespace leadflow
