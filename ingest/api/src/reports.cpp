// Reports: GET /v1/reports/revenue, /v1/reports/performance and /v1/reports/unsold, answered
// from the store's rollups (kept with every ledger entry and every outcome, per quarter hour),
// never by scanning leads. Quarter hours are folded into the
// caller's days or hours in its time zone here, so a day is cut at the zone's own midnight
// (23- and 25-hour days included) and an hour repeated by a DST change is two rows; an hour is
// a local-clock hour at one offset, so a half hour repeated by a half-hour change is a row of
// its own (docs/time-zones.md).
// What each reader may ask and see is the visibility model's (leadflow/visibility/reports.hpp):
// the handlers refuse what it refuses, name keys as it names them and drop the figures it hides.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/visibility/reports.hpp"
#include "reports.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::int64_t kMaxRangeDays = 400;  // bounds the work of one report

enum class TimeCut { kNone, kDay, kHour };

struct ReportParams {
  std::int64_t from_ms = 0, to_ms = 0;
  std::shared_ptr<const TimeZone> tz;
  TimeCut time = TimeCut::kNone;
  std::vector<std::string> group_names;  // as asked, for the answer
  std::vector<ReportKey> keys;
  std::vector<std::pair<ReportKey, std::string>> filters;
  bool csv = false;
  Viewer viewer;
  ReportKind kind = ReportKind::kRevenue;
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
json key_value(IngestContext& ctx, const ReportParams& p, ReportKey k, const std::string& value) {
  if (value.empty()) return nullptr;
  return report_value(p.viewer, ctx.visibility_secret, group_of(k), value);
}

// The figures of a row or of the totals its reader may see, and the CSV's columns: the key
// columns, then those figures in the report's order.
json visible(const ReportParams& p, json figures) {
  for (const auto& name : report_figures(p.kind))
    if (!may_see_figure(p.viewer, p.kind, name)) figures.erase(name);
  return figures;
}
void add_figure_columns(const ReportParams& p, std::vector<std::string>& columns) {
  for (const auto& name : report_figures(p.kind))
    if (may_see_figure(p.viewer, p.kind, name)) columns.push_back(name);
}

// Local midnight, as Unix ms, of the civil date `days` (days since 1970-01-01) in `tz`.
std::int64_t local_midnight_ms(const TimeZone& tz, std::int64_t days) {
  // Noon of that date is inside it whatever the zone's offset; its day starts at midnight.
  const std::int64_t noon_utc = days * 86'400 + 43'200;
  return tz.start_of_day(noon_utc - tz.offset_at(noon_utc)) * 1000;
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
    return local_midnight_ms(tz, days);
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

std::string two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

std::string offset_text(int seconds) {
  const char sign = seconds < 0 ? '-' : '+';
  const int m = std::abs(seconds) / 60;
  return std::string(1, sign) + two(m / 60) + ":" + two(m % 60);
}

// The label of the day or hour (in `tz`) holding the quarter hour starting at `bucket_ms`, and
// the instant it starts (for ordering).
std::pair<std::int64_t, std::string> time_label(const TimeZone& tz, TimeCut cut,
                                                std::int64_t bucket_ms) {
  const std::int64_t s = bucket_ms / 1000;
  const std::int64_t start = cut == TimeCut::kDay ? tz.start_of_day(s) : tz.start_of_hour(s);
  const TimeZone::LocalTime t = tz.local(start);
  std::string label = std::to_string(t.year) + "-" + two(t.month) + "-" + two(t.day);
  if (cut == TimeCut::kHour) {
    // With the offset: the hour a DST change repeats is two different hours.
    label += "T" + two(t.minute_of_day / 60) + ":" + two(t.minute_of_day % 60) +
             offset_text(tz.offset_at(start));
  }
  return {start, label};
}

// What a report may be asked: the unsold report is also cut and filtered by reason, and is not
// cut by time unless asked.
struct ReportShape {
  ReportKind kind = ReportKind::kRevenue;
  bool reasons = false;
  const char* default_group = "day";
};

std::optional<ReportParams> parse_params(IngestContext& ctx, const http::Request& req,
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
  const std::string zone = req.has_param("tz") ? req.param("tz") : "UTC";
  p.tz = TimeZone::cached(zone);
  if (!p.tz) {
    errors.push_back({"tz", "not_allowed", "an IANA time zone, such as America/New_York"});
    p.tz = TimeZone::cached("UTC");
  }
  // Default: the last 7 days, up to the end of the current quarter hour.
  const std::int64_t now = ctx.clock.now_ms();
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

  const std::string format = req.param("format");
  if (req.has_param("format") && format != "csv" && format != "json")
    errors.push_back({"format", "not_allowed", "csv or json"});
  p.csv = format == "csv" || (!req.has_param("format") &&
                              req.header("Accept").find("text/csv") != std::string_view::npos);
  if (!errors.empty()) return std::nullopt;
  return p;
}

// The store's question for a report: its range, filters, and cuts. Cut by time, the cuts are
// where the caller's days or hours begin (found quarter hour by quarter hour, as the labels
// are: a 23- or 25-hour day, or an hour of a zone half an hour off UTC, is cut where it
// really ends), so the store may sum whole UTC hours and days inside them.
RollupQuery rollup_query(const ReportParams& p) {
  RollupQuery q;
  q.from_ms = p.from_ms;
  q.to_ms = p.to_ms;
  q.filters = p.filters;
  q.by_bucket = p.time != TimeCut::kNone;
  q.group = p.keys;
  if (q.by_bucket) {
    std::int64_t current = time_label(*p.tz, p.time, p.from_ms).first;
    for (std::int64_t t = p.from_ms + kRollupBucketMs; t < p.to_ms; t += kRollupBucketMs) {
      const std::int64_t s = t / 1000;
      const std::int64_t start =
          p.time == TimeCut::kDay ? p.tz->start_of_day(s) : p.tz->start_of_hour(s);
      if (start != current) q.cuts.push_back(t);
      current = start;
    }
  }
  return q;
}

struct RevenueSums {
  std::int64_t sales = 0, returns = 0;
  Cents revenue = 0, payout = 0, returned_revenue = 0, returned_payout = 0;

  void add(const RevenueCell& c) {
    sales += c.sales;
    returns += c.returns;
    revenue += c.revenue;
    payout += c.payout;
    returned_revenue += c.returned_revenue;
    returned_payout += c.returned_payout;
  }
};

// A row's figures: revenue, payout and margin net of returns; the returns apart; the average
// price of the sales made.
json revenue_figures(const RevenueSums& s) {
  const Cents revenue = s.revenue - s.returned_revenue, payout = s.payout - s.returned_payout;
  return {{"leads_sold", s.sales},
          {"revenue", cents_to_decimal(revenue)},
          {"payout", cents_to_decimal(payout)},
          {"margin", cents_to_decimal(revenue - payout)},
          {"avg_price", s.sales > 0 ? json(cents_to_decimal((s.revenue + s.sales / 2) / s.sales))
                                    : json(nullptr)},
          {"gross_revenue", cents_to_decimal(s.revenue)},
          {"returns", s.returns},
          {"returned_revenue", cents_to_decimal(s.returned_revenue)},
          {"returned_payout", cents_to_decimal(s.returned_payout)}};
}

// A CSV field: quoted when it must be, and never read as a formula by a spreadsheet.
std::string csv_field(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
  if (!s.empty() && v.is_string() && std::string_view("=+-@\t\r").find(s[0]) != std::string::npos)
    s.insert(s.begin(), '\'');
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// The CSV's file name says which report and which days it holds
// ("revenue_2026-11-01_2026-11-27.csv", the last day included, in the report's zone), so several
// downloads do not overwrite each other.
std::string csv_name(const ReportParams& p) {
  const auto day = [&](std::int64_t ms) {
    const auto t = p.tz->local(ms / 1000);
    return std::to_string(t.year) + "-" + two(t.month) + "-" + two(t.day);
  };
  const char* kind = p.kind == ReportKind::kRevenue       ? "revenue"
                     : p.kind == ReportKind::kPerformance ? "performance"
                                                          : "unsold";
  return std::string(kind) + "_" + day(p.from_ms) + "_" + day(p.to_ms - 1) + ".csv";
}

void send_report(http::Response& res, const ReportParams& p, const json& rows, const json& totals,
                 const std::vector<std::string>& columns) {
  if (p.csv) {
    std::string out;
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
    out += "\r\n";
    for (const auto& row : rows) {
      for (std::size_t i = 0; i < columns.size(); ++i)
        out += (i ? "," : "") + csv_field(row.value(columns[i], json(nullptr)));
      out += "\r\n";
    }
    res.status = 200;
    res.set_content(std::move(out), "text/csv; charset=utf-8");
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

// The reader's parameters, or the refusal sent: 401/403 for a key that may not read the report,
// 400 naming each parameter it may not ask.
std::optional<ReportParams> read_params(IngestContext& ctx, const http::Request& req,
                                        http::Response& res, ReportShape shape) {
  auto key = authorise(ctx, req, res, kScopeReportsRead);
  if (!key) return std::nullopt;
  const Viewer viewer = viewer_of(ctx, *key);
  if (!may_read_report(viewer, shape.kind)) {
    http::send_problem(res, 403,
                       "this report is not a buyer's: why leads went unsold is the "
                       "operator's and their sellers'");
    return std::nullopt;
  }
  FieldErrors errors;
  auto p = parse_params(ctx, req, viewer, errors, shape);
  if (!p) http::send_problem(res, 400, "invalid report parameters", errors);
  return p;
}

void revenue_report(IngestContext& ctx, const http::Request& req, http::Response& res) {
  const auto p = read_params(ctx, req, res, {.kind = ReportKind::kRevenue});
  if (!p) return;

  const RollupQuery q = rollup_query(*p);
  const auto cells = ctx.reporting.revenue_rollup(q);
  if (!cells) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));

  // Quarter hours folded into the caller's days or hours, ordered by time, then by keys.
  std::map<std::pair<std::int64_t, std::vector<std::string>>, std::pair<std::string, RevenueSums>>
      folded;
  RevenueSums total;
  for (const auto& c : *cells) {
    std::pair<std::int64_t, std::string> when{0, ""};
    if (p->time != TimeCut::kNone) when = time_label(*p->tz, p->time, c.bucket_ms);
    auto& [label, sums] = folded[{when.first, c.keys}];
    label = when.second;
    sums.add(c);
    total.add(c);
  }
  std::vector<std::string> columns;
  if (p->time != TimeCut::kNone) columns.push_back(p->time == TimeCut::kDay ? "day" : "hour");
  for (ReportKey k : p->keys) columns.push_back(column_of(*p, k));
  json rows = json::array();
  for (const auto& [at, entry] : folded) {
    json row = json::object();
    if (p->time != TimeCut::kNone) row[columns[0]] = entry.first;
    // An empty key is a lead without it: a Surface A lead has no campaign, a lead may have no
    // source.
    for (std::size_t i = 0; i < p->keys.size(); ++i)
      row[column_of(*p, p->keys[i])] = key_value(ctx, *p, p->keys[i], at.second[i]);
    row.update(visible(*p, revenue_figures(entry.second)));
    rows.push_back(std::move(row));
  }
  add_figure_columns(*p, columns);
  send_report(res, *p, rows, visible(*p, revenue_figures(total)), columns);
}

struct PerformanceSums {
  std::array<std::int64_t, kPerformanceFigures> f{};
  void add(const PerformanceCell& c) {
    for (int i = 0; i < kPerformanceFigures; ++i) f[i] += c.figures[i];
  }
};

json rate(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return nullptr;
  return std::round(static_cast<double>(part) * 10000.0 / static_cast<double>(whole)) / 10000.0;
}

// The upper edge of the response-time bucket holding the 95th percentile; null with no answers
// or when it lies in the open bucket above the last edge.
json p95_ms(const PerformanceSums& s) {
  const std::int64_t n = s.f[kResponses];
  if (n <= 0) return nullptr;
  const std::int64_t rank = (95 * n + 99) / 100;  // the ceil(0.95 n)-th answer
  std::int64_t seen = 0;
  for (int i = 0; i < kLatencyBuckets; ++i) {
    seen += s.f[kLatency0 + i];
    if (seen >= rank) return i < kLatencyBuckets - 1 ? json(kLatencyEdgesMs[i]) : json(nullptr);
  }
  return nullptr;
}

// A row's figures. `leads_too`: the row holds leads' own figures (not cut by buyer).
json performance_figures(const PerformanceSums& s, bool leads_too) {
  const auto& f = s.f;
  json row = json::object();
  const auto lead_figure = [&](const char* name, std::int64_t v) {
    row[name] = leads_too ? json(v) : json(nullptr);
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
  // Leads: the share of decided leads (duplicates aside) that sold, as the campaign stats
  // count it; a buyer's row: the share of its posts it accepted.
  row["acceptance_rate"] = leads_too ? rate(f[kSold], f[kSold] + f[kUnsold] + f[kFailed])
                                     : rate(f[kAccepted], f[kPosts]);
  row["avg_response_ms"] = f[kResponses] > 0
                               ? json(std::llround(static_cast<double>(f[kResponseMs]) /
                                                   static_cast<double>(f[kResponses])))
                               : json(nullptr);
  row["p95_response_ms"] = p95_ms(s);
  return row;
}

void performance_report(IngestContext& ctx, const http::Request& req, http::Response& res) {
  const auto p = read_params(ctx, req, res, {.kind = ReportKind::kPerformance});
  if (!p) return;

  const RollupQuery q = rollup_query(*p);
  const auto cells = ctx.reporting.performance_rollup(q);
  if (!cells) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));

  // Cut by buyer, the leads' own figures (buyer "") are no buyer's row; they still count in
  // the totals. Filtered by buyer, there are none.
  const auto by_buyer = std::find(p->keys.begin(), p->keys.end(), ReportKey::kBuyer);
  const bool buyer_cut = by_buyer != p->keys.end();
  const bool buyer_filtered = std::any_of(p->filters.begin(), p->filters.end(), [](const auto& f) {
    return f.first == ReportKey::kBuyer;
  });
  std::map<std::pair<std::int64_t, std::vector<std::string>>,
           std::pair<std::string, PerformanceSums>>
      folded;
  PerformanceSums total;
  for (const auto& c : *cells) {
    total.add(c);
    if (buyer_cut && c.keys[by_buyer - p->keys.begin()].empty()) continue;
    std::pair<std::int64_t, std::string> when{0, ""};
    if (p->time != TimeCut::kNone) when = time_label(*p->tz, p->time, c.bucket_ms);
    auto& [label, sums] = folded[{when.first, c.keys}];
    label = when.second;
    sums.add(c);
  }
  std::vector<std::string> columns;
  if (p->time != TimeCut::kNone) columns.push_back(p->time == TimeCut::kDay ? "day" : "hour");
  for (ReportKey k : p->keys) columns.push_back(column_of(*p, k));
  json rows = json::array();
  for (const auto& [at, entry] : folded) {
    json row = json::object();
    if (p->time != TimeCut::kNone) row[columns[0]] = entry.first;
    for (std::size_t i = 0; i < p->keys.size(); ++i)
      row[column_of(*p, p->keys[i])] = key_value(ctx, *p, p->keys[i], at.second[i]);
    row.update(visible(*p, performance_figures(entry.second, !buyer_cut && !buyer_filtered)));
    rows.push_back(std::move(row));
  }
  add_figure_columns(*p, columns);
  send_report(res, *p, rows, visible(*p, performance_figures(total, !buyer_filtered)), columns);
}

// Why leads went unsold: every row is cut by reason. Not cut or filtered by buyer, a row counts
// leads by why each went unsold (one reason per lead); cut or filtered by buyer, it counts, per
// buyer, the unsold leads that buyer did not take and why (one reason per lead and buyer).
void unsold_report(IngestContext& ctx, const http::Request& req, http::Response& res) {
  const auto p = read_params(ctx, req, res,
                             {.kind = ReportKind::kUnsold, .reasons = true, .default_group = ""});
  if (!p) return;

  RollupQuery q = rollup_query(*p);
  if (std::find(q.group.begin(), q.group.end(), ReportKey::kReason) == q.group.end())
    q.group.push_back(ReportKey::kReason);
  const auto by_buyer = std::find(q.group.begin(), q.group.end(), ReportKey::kBuyer);
  const bool buyer_cut = by_buyer != q.group.end();
  const bool buyers =
      buyer_cut || std::any_of(q.filters.begin(), q.filters.end(),
                               [](const auto& f) { return f.first == ReportKey::kBuyer; });
  if (!buyers) q.filters.push_back({ReportKey::kBuyer, ""});  // the leads' own reasons
  const auto cells = ctx.reporting.unsold_rollup(q);
  if (!cells) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));

  const std::size_t reason_at =
      std::find(q.group.begin(), q.group.end(), ReportKey::kReason) - q.group.begin();
  std::map<std::pair<std::int64_t, std::vector<std::string>>, std::pair<std::string, std::int64_t>>
      folded;
  std::map<std::string, std::int64_t> by_reason;
  std::int64_t total = 0;
  for (const auto& c : *cells) {
    if (buyer_cut && c.keys[by_buyer - q.group.begin()].empty()) continue;  // a lead's own
    std::pair<std::int64_t, std::string> when{0, ""};
    if (p->time != TimeCut::kNone) when = time_label(*p->tz, p->time, c.bucket_ms);
    auto& [label, leads] = folded[{when.first, c.keys}];
    label = when.second;
    leads += c.leads;
    by_reason[c.keys[reason_at]] += c.leads;
    total += c.leads;
  }
  std::vector<std::string> columns;
  if (p->time != TimeCut::kNone) columns.push_back(p->time == TimeCut::kDay ? "day" : "hour");
  for (ReportKey k : q.group) columns.push_back(column_of(*p, k));
  add_figure_columns(*p, columns);
  // In time order; inside a day or hour (or in all), the most leads first.
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, json>> ordered;
  for (const auto& [at, entry] : folded) {
    json row = json::object();
    if (p->time != TimeCut::kNone) row[columns[0]] = entry.first;
    for (std::size_t i = 0; i < q.group.size(); ++i)
      row[column_of(*p, q.group[i])] = key_value(ctx, *p, q.group[i], at.second[i]);
    row.update(visible(*p, {{"leads", entry.second}}));
    ordered.push_back({{at.first, -entry.second}, std::move(row)});
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  json rows = json::array();
  for (auto& [order, row] : ordered) rows.push_back(std::move(row));
  json reasons = json::object();
  for (const auto& [reason, leads] : by_reason) reasons[reason] = leads;
  send_report(res, *p, rows,
              {{"counts", buyers ? "buyers" : "leads"}, {"leads", total}, {"reasons", reasons}},
              columns);
}

}  // namespace

void register_reports(Routes& routes, IngestContext& ctx) {
  routes.get("/v1/reports/unsold",
             [&ctx](const http::Request& q, http::Response& r) { unsold_report(ctx, q, r); });
  routes.get("/v1/reports/performance",
             [&ctx](const http::Request& q, http::Response& r) { performance_report(ctx, q, r); });
  routes.get("/v1/reports/revenue",
             [&ctx](const http::Request& q, http::Response& r) { revenue_report(ctx, q, r); });
}

}  // namespace leadflow
