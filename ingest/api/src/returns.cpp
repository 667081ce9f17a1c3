// Returns: a buyer gives back a lead it bought, within its return window, with a reason code.
// The sale stays as it was; the store records the return and the ledger entry that reverses the
// sale's revenue and the seller's payout, and marks the lead returned, in one transaction.
#include "returns.hpp"

#include <algorithm>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::size_t kMaxNote = 1000;

struct ReturnMetrics {
  prometheus::Family<prometheus::Counter>& returns;  // leadflow_returns_total{reason}
  prometheus::Family<prometheus::Gauge>& rate;       // leadflow_buyer_return_rate{buyer_id}
  prometheus::Family<prometheus::Gauge>& flagged;    // leadflow_buyer_return_rate_flagged{buyer_id}
};

ReturnMetrics& return_metrics() {
  static ReturnMetrics m{
      prometheus::BuildCounter()
          .Name("leadflow_returns_total")
          .Help("Leads returned by their buyers, by reason code")
          .Register(*metrics_registry()),
      prometheus::BuildGauge()
          .Name("leadflow_buyer_return_rate")
          .Help("The share of a buyer's sales of its last return window that it returned, as of "
                "its last return")
          .Register(*metrics_registry()),
      prometheus::BuildGauge()
          .Name("leadflow_buyer_return_rate_flagged")
          .Help("1 while a buyer's return rate is above its max_return_rate, as of its last "
                "return")
          .Register(*metrics_registry()),
  };
  return m;
}

double rate_of(const ReturnStats& s) {
  return s.sales > 0 ? static_cast<double>(s.returns) / static_cast<double>(s.sales) : 0.0;
}

// After a return: the buyer's rate over its window, in the metrics, and a warning when it is
// past the buyer's max_return_rate.
void note_return_rate(IngestContext& ctx, const Buyer& b) {
  const auto stats =
      ctx.money.return_stats(b.id, ctx.clock.now_ms() - b.return_window_days * kDayMs);
  if (!stats) return;
  const double rate = rate_of(*stats);
  const bool flagged = b.max_return_rate > 0 && rate > b.max_return_rate;
  auto& m = return_metrics();
  m.rate.Add({{"buyer_id", b.id}}).Set(rate);
  m.flagged.Add({{"buyer_id", b.id}}).Set(flagged ? 1 : 0);
  if (flagged)
    log(LogLevel::kWarn, "buyer_return_rate_exceeded",
        {{"buyer_id", b.id},
         {"return_rate", rate},
         {"max_return_rate", b.max_return_rate},
         {"sales", stats->sales},
         {"returned", stats->returns},
         {"window_days", b.return_window_days}});
}

// Whether `buyer_id` bought the lead (any of its sales, or the summary of a one-sale outcome).
bool bought_by(const Distribution& d, const std::string& buyer_id) {
  if (d.buyer_id == buyer_id) return true;
  return std::any_of(d.sales.begin(), d.sales.end(),
                     [&](const Sale& s) { return s.buyer_id == buyer_id; });
}

std::string reasons_list(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : ", ") + r;
  return out;
}

void post_return(IngestContext& ctx, const http::Request& req, http::Response& res) {
  auto key = authorise(ctx, req, res, kScopeReturnsWrite);
  if (!key) return;
  if (!key->is_operator() && !key->is_buyer()) {
    http::send_problem(res, 403, "only the lead's buyer or the operator may return a lead");
    return;
  }
  if (!http::require_json(req, res)) return;
  const auto parsed = http::parse_body(req, res);
  if (!parsed) return;
  const json& body = *parsed;
  FieldErrors errors;
  for (const auto& [name, value] : body.items())
    if (name != "reason" && name != "note" && (name != "buyer_id" || !key->is_operator()))
      errors.push_back({name, "unknown_field", "is not a field of a return"});
  std::string reason, note, buyer_id = key->buyer_id;
  const auto& reasons = ctx.config.return_reasons;
  if (auto it = body.find("reason"); it == body.end() || !it->is_string()) {
    errors.push_back({"reason", it == body.end() ? "required" : "invalid_type",
                      "a reason code: " + reasons_list(reasons)});
  } else {
    reason = it->get<std::string>();
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
      errors.push_back({"reason", "not_allowed", "must be one of " + reasons_list(reasons)});
  }
  if (auto it = body.find("note"); it != body.end() && !it->is_null()) {
    if (!it->is_string())
      errors.push_back({"note", "invalid_type", "must be a string"});
    else if (auto refused =
                 refuse_free_text(it->get_ref<const std::string&>(), kMaxNote, TextLines::kMulti))
      errors.push_back({"note", refused->code, refused->message});  // a note may run on lines
    else
      note = it->get<std::string>();
  }
  if (reason == "other" && note.empty())
    errors.push_back({"note", "required", "a return for reason \"other\" needs a note"});
  if (auto it = body.find("buyer_id"); it != body.end() && key->is_operator()) {
    if (!it->is_string() || it->get_ref<const std::string&>().empty() ||
        it->get_ref<const std::string&>().size() > 64)
      errors.push_back({"buyer_id", "invalid_type", "a buyer id"});
    else
      buyer_id = it->get<std::string>();
  }
  if (!errors.empty()) {
    http::send_problem(res, 400, "the return is invalid", errors);
    return;
  }

  const std::string id(req.match(1));
  const auto not_found = [&res] { http::send_problem(res, 404, "no such lead"); };
  if (!is_valid_id(id, kLeadPrefix)) return not_found();
  const auto record = ctx.intake.get_lead(id);
  if (!record) return not_found();
  // A buyer learns nothing of a lead it did not buy, whatever its state: the same answer as a
  // lead that does not exist, before its own return window (or anything else) is looked at.
  if (key->is_buyer() && !bought_by(record->distribution, key->buyer_id)) return not_found();
  // The operator returns for the buyer the lead was sold to unless it names one; a lead shared
  // among several buyers needs the one named.
  if (buyer_id.empty() && record->distribution.sales.size() > 1) {
    http::send_problem(res, 400, "the return is invalid",
                       {{"buyer_id", "required",
                         "the lead was sold to several buyers: name the one returning it"}});
    return;
  }
  if (buyer_id.empty()) buyer_id = record->distribution.buyer_id;
  if (buyer_id.empty()) {
    http::send_problem(res, 409, "the lead was not sold: there is nothing to return");
    return;
  }
  const auto buyer = ctx.accounts.get_buyer(buyer_id);
  if (!buyer) {
    if (key->is_buyer())
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    http::send_problem(res, 409, "the lead was not sold to that buyer");
    return;
  }
  if (buyer->return_window_days == 0) {
    http::send_problem(res, 422, "this buyer's purchases cannot be returned (return window 0)");
    return;
  }

  ReturnRequest r;
  r.lead_id = id;
  r.buyer_id = buyer_id;
  r.reason = reason;
  r.note = note;
  r.by_key_id = key->id;
  r.at_ms = ctx.clock.now_ms();
  r.window_ms = buyer->return_window_days * kDayMs;
  const ReturnResult result = ctx.money.record_return(r);
  switch (result.status) {
    case ReturnStatus::kReturned:
      break;
    case ReturnStatus::kNoSuchLead:
      return not_found();
    case ReturnStatus::kNotSold:
      // A buyer learns nothing of a lead it did not buy.
      if (key->is_buyer()) return not_found();
      http::send_problem(res, 409, "the lead was not sold to that buyer");
      return;
    case ReturnStatus::kAlreadyReturned:
      http::send_problem_with(
          res, 409, "the lead was already returned",
          {{"return", project_return(viewer_of(ctx, *key), result.ret, record->lead.seller_id)}});
      return;
    case ReturnStatus::kWindowClosed:
      http::send_problem(res, 422,
                         "the return window of " + std::to_string(buyer->return_window_days) +
                             " days ended at " +
                             format_rfc3339_ms(result.sold_at_ms + r.window_ms));
      return;
    case ReturnStatus::kUnavailable:
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite));
  }

  return_metrics().returns.Add({{"reason", reason}}).Increment();
  AuditRecord audit;
  audit.event = AuditEvent::kLeadReturned;
  audit.surface = "api";
  audit.kind = reason;
  audit.lead_id = id;
  audit.buyer_id = buyer_id;
  audit.seller_id = record->lead.seller_id;
  audit.actor_key_id = key->id;
  audit_request(ctx, req, audit);
  note_return_rate(ctx, *buyer);
  // Its buyer reads its return without the seller's payout; the operator all of it.
  http::send_json(
      res, 201,
      {{"success", true},
       {"data", project_return(viewer_of(ctx, *key), result.ret, record->lead.seller_id)}});
}

}  // namespace

json buyer_return_summary(IngestContext& ctx, const Buyer& b) {
  const auto stats =
      ctx.money.return_stats(b.id, ctx.clock.now_ms() - b.return_window_days * kDayMs);
  if (!stats) return nullptr;
  const double rate = rate_of(*stats);
  return {{"window_days", b.return_window_days},
          {"sales", stats->sales},
          {"returned", stats->returns},
          {"rate", rate},
          {"max_return_rate", b.max_return_rate},
          {"flagged", b.max_return_rate > 0 && rate > b.max_return_rate}};
}

void register_returns(Routes& routes, IngestContext& ctx) {
  routes.post("/v1/leads/{id}/return",
              [&ctx](const http::Request& q, http::Response& r) { post_return(ctx, q, r); });
}

}  // namespace leadflow
