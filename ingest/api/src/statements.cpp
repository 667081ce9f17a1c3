// Statements and closed periods: decode, authorise, call the statements port and
// leadflow/money/statements.hpp, encode through leadflow/visibility/statements.hpp.
#include "statements.hpp"

#include <algorithm>

#include "auth.hpp"
#include "csv.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/visibility/statements.hpp"
#include "pages.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using json = nlohmann::json;

// The zone an account's statements are cut in, or nullopt (with `refused` set) when there is no
// such account or the store cannot say.
std::optional<std::string> zone_of(const StatementPorts& ports, money::Party party,
                                   const std::string& id,
                                   std::optional<StatementRefused>& refused) {
  if (party == money::Party::kBuyer) {
    const auto buyer = ports.accounts.get_buyer(id);
    if (buyer.status == StoreStatus::kUnavailable) refused = StatementRefused::kUnavailable;
    if (!buyer.value)
      return (refused = refused.value_or(StatementRefused::kNotYours), std::nullopt);
    return money::zone_of_buyer(*buyer.value);
  }
  const auto seller = ports.accounts.get_seller(id);
  if (seller.status == StoreStatus::kUnavailable) refused = StatementRefused::kUnavailable;
  if (!seller.value) return (refused = refused.value_or(StatementRefused::kNotYours), std::nullopt);
  return money::zone_of_seller(*seller.value);
}

// The CSV: the lines as the reader may see them, then a line of the totals.
std::string statement_csv(const Viewer& viewer, const json& projected, money::Party party) {
  json rows = projected["lines"];
  const json& t = projected["totals"];
  json total = {{"kind", "total"}};
  if (t.contains("total")) total["amount"] = t["total"];
  if (t.contains("total_payout")) total["payout"] = t["total_payout"];
  if (t.contains("margin")) total["margin"] = t["margin"];
  rows.push_back(std::move(total));
  return csv_table(statement_csv_columns(viewer, party), rows);
}

}  // namespace

void answer_statement(const StatementPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res) {
  FieldErrors errors;
  std::optional<money::Party> party;
  if (req.has_param("party")) {
    party = money::parse_party(req.param("party"));
    if (!party) errors.push_back({"party", "not_allowed", "buyer or seller"});
  } else if (viewer.is_buyer()) {
    party = money::Party::kBuyer;
  } else if (viewer.is_seller()) {
    party = money::Party::kSeller;
  } else {
    errors.push_back({"party", "required", "buyer or seller"});
  }
  std::string id = req.param("id");
  if (id.empty() && !viewer.is_operator())
    id = viewer.is_buyer() ? viewer.buyer_id : viewer.seller_id;
  if (id.empty()) errors.push_back({"id", "required", "the buyer's or seller's id"});
  const auto period = money::parse_period(req.param("period"));
  if (!period)
    errors.push_back({"period", req.has_param("period") ? "invalid_format" : "required",
                      "a month (2026-11) or an ISO week (2026-W47)"});
  const bool csv = asks_csv(req, errors);
  if (!errors.empty())
    return http::send_problem(res, 400, "the statement asked is invalid", errors);
  if (!may_read_statement(viewer, *party, id))
    return send_problem(res, refusal_for(StatementRefused::kNotYours));

  std::optional<StatementRefused> refused;
  const auto zone = zone_of(ports, *party, id, refused);
  if (!zone) return send_problem(res, refusal_for(*refused));
  const auto read = read_statement(ports.statements, *party, id, *period, *zone);
  if (!read) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  const json projected = project_statement(viewer, *read);
  if (csv) {
    res.status = 200;
    res.set_content(statement_csv(viewer, projected, *party), "text/csv; charset=utf-8");
    res.set_header("Content-Disposition", "attachment; filename=\"statement_" +
                                              std::string(money::to_string(*party)) + "_" + id +
                                              "_" + period->label() + ".csv\"");
    return;
  }
  http::send_json(res, 200, {{"success", true}, {"data", projected}});
}

void answer_periods(const StatementPorts& ports, const Viewer& viewer, const http::Request& req,
                    http::Response& res) {
  const std::string calendar = req.has_param("calendar") ? req.param("calendar") : "month";
  if (calendar != "month" && calendar != "week")
    return http::send_problem(res, 400, "the periods asked are invalid",
                              {{"calendar", "not_allowed", "month or week"}});
  const auto closes = ports.statements.list_closes();
  if (!closes) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  const auto cal = calendar == "month" ? money::Calendar::kMonth : money::Calendar::kWeek;
  const std::int64_t now = ports.clock.now_ms();
  const auto& utc = *TimeZone::cached("UTC");
  std::vector<money::Period> periods;
  money::Period p = money::period_of(cal, now, utc);
  for (int i = 0; i < 12; ++i, p = p.previous()) periods.push_back(p);
  for (const auto& [label, close] : *closes)
    if (close.period.calendar == cal &&
        std::find(periods.begin(), periods.end(), close.period) == periods.end())
      periods.push_back(close.period);
  std::sort(periods.begin(), periods.end(), [](const auto& a, const auto& b) { return b < a; });
  json out = json::array();
  for (const auto& period : periods) {
    const auto bounds = money::bounds_of(period, utc);
    json row;
    if (auto c = closes->find(period.label()); c != closes->end()) {
      row = project_close(viewer, c->second, nullptr);
    } else {
      row = {{"period", period.label()}, {"calendar", calendar}, {"closed_at", nullptr}};
      row["status"] = bounds.to_ms > now ? "current" : "open";
      if (viewer.is_operator()) row["closable"] = money::period_ended_everywhere(period, now);
    }
    row["from"] = format_rfc3339_ms(bounds.from_ms);
    row["to"] = format_rfc3339_ms(bounds.to_ms);
    out.push_back(std::move(row));
  }
  http::send_json(res, 200, {{"success", true}, {"data", std::move(out)}});
}

void answer_close(const StatementPorts& ports, const ApiKey& key, const Viewer& viewer,
                  std::string_view period_text, http::Response& res) {
  if (!key.is_operator()) return send_problem(res, refusal_for(StatementRefused::kNotOperator));
  const auto period = money::parse_period(period_text);
  if (!period)
    return http::send_problem(res, 400, "the period is invalid",
                              {{"period", "invalid_format", "a month (2026-11) or an ISO week"}});
  const std::int64_t now = ports.clock.now_ms();
  if (!money::period_ended_everywhere(*period, now))
    return send_problem(res, refusal_for(StatementRefused::kNotEnded));
  const CloseResult done = ports.statements.close_period({*period, key.id, now});
  switch (done.status) {
    case CloseStatus::kClosed:
      break;
    case CloseStatus::kAlreadyClosed:
      return send_problem(
          res, refusal_for(StatementRefused::kAlreadyClosed),
          {{"close", project_close(viewer, done.closed.close, &done.closed.totals)}});
    case CloseStatus::kUnavailable:
      return send_problem(res, refusal_for(StatementRefused::kUnavailable));
  }
  AuditRecord audit;
  audit.event = AuditEvent::kPeriodClosed;
  audit.surface = "api";
  audit.kind = period->calendar == money::Calendar::kMonth ? "month" : "week";
  audit.actor_key_id = key.id;
  ports.audit(audit);
  http::send_json(
      res, 201,
      {{"success", true}, {"data", project_close(viewer, done.closed.close, &done.closed.totals)}});
}

void register_statements(Routes& routes, IngestContext& ctx) {
  // A front built without the statements port answers 503 (only tests build one so).
  const auto ports = [&ctx](const http::Request& req) {
    return StatementPorts{*ctx.statements, ctx.accounts, ctx.clock,
                          [&ctx, &req](const AuditRecord& r) { audit_request(ctx, req, r); }};
  };
  routes.get("/v1/statements", [&ctx, ports](const http::Request& req, http::Response& res) {
    const auto key = authorise(ctx, req, res, kScopeReportsRead);
    if (!key) return;  // 401, 403, 429 or 503 sent
    if (!ctx.statements) return send_problem(res, refusal_for(StatementRefused::kUnavailable));
    answer_statement(ports(req), viewer_of(ctx, *key), req, res);
  });
  routes.get("/v1/periods", [&ctx, ports](const http::Request& req, http::Response& res) {
    const auto key = authorise(ctx, req, res, kScopeReportsRead);
    if (!key) return;
    if (!ctx.statements) return send_problem(res, refusal_for(StatementRefused::kUnavailable));
    answer_periods(ports(req), viewer_of(ctx, *key), req, res);
  });
  routes.post("/v1/periods/{period}/close",
              [&ctx, ports](const http::Request& req, http::Response& res) {
                const auto key = authorise(ctx, req, res, kScopeAdmin, /*operator_only=*/true);
                if (!key) return;
                if (!ctx.statements)
                  return send_problem(res, refusal_for(StatementRefused::kUnavailable));
                answer_close(ports(req), *key, viewer_of(ctx, *key), req.match(1), res);
              });
}

}  // namespace leadflow
