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
#include "leadflow/money/returns.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

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
void note_return_rate(const ReturnPorts& ports, const Buyer& b) {
  const auto stats = ports.money.return_stats(
      b.id, ports.clock.now_ms() - money::return_window_ms(b.return_window_days));
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

std::string reasons_list(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : ", ") + r;
  return out;
}

// Only the lead's buyer or the operator returns a lead; a seller never does.
bool may_return(const ApiKey& key) { return key.is_operator() || key.is_buyer(); }

// The body of a return: a configured reason code, a note (required for "other") and, from the
// operator alone, the buyer it returns for. Each field at fault is added to `errors`.
ReturnAsk decode_return(const json& body, const ApiKey& key,
                        const std::vector<std::string>& reasons, FieldErrors& errors) {
  for (const auto& [name, value] : body.items())
    if (name != "reason" && name != "note" && (name != "buyer_id" || !key.is_operator()))
      errors.push_back({name, "unknown_field", "is not a field of a return"});
  ReturnAsk ask;
  if (auto it = body.find("reason"); it == body.end() || !it->is_string()) {
    errors.push_back({"reason", it == body.end() ? "required" : "invalid_type",
                      "a reason code: " + reasons_list(reasons)});
  } else {
    ask.reason = it->get<std::string>();
    if (std::find(reasons.begin(), reasons.end(), ask.reason) == reasons.end())
      errors.push_back({"reason", "not_allowed", "must be one of " + reasons_list(reasons)});
  }
  if (auto it = body.find("note"); it != body.end() && !it->is_null()) {
    if (!it->is_string())
      errors.push_back({"note", "invalid_type", "must be a string"});
    else if (auto refused =
                 refuse_free_text(it->get_ref<const std::string&>(), kMaxNote, TextLines::kMulti))
      errors.push_back({"note", refused->code, refused->message});  // a note may run on lines
    else
      ask.note = it->get<std::string>();
  }
  if (ask.reason == "other" && ask.note.empty())
    errors.push_back({"note", "required", "a return for reason \"other\" needs a note"});
  if (auto it = body.find("buyer_id"); it != body.end() && key.is_operator()) {
    if (!it->is_string() || it->get_ref<const std::string&>().empty() ||
        it->get_ref<const std::string&>().size() > 64)
      errors.push_back({"buyer_id", "invalid_type", "a buyer id"});
    else
      ask.buyer_id = it->get<std::string>();
  }
  return ask;
}

}  // namespace

ReturnDone make_return(const ReturnPorts& ports, const ApiKey& key, const ReturnAsk& ask) {
  ReturnDone done;
  const auto refuse = [&done](ReturnRefused why) {
    done.refused = ReturnRefusal{why};
    return done;
  };
  if (!may_return(key)) return refuse(ReturnRefused::kNotBuyerOrOperator);
  if (!is_valid_id(ask.lead_id, kLeadPrefix)) return refuse(ReturnRefused::kNoSuchLead);
  const auto found = ports.intake.get_lead(ask.lead_id);
  if (found.status == StoreStatus::kUnavailable) return refuse(ReturnRefused::kUnavailable);
  if (!found.value) return refuse(ReturnRefused::kNoSuchLead);
  const auto& record = found.value;
  done.seller_id = record->lead.seller_id;
  const money::Returner returner = money::returner_of(
      record->distribution, key.buyer_id, key.is_operator() ? ask.buyer_id : std::string());
  switch (returner.status) {
    case money::ReturnerStatus::kFound:
      break;
    case money::ReturnerStatus::kNotBought:
      // The same answer as a lead that does not exist, whatever the lead's state.
      return refuse(ReturnRefused::kNoSuchLead);
    case money::ReturnerStatus::kBuyerNeeded:
      return refuse(ReturnRefused::kBuyerNeeded);
    case money::ReturnerStatus::kNotSold:
      return refuse(ReturnRefused::kNotSold);
  }
  const auto read = ports.accounts.get_buyer(returner.buyer_id);
  // A buyer's own record is there: a miss is one the store could not read (or decode).
  if (read.status == StoreStatus::kUnavailable || (!read.value && key.is_buyer()))
    return refuse(ReturnRefused::kBuyerUnreadable);
  if (!read.value) return refuse(ReturnRefused::kNotSoldToBuyer);
  const auto& buyer = read.value;
  if (buyer->return_window_days == 0) return refuse(ReturnRefused::kNoReturns);

  ReturnRequest r;
  r.lead_id = ask.lead_id;
  r.buyer_id = returner.buyer_id;
  r.reason = ask.reason;
  r.note = ask.note;
  r.by_key_id = key.id;
  r.at_ms = ports.clock.now_ms();
  r.window_ms = money::return_window_ms(buyer->return_window_days);
  ReturnResult result = ports.money.record_return(r);
  switch (result.status) {
    case ReturnStatus::kReturned:
      break;
    case ReturnStatus::kNoSuchLead:
      return refuse(ReturnRefused::kNoSuchLead);
    case ReturnStatus::kNotSold:
      // A buyer learns nothing of a lead it did not buy.
      return refuse(key.is_buyer() ? ReturnRefused::kNoSuchLead : ReturnRefused::kNotSoldToBuyer);
    case ReturnStatus::kAlreadyReturned:
      done.ret = std::move(result.ret);
      return refuse(ReturnRefused::kAlreadyReturned);
    case ReturnStatus::kWindowClosed:
      done.refused = ReturnRefusal{ReturnRefused::kWindowClosed, buyer->return_window_days,
                                   result.sold_at_ms + r.window_ms};
      return done;
    case ReturnStatus::kUnavailable:
      return refuse(ReturnRefused::kUnavailable);
  }

  done.ret = std::move(result.ret);
  return_metrics().returns.Add({{"reason", ask.reason}}).Increment();
  AuditRecord audit;
  audit.event = AuditEvent::kLeadReturned;
  audit.surface = "api";
  audit.kind = ask.reason;
  audit.lead_id = ask.lead_id;
  audit.buyer_id = returner.buyer_id;
  audit.seller_id = done.seller_id;
  audit.actor_key_id = key.id;
  ports.audit(audit);
  note_return_rate(ports, *buyer);
  return done;
}

void answer_return(const ReturnPorts& ports, const ApiKey& key, const Viewer& viewer,
                   std::string_view lead_id, const http::Request& req, http::Response& res) {
  if (!may_return(key))
    return send_problem(res, refusal_for(ReturnRefusal{ReturnRefused::kNotBuyerOrOperator}));
  if (!http::require_json(req, res)) return;
  const auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  ReturnAsk ask = decode_return(*body, key, ports.reasons, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "the return is invalid", errors);
  ask.lead_id = lead_id;

  const ReturnDone done = make_return(ports, key, ask);
  // Its buyer reads a return without the seller's payout; the operator all of it.
  json ret = done.ret ? project_return(viewer, *done.ret, done.seller_id) : json();
  if (done.refused)
    return send_problem(res, refusal_for(*done.refused),
                        done.ret ? json{{"return", std::move(ret)}} : json());
  http::send_json(res, 201, {{"success", true}, {"data", std::move(ret)}});
}

json buyer_return_summary(MoneyStore& store, const Clock& clock, const Buyer& b) {
  const auto stats =
      store.return_stats(b.id, clock.now_ms() - money::return_window_ms(b.return_window_days));
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
  routes.post("/v1/leads/{id}/return", [&ctx](const http::Request& req, http::Response& res) {
    const auto key = authorise(ctx, req, res, kScopeReturnsWrite);
    if (!key) return;  // 401, 403, 429 or 503 sent
    const ReturnPorts ports{ctx.intake,
                            ctx.accounts,
                            ctx.money,
                            ctx.clock,
                            ctx.config.return_reasons,
                            [&ctx, &req](const AuditRecord& r) { audit_request(ctx, req, r); }};
    answer_return(ports, *key, viewer_of(ctx, *key), req.match(1), req, res);
  });
}

}  // namespace leadflow
