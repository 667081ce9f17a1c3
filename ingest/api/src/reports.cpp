// Reports: GET /v1/reports/revenue, /v1/reports/performance and /v1/reports/unsold, answered
// from the store's rollups (kept with every ledger entry and every outcome, per quarter hour),
// never by scanning leads. The handlers decode the question, authorise it, ask the store the
// rollup question the reports component plans, fold its cells with the component (the reader's
// days or hours in its time zone, docs/reports.md) and encode the rows.
// What each reader may ask and see is the visibility model's (leadflow/visibility/reports.hpp):
// the handlers refuse what it refuses, name keys as it names them and drop the figures it hides.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "auth.hpp"
#include "csv.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/reports/report.hpp"
#include "leadflow/visibility/reports.hpp"
#include "pages.hpp"
#include "reports.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;
using reports::ReportRequest;
using reports::TimeCut;

constexpr std::int64_t kMaxRangeDays = 400;  // bounds the work of one report

// A report's question as asked: what the component folds, and how to answer it.
struct ReportParams : ReportRequest {
  std::vector<std::string> group_names;  // as asked, for the answer
  bool csv = false;
  Viewer viewer;
  ReportKind kind = ReportKind::kRevenue;
  // The report's figures the reader may not see, asked of the visibility model once per report
  // rather than once per row (none for the operator).
  std::vector<std::string> hidden;
};

struct KeyName {
  const char* group;   // in group_by
  const char* column;  // as a filter (and the operator's column in a row)
  ReportKey key;
};
constexpr KeyName kKeys[] = {{"buyer", "buyer_id", ReportKey::kBuyer},
                             {"vertical", "vertical", ReportKey::kVertical},
                             {"source", "source", ReportKey::kSource},
                             {"seller", "seller_id", ReportKey::kSeller},
                             {"campaign", "campaign_id", ReportKey::kCampaign},
                             // The unsold report's alone.
                             {"reason", "reason", ReportKey::kReason}};

const char* group_of(ReportKey k) {
  for (const auto& n : kKeys)
    if (n.key == k) return n.group;
  return "";
}

// The column under which the report's reader reads the key `k`.
std::string column_of(const ReportParams& p, ReportKey k) {
  return report_column(p.viewer, group_of(k));
}

// A row's key as its reader reads it: a seller's id is a buyer's source code; none is null.
json key_value(const ReportPorts& ports, const ReportParams& p, ReportKey k,
               const std::string& value) {
  if (value.empty()) return nullptr;
  return report_value(p.viewer, ports.visibility_secret, group_of(k), value);
}

// The figures of a row or of the totals its reader may see, and the CSV's columns: the key
// columns, then those figures in the report's order.
json visible(const ReportParams& p, json figures) {
  for (const auto& name : p.hidden) figures.erase(name);
  return figures;
}
void add_figure_columns(const ReportParams& p, std::vector<std::string>& columns) {
  for (const auto& name : report_figures(p.kind))
    if (may_see_figure(p.viewer, p.kind, name)) columns.push_back(name);
}

// A bound: a date (its local midnight; `end` makes it the midnight after it) or an RFC 3339
// instant on a quarter hour.
std::optional<std::int64_t> parse_bound(const std::string& text, const TimeZone& tz, bool end,
                                        const char* name, FieldErrors& errors) {
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    const auto utc_midnight = parse_rfc3339_ms(text);
    if (!utc_midnight) {
      errors.push_back({name, "invalid_format", "a date (YYYY-MM-DD) or an RFC 3339 date-time"});
      return std::nullopt;
    }
    const std::int64_t days = *utc_midnight / kDayMs + (end ? 1 : 0);
    return reports::local_midnight_ms(tz, days);
  }
  const auto at = parse_rfc3339_ms(text);
  if (!at) {
    errors.push_back({name, "invalid_format", "a date (YYYY-MM-DD) or an RFC 3339 date-time"});
    return std::nullopt;
  }
  if (*at % kRollupBucketMs != 0) {
    errors.push_back(
        {name, "not_allowed", "a date-time on a quarter hour (reports count by them)"});
    return std::nullopt;
  }
  return at;
}

// What a report may be asked: the unsold report is also cut and filtered by reason, and is not
// cut by time unless asked.
struct ReportShape {
  ReportKind kind = ReportKind::kRevenue;
  bool reasons = false;
  const char* default_group = "day";
};

std::optional<ReportParams> parse_params(const ReportPorts& ports, const http::Request& req,
                                         const Viewer& viewer, FieldErrors& errors,
                                         ReportShape shape = {}) {
  static const char* kAllowed[] = {"from",     "to",     "tz",        "group_by",    "buyer_id",
                                   "vertical", "source", "seller_id", "campaign_id", "format"};
  for (const auto& [name, value] : req.params())
    if (name == "source_code")
      // A code is never turned back into its seller: that would make it the seller's name.
      errors.push_back({name, "not_allowed",
                        "reports are not filtered by source code; group by seller instead"});
    else if (std::none_of(std::begin(kAllowed), std::end(kAllowed),
                          [&](const char* a) { return name == a; }) &&
             !(shape.reasons && name == "reason"))
      errors.push_back({name, "unknown_parameter", "unknown query parameter"});
  const auto known = [&](const KeyName& k) { return shape.reasons || k.key != ReportKey::kReason; };
  ReportParams p;
  p.viewer = viewer;
  p.kind = shape.kind;
  for (const auto& name : report_figures(p.kind))
    if (!may_see_figure(p.viewer, p.kind, name)) p.hidden.push_back(name);
  const std::string zone = req.has_param("tz") ? req.param("tz") : "UTC";
  p.tz = TimeZone::cached(zone);
  if (!p.tz) {
    errors.push_back({"tz", "not_allowed", "an IANA time zone, such as America/New_York"});
    p.tz = TimeZone::cached("UTC");
  }
  // Default: the last 7 days, up to the end of the current quarter hour.
  const std::int64_t now = ports.clock.now_ms();
  p.to_ms = now - now % kRollupBucketMs + kRollupBucketMs;
  p.from_ms = p.to_ms - 7 * kDayMs;
  if (req.has_param("to"))
    if (auto v = parse_bound(req.param("to"), *p.tz, true, "to", errors)) p.to_ms = *v;
  if (req.has_param("from"))
    if (auto v = parse_bound(req.param("from"), *p.tz, false, "from", errors)) p.from_ms = *v;
  if (p.from_ms >= p.to_ms) errors.push_back({"from", "out_of_range", "must come before to"});
  if (p.to_ms - p.from_ms > kMaxRangeDays * kDayMs)
    errors.push_back({"to", "out_of_range", "a report spans at most 400 days"});

  const std::string group_by =
      req.has_param("group_by") ? req.param("group_by") : shape.default_group;
  std::size_t at = 0;
  while (!group_by.empty() && at <= group_by.size()) {
    const std::size_t comma = std::min(group_by.find(',', at), group_by.size());
    const std::string name = group_by.substr(at, comma - at);
    at = comma + 1;
    if (name == "day" || name == "hour") {
      if (p.time != TimeCut::kNone) {
        errors.push_back({"group_by", "not_allowed", "one of day and hour at most"});
        continue;
      }
      p.time = name == "day" ? TimeCut::kDay : TimeCut::kHour;
    } else {
      const auto n = std::find_if(std::begin(kKeys), std::end(kKeys),
                                  [&](const KeyName& k) { return name == k.group && known(k); });
      if (n == std::end(kKeys)) {
        std::string may;
        for (const auto& g : report_groups(viewer, shape.kind))
          may += (may.empty() ? "" : ", ") + g;
        errors.push_back(
            {"group_by", "not_allowed", name + ": not a key of this report; one of " + may});
        continue;
      }
      if (auto refused = refuse_group(viewer, shape.kind, n->group); !refused.empty()) {
        errors.push_back({"group_by", "not_allowed", std::move(refused)});
        continue;
      }
      if (std::find(p.keys.begin(), p.keys.end(), n->key) != p.keys.end()) continue;
      p.keys.push_back(n->key);
    }
    p.group_names.push_back(name);
  }
  if (p.group_names.size() > 2)
    errors.push_back({"group_by", "out_of_range", "at most two at once, such as day,buyer"});

  for (const auto& n : kKeys) {
    if (!known(n) || !req.has_param(n.column)) continue;
    std::string value = req.param(n.column);
    if (auto refused = refuse_filter(viewer, shape.kind, n.group); !refused.empty()) {
      errors.push_back({n.column, "not_allowed", std::move(refused)});
      continue;
    }
    if (value.empty() || value.size() > 200) {
      errors.push_back({n.column, "invalid_format", "1 to 200 characters"});
      continue;
    }
    p.filters.push_back({n.key, std::move(value)});
  }
  // A seller's report holds its own leads only; a buyer's, its own purchases.
  const auto forced = [&](ReportKey k, const std::string& own, const char* name) {
    for (auto& [fk, fv] : p.filters)
      if (fk == k && fv != own) errors.push_back({name, "not_allowed", "another account's"});
    std::erase_if(p.filters, [&](const auto& f) { return f.first == k; });
    p.filters.push_back({k, own});
  };
  if (viewer.is_buyer())
    forced(ReportKey::kBuyer, viewer.buyer_id, "buyer_id");
  else if (viewer.is_seller())
    forced(ReportKey::kSeller, viewer.seller_id, "seller_id");

  p.csv = asks_csv(req, errors);
  if (!errors.empty()) return std::nullopt;
  return p;
}

// The CSV's file name says which report and which days it holds
// ("revenue_2026-11-01_2026-11-27.csv", the last day included, in the report's zone), so several
// downloads do not overwrite each other.
std::string csv_name(const ReportParams& p) {
  const auto day = [&](std::int64_t ms) { return reports::local_date(*p.tz, ms); };
  const char* kind = p.kind == ReportKind::kRevenue       ? "revenue"
                     : p.kind == ReportKind::kPerformance ? "performance"
                                                          : "unsold";
  return std::string(kind) + "_" + day(p.from_ms) + "_" + day(p.to_ms - 1) + ".csv";
}

void send_report(http::Response& res, const ReportParams& p, const json& rows, const json& totals,
                 const std::vector<std::string>& columns) {
  if (p.csv) {
    res.status = 200;
    res.set_content(csv_table(columns, rows), "text/csv; charset=utf-8");
    res.set_header("Content-Disposition", "attachment; filename=\"" + csv_name(p) + "\"");
    return;
  }
  http::send_json(res, 200,
                  {{"success", true},
                   {"data",
                    {{"from", format_rfc3339_ms(p.from_ms)},
                     {"to", format_rfc3339_ms(p.to_ms)},
                     {"tz", p.tz->name()},
                     {"group_by", p.group_names},
                     {"currency", "USD"},
                     {"rows", rows},
                     {"totals", totals}}}});
}

// The reader's parameters, or the refusal sent: 403 for a report the reader may not read, 400
// naming each parameter it may not ask.
std::optional<ReportParams> read_params(const ReportPorts& ports, const Viewer& viewer,
                                        const http::Request& req, http::Response& res,
                                        ReportShape shape) {
  if (!may_read_report(viewer, shape.kind)) {
    http::send_problem(res, 403,
                       "this report is not a buyer's: why leads went unsold is the "
                       "operator's and their sellers'");
    return std::nullopt;
  }
  FieldErrors errors;
  auto p = parse_params(ports, req, viewer, errors, shape);
  if (!p) http::send_problem(res, 400, "invalid report parameters", errors);
  return p;
}

// The key columns of a report's rows: its stretch's ("day" or "hour"), then its keys' as the
// reader reads them.
std::vector<std::string> key_columns(const ReportParams& p, const std::vector<ReportKey>& keys) {
  std::vector<std::string> columns;
  if (p.time != TimeCut::kNone) columns.push_back(p.time == TimeCut::kDay ? "day" : "hour");
  for (ReportKey k : keys) columns.push_back(column_of(p, k));
  return columns;
}

// A row's stretch and keys as its reader reads them. An empty key is a lead without it: a
// Surface A lead has no campaign, a lead may have no source.
template <typename Sums>
json row_keys(const ReportPorts& ports, const ReportParams& p, const std::vector<ReportKey>& keys,
              const reports::ReportRow<Sums>& r) {
  json row = json::object();
  if (p.time != TimeCut::kNone) row[p.time == TimeCut::kDay ? "day" : "hour"] = r.stretch.label;
  for (std::size_t i = 0; i < keys.size(); ++i)
    row[column_of(p, keys[i])] = key_value(ports, p, keys[i], r.keys[i]);
  return row;
}

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// A row's figures: revenue, payout and margin net of returns; the returns apart; the average
// price of the sales made.
json revenue_figures(const reports::RevenueSums& s) {
  const auto avg = s.avg_price();
  return {{"leads_sold", s.sales},
          {"revenue", cents_to_decimal(s.net_revenue())},
          {"payout", cents_to_decimal(s.net_payout())},
          {"margin", cents_to_decimal(s.margin())},
          {"avg_price", avg ? json(cents_to_decimal(*avg)) : json(nullptr)},
          {"gross_revenue", cents_to_decimal(s.revenue)},
          {"returns", s.returns},
          {"returned_revenue", cents_to_decimal(s.returned_revenue)},
          {"returned_payout", cents_to_decimal(s.returned_payout)},
          {"aged_sales", s.aged_sales},
          {"aged_revenue", cents_to_decimal(s.aged_revenue)},
          {"aged_payout", cents_to_decimal(s.aged_payout)},
          {"aged_margin", cents_to_decimal(s.aged_margin())},
          {"aged_returns", s.aged_returns},
          {"aged_returned_revenue", cents_to_decimal(s.aged_returned_revenue)},
          {"aged_returned_payout", cents_to_decimal(s.aged_returned_payout)},
          {"aged_net_revenue", cents_to_decimal(s.aged_net_revenue())},
          {"aged_net_payout", cents_to_decimal(s.aged_net_payout())},
          {"aged_net_margin", cents_to_decimal(s.aged_net_margin())}};
}

// A row's figures; `leads`: the row holds leads' own figures (not a buyer's).
json performance_figures(const reports::PerformanceSums& s, bool leads) {
  const auto& f = s.f;
  json row = json::object();
  const auto lead_figure = [&](const char* name, std::int64_t v) {
    row[name] = leads ? json(v) : json(nullptr);
  };
  lead_figure("leads", f[kLeads]);
  lead_figure("duplicates", f[kDuplicates]);
  lead_figure("invalid", f[kInvalid]);
  lead_figure("sold", f[kSold]);
  lead_figure("unsold", f[kUnsold]);
  lead_figure("failed", f[kFailed]);
  row["pinged"] = f[kPings];
  row["bids"] = f[kBids];
  row["won"] = f[kPosts];
  row["delivered"] = f[kAccepted];
  row["rejected"] = f[kRejected];
  row["timeouts"] = f[kTimeouts];
  row["errors"] = f[kErrors];
  row["acceptance_rate"] = or_null(s.acceptance_rate(leads));
  row["avg_response_ms"] = or_null(s.avg_response_ms());
  row["p95_response_ms"] = or_null(s.p95_response_ms());
  return row;
}

void revenue_report(const ReportPorts& ports, const Viewer& viewer, const http::Request& req,
                    http::Response& res) {
  const auto p = read_params(ports, viewer, req, res, {.kind = ReportKind::kRevenue});
  if (!p) return;
  const RollupQuery q = reports::rollup_query(*p);
  const auto cells = ports.reporting.revenue_rollup(q);
  // The aged sales among them: the same question of their band (docs/reports.md).
  const auto aged = cells ? ports.reporting.revenue_rollup(in_band(q, kAgedSalesBand)) : cells;
  if (!aged) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));

  const reports::RevenueReport report =
      reports::fold_revenue(*p, *cells, from_band(*aged, kAgedSalesBand));
  std::vector<std::string> columns = key_columns(*p, p->keys);
  json rows = json::array();
  for (const auto& r : report.rows) {
    json row = row_keys(ports, *p, p->keys, r);
    row.update(visible(*p, revenue_figures(r.sums)));
    rows.push_back(std::move(row));
  }
  add_figure_columns(*p, columns);
  send_report(res, *p, rows, visible(*p, revenue_figures(report.total)), columns);
}

void performance_report(const ReportPorts& ports, const Viewer& viewer, const http::Request& req,
                        http::Response& res) {
  const auto p = read_params(ports, viewer, req, res, {.kind = ReportKind::kPerformance});
  if (!p) return;
  const auto cells = ports.reporting.performance_rollup(reports::rollup_query(*p));
  if (!cells) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));

  const reports::PerformanceReport report = reports::fold_performance(*p, *cells);
  std::vector<std::string> columns = key_columns(*p, p->keys);
  json rows = json::array();
  for (const auto& r : report.rows) {
    json row = row_keys(ports, *p, p->keys, r);
    row.update(visible(*p, performance_figures(r.sums, report.rows_count_leads)));
    rows.push_back(std::move(row));
  }
  add_figure_columns(*p, columns);
  send_report(res, *p, rows,
              visible(*p, performance_figures(report.total, report.total_counts_leads)), columns);
}

// Why leads went unsold: every row is cut by reason (reports::unsold_query).
void unsold_report(const ReportPorts& ports, const Viewer& viewer, const http::Request& req,
                   http::Response& res) {
  const auto p = read_params(ports, viewer, req, res,
                             {.kind = ReportKind::kUnsold, .reasons = true, .default_group = ""});
  if (!p) return;
  const RollupQuery q = reports::unsold_query(*p);
  const auto cells = ports.reporting.unsold_rollup(q);
  // What second chances made of them: the same question of the bands (docs/reports.md).
  const auto reoffered = cells ? ports.reporting.unsold_rollup(in_band(q, kReofferedBand)) : cells;
  const auto sold_aged =
      reoffered ? ports.reporting.unsold_rollup(in_band(q, kSoldAgedBand)) : reoffered;
  if (!sold_aged)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));

  const reports::UnsoldReport report = reports::fold_unsold(
      *p, *cells, from_band(*reoffered, kReofferedBand), from_band(*sold_aged, kSoldAgedBand));
  std::vector<std::string> columns = key_columns(*p, report.keys);
  add_figure_columns(*p, columns);
  json rows = json::array();
  for (const auto& r : report.rows) {
    json row = row_keys(ports, *p, report.keys, r);
    row.update(visible(*p, {{"leads", r.sums.leads},
                            {"reoffered", r.sums.reoffered},
                            {"sold_aged", r.sums.sold_aged}}));
    rows.push_back(std::move(row));
  }
  json reasons = json::object();
  for (const auto& [reason, leads] : report.reasons) reasons[reason] = leads;
  json totals = {{"counts", report.counts_buyers ? "buyers" : "leads"},
                 {"leads", report.total},
                 {"reasons", reasons}};
  totals.update(visible(*p, {{"reoffered", report.reoffered}, {"sold_aged", report.sold_aged}}));
  send_report(res, *p, rows, totals, columns);
}

}  // namespace

void answer_report(const ReportPorts& ports, const Viewer& viewer, ReportKind kind,
                   const http::Request& req, http::Response& res) {
  switch (kind) {
    case ReportKind::kRevenue:
      return revenue_report(ports, viewer, req, res);
    case ReportKind::kPerformance:
      return performance_report(ports, viewer, req, res);
    case ReportKind::kUnsold:
      return unsold_report(ports, viewer, req, res);
  }
}

void register_reports(Routes& routes, IngestContext& ctx) {
  const auto route = [&ctx](ReportKind kind) {
    return [&ctx, kind](const http::Request& req, http::Response& res) {
      const auto key = authorise(ctx, req, res, kScopeReportsRead);
      if (!key) return;  // 401 or 403 sent
      answer_report({ctx.reporting, ctx.clock, ctx.visibility_secret}, viewer_of(ctx, *key), kind,
                    req, res);
    };
  };
  routes.get("/v1/reports/unsold", route(ReportKind::kUnsold));
  routes.get("/v1/reports/performance", route(ReportKind::kPerformance));
  routes.get("/v1/reports/revenue", route(ReportKind::kRevenue));
}

}  // namespace leadflow
