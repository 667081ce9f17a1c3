// Surface B's lead post, /api/v1/lead and the legacy form: the checks of a post (media type, key,
// campaign, the campaign's ceiling, validation) and the answer to a lead handed to the queue.
// The event loop runs the checks when they need no I/O; this file never waits on I/O unless
// `may_block` says it may, and allocates nothing beyond what the lead itself needs.
#include <algorithm>

#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/job_ids.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/domain/test_mode.hpp"
#include "leadflow/http/forms.hpp"
#include "leadflow/visibility/projections.hpp"
#include "surface_b.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

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

// The vertical a key's campaign has, for validation: "" for no usable campaign (the key check
// answers first anyway), nullopt when only the store can say and `may_block` is false.
std::optional<std::string> campaign_vertical(const SurfaceBPorts& ports, std::string_view sent,
                                             const std::string* path_key, bool may_block) {
  const std::string key = path_key ? *path_key : std::string(sent);
  if (key.empty() || key.size() > 256) return std::string();
  std::optional<Campaign> campaign;
  bool unavailable = false;
  if (!ports.find_campaign(key, may_block, campaign, unavailable)) return std::nullopt;
  return campaign && campaign->active ? campaign->vertical : std::string();
}

void read_body(const SurfaceBPorts& ports, const http::Request& req, PostBody& body,
               const std::string* path_key, bool may_block) {
  body.read = true;
  if (body.kind == BodyKind::kJson) {
    body.parsed = parse_campaign_lead_json(req.body(), ports.verticals, [&](std::string_view sent) {
      return campaign_vertical(ports, sent, path_key, may_block);
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
ParsedLead& validated_for(const SurfaceBPorts& ports, const http::Request& req, PostBody& body,
                          std::string_view vertical) {
  if (!body.parsed.malformed && body.parsed.validated_for != vertical)
    body.parsed = parse_lead_json(req.body(), LeadShape::kCampaign, ports.verticals, vertical);
  return body.parsed;
}

}  // namespace

Intake take_campaign_lead(const SurfaceBPorts& ports, const http::Request& req, http::Response& res,
                          const std::string* path_key, bool may_block, PostBody& body,
                          LeadIntake& out) {
  auto& metrics = ingest_metrics();
  if (!body.read) body.kind = body_kind(req);
  const BodyKind kind = body.kind;
  if (kind == BodyKind::kOther || (!path_key && kind != BodyKind::kJson)) {
    send_b_refusal(res,
                   refusal_for(path_key ? CampaignRefused::kNotAForm : CampaignRefused::kJsonOnly));
    return Intake::kAnswered;
  }
  if (!body.read) read_body(ports, req, body, path_key, may_block);
  std::string key = body.key;
  if (path_key) {
    if (!key.empty() && key != *path_key) {
      send_b_refusal(res, refusal_for(CampaignRefused::kKeyMismatch));
      return Intake::kAnswered;
    }
    key = *path_key;
  }
  if (key.empty() && kind == BodyKind::kJson && !path_key) {
    // Either not JSON at all or no key: let validation name what is wrong.
    const ParsedLead& parsed = validated_for(ports, req, body, "");
    metrics.lead("campaign", "invalid");
    send_b_invalid(res, parsed.errors.empty()
                            ? FieldErrors{{"SELLER_CAMPAIGN_KEY", "required", "is required"}}
                            : parsed.errors);
    return Intake::kAnswered;
  }
  bool unavailable = false;
  std::optional<Campaign> campaign;
  if (key.size() <= 256 && !ports.find_campaign(key, may_block, campaign, unavailable))
    return Intake::kMustBlock;
  if (unavailable) {
    metrics.lead("campaign", "unavailable");
    send_b_refusal(res, refusal_for(CampaignRefused::kKeyUnavailable));
    return Intake::kAnswered;
  }
  if (!campaign || !campaign->active) {
    FailedCampaignAuth failed{campaign ? "inactive_campaign" : "unknown_key", key, {}, {}};
    if (campaign) {
      failed.campaign_id = campaign->id;
      failed.seller_id = campaign->seller_id;
    }
    if (!ports.refuse_key(req, res, failed, kUnknownCampaignKey, may_block))
      return Intake::kMustBlock;
    metrics.lead("campaign", "unauthorized");
    return Intake::kAnswered;
  }
  const std::optional<RateDecision> decided =
      may_block ? ports.limiter.acquire(campaign->id, campaign->rate_limit_per_minute, 0)
                : ports.limiter.try_acquire(campaign->id, campaign->rate_limit_per_minute, 0);
  if (!decided) return Intake::kMustBlock;
  const RateDecision& d = *decided;
  http::set_rate_headers(res, d);
  if (!d.allowed) {
    metrics.lead("campaign", "rate_limited");
    ports.audit_rate_limited(req, *campaign);
    send_b_refusal(res, refusal_for(CampaignRefused::kRateLimited));
    return Intake::kAnswered;
  }

  // No check waits from here on: what the body holds may be moved out of it.
  ParsedLead parsed;
  if (kind == BodyKind::kJson) {
    parsed = std::move(validated_for(ports, req, body, campaign->vertical));
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
    parsed = parse_lead_form(without_key, ports.verticals, campaign->vertical);
  }
  if (!parsed.errors.empty()) {
    metrics.lead("campaign", "invalid");
    if (may_block) {
      ports.reporting.count_invalid(campaign->id, ports.clock.now_ms());
    } else {
      out.invalid_campaign = campaign->id;
      out.invalid_at_ms = ports.clock.now_ms();
    }
    send_b_invalid(res, parsed.errors);
    return Intake::kAnswered;
  }
  if (auto refused = suppression_refusal(ports.suppression, parsed.lead)) {
    if (refused->status == 422) metrics.lead("campaign", "suppressed");
    send_b_refusal(res, *refused);
    return Intake::kAnswered;
  }
  Lead& lead = parsed.lead;
  lead.received_at_ms = ports.clock.now_ms();
  lead.id = new_id(kLeadPrefix, lead.received_at_ms);
  lead.seller_id = campaign->seller_id;
  lead.campaign_id = campaign->id;
  lead.surface = Surface::kCampaign;
  lead.test = is_test_lead({lead.test, campaign->seller_test_mode, campaign->test_mode});
  const bool async = campaign->async_mode || http::prefers_async(req);
  const int wait_ms = async ? 0 : campaign->sync_timeout_ms;
  lead.sync_wait_ms = wait_ms;
  out.wait_ms = wait_ms;
  out.lead = std::move(lead);
  out.campaign_key = std::move(key);
  return Intake::kAccept;
}

std::string campaign_queued_body(const std::string& lead_id, const std::string& campaign_key) {
  // The hot path of an async campaign: ids are plain ASCII, so no JSON tree is needed.
  return "{\"status\":\"queued\",\"job_id\":\"" + job_id_for(lead_id, campaign_key) +
         "\",\"lead_id\":\"" + lead_id + "\"}";
}

json campaign_outcome_body(const OutcomeMessage& m, const std::string& seller_id) {
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
                       : is_test(m.status)                      ? "test"
                                                                : "unsold";
  json body = {{"status", status},
               {"sold", sold},
               {"price", sold && payout != seen.end() ? payout->get<double>() : 0.0},
               {"currency", "USD"},
               {"lead_id", m.lead_id}};
  if (is_test(m.status)) body["test"] = true;
  return body;
}

void answer_campaign_lead(http::Response& res, const std::string& lead_id,
                          const std::string& seller_id, const std::string& campaign_key,
                          const AcceptResult& r, const json* would_have) {
  auto& metrics = ingest_metrics();
  if (r.produced != ProduceStatus::kOk) {
    metrics.lead("campaign", "unavailable");
    send_b_refusal(res, refusal_for(r.produced));
    return;
  }
  metrics.lead("campaign", "accepted");
  if (!r.outcome && !would_have) {
    res.status = 202;
    res.set_content(campaign_queued_body(lead_id, campaign_key), "application/json");
    return;
  }
  json body = r.outcome ? campaign_outcome_body(*r.outcome, seller_id)
                        : json{{"status", "queued"},
                               {"job_id", job_id_for(lead_id, campaign_key)},
                               {"lead_id", lead_id}};
  if (would_have) {
    body["test"] = true;
    body["would_have"] = *would_have;
  }
  http::send_json(res, r.outcome ? 200 : 202, body);
}

}  // namespace leadflow
