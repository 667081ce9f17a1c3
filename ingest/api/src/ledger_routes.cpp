// The operator's journal of the ledger: every entry a sale, a return or a settlement wrote, by
// time (then in the order written), filtered by time, account, lead and kind, for reconciling
// with the books. Entries are read through the money port and
// shown through the visibility model (project_ledger_entry), as on a lead's own view.
#include "ledger_routes.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "csv.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/reports/stretches.hpp"
#include "leadflow/visibility/projections.hpp"
#include "pages.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// A download holds at most this many entries; past it, X-Next-Cursor says where the next starts.
constexpr int kLedgerCsvMaxRows = 10'000;
constexpr int kLedgerCsvPage =
    1'000;  // the money port's largest page: a full one may have more behind

const std::vector<std::string> kCsvColumns = {"entry_id", "at",        "kind",        "lead_id",
                                              "buyer_id", "seller_id", "campaign_id", "currency",
                                              "revenue",  "payout",    "margin"};

// What a cursor is bound to: the filters of the list it came from, so that a cursor kept from
// one set of filters cannot page another silently (it would skip or repeat entries). FNV-1a
// over the filters as the store is asked them (the time bounds as instants, so the same range
// written in another zone or format is the same list).
std::string filters_mark(const LedgerQuery& q) {
  const std::string text = q.lead_id + '\n' + q.buyer_id + '\n' + q.seller_id + '\n' + q.kind +
                           '\n' + std::to_string(q.from_ms) + '\n' + std::to_string(q.to_ms);
  std::uint32_t h = 2166136261u;
  for (const unsigned char c : text) h = (h ^ c) * 16777619u;
  char out[9];
  std::snprintf(out, sizeof out, "%08x", h);
  return out;
}

// A cursor's text (before encoding): the last entry's time and id, and the filters' mark.
std::string cursor_after(const LedgerQuery& q, const LedgerEntry& last) {
  return std::to_string(last.at_ms) + "." + std::to_string(last.id) + "." + filters_mark(q);
}

// Reads a whole number of at least 0 from all of `text` into `out`.
bool whole_number(std::string_view text, std::int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && out >= 0;
}

// Reads the cursor into `q` (its filters already read): the entry the next page starts after.
void read_cursor(const http::Request& req, LedgerQuery& q, FieldErrors& errors) {
  if (!req.has_param("cursor")) return;
  const std::string text = http::decode_cursor(req.param("cursor"));
  const std::string_view view = text;
  const auto dot1 = view.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : view.find('.', dot1 + 1);
  std::int64_t at = 0, id = 0;
  if (dot2 == std::string_view::npos || !whole_number(view.substr(0, dot1), at) ||
      !whole_number(view.substr(dot1 + 1, dot2 - dot1 - 1), id) || id == 0)
    return errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
  if (view.substr(dot2 + 1) != filters_mark(q))
    return errors.push_back({"cursor", "not_allowed",
                             "a cursor of the list with other filters: start again without it"});
  q.after_at_ms = at;
  q.after_id = id;
}

// An account's id filter: a well-formed id of its kind, or an error naming the parameter.
void read_id(const http::Request& req, const char* name, std::string_view prefix, std::string& out,
             FieldErrors& errors) {
  if (!req.has_param(name)) return;
  out = req.param(name);
  if (!is_valid_id(out, prefix))
    errors.push_back({name, "invalid_format", "not an id of its kind"});
}

}  // namespace

LedgerAsk decode_ledger_query(const http::Request& req, std::string_view default_zone,
                              FieldErrors& errors) {
  unknown_params(
      req,
      {"limit", "cursor", "format", "from", "to", "tz", "buyer_id", "seller_id", "lead_id", "kind"},
      errors);
  LedgerAsk ask;
  LedgerQuery& q = ask.query;
  ask.csv = asks_csv(req, errors);
  parse_limit(req, q.limit, errors);
  // Whole days in the reader's zone, as the other lists' bounds: [from, to), a bare `to` date
  // through the end of that day.
  ask.tz = list_zone(req, default_zone, errors);
  parse_day_bound(req, "from", false, *ask.tz, q.from_ms, errors);
  parse_day_bound(req, "to", true, *ask.tz, q.to_ms, errors);
  if (q.from_ms != 0 && q.to_ms != 0 && q.to_ms <= q.from_ms)
    errors.push_back({"to", "invalid_range", "must be after from"});
  read_id(req, "buyer_id", kBuyerPrefix, q.buyer_id, errors);
  read_id(req, "seller_id", kSellerPrefix, q.seller_id, errors);
  read_id(req, "lead_id", kLeadPrefix, q.lead_id, errors);
  if (req.has_param("kind")) {
    q.kind = req.param("kind");
    if (q.kind != money::kSaleEntry && q.kind != money::kReturnEntry)
      errors.push_back({"kind", "not_allowed", "one of sale, return"});
  }
  read_cursor(req, q, errors);
  return ask;
}

namespace {

// The download: every page of the list from its cursor, up to kLedgerCsvMaxRows, named after its
// days in the reader's zone (the range asked for, else the days of its first and last entries).
void send_ledger_csv(MoneyStore& money, const Viewer& viewer, const LedgerAsk& ask,
                     http::Response& res) {
  LedgerQuery q = ask.query;
  json rows = json::array();
  std::string next_cursor, first_day, last_day;
  q.limit = kLedgerCsvPage;
  const auto day = [&](std::int64_t ms) { return reports::local_date(*ask.tz, ms); };
  for (;;) {
    auto page = money.list_ledger(q);
    if (!page) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    const bool more = static_cast<int>(page->size()) == kLedgerCsvPage;
    for (const LedgerEntry& e : *page) {
      if (static_cast<int>(rows.size()) == kLedgerCsvMaxRows) {
        next_cursor =
            http::encode_cursor(std::to_string(q.after_at_ms) + "." + std::to_string(q.after_id) +
                                "." + filters_mark(ask.query));
        break;
      }
      q.after_at_ms = e.at_ms;
      q.after_id = e.id;
      json row = project_ledger_entry(viewer, e);
      if (row.is_null()) continue;
      if (first_day.empty()) first_day = day(e.at_ms);
      last_day = day(e.at_ms);
      rows.push_back(std::move(row));
    }
    if (!next_cursor.empty() || !more) break;
  }
  if (ask.query.from_ms != 0) first_day = day(ask.query.from_ms);
  if (ask.query.to_ms != 0) last_day = day(ask.query.to_ms - 1);
  if (first_day.empty()) first_day = last_day;
  if (last_day.empty()) last_day = first_day;
  // An empty download without a range is named after where it started.
  const std::string name = first_day.empty() ? "ledger_after_" + std::to_string(q.after_id)
                                             : "ledger_" + first_day + "_" + last_day;
  res.status = 200;
  res.set_content(csv_table(kCsvColumns, rows), "text/csv; charset=utf-8");
  res.set_header("Content-Disposition", "attachment; filename=\"" + name + ".csv\"");
  res.set_header("X-Has-More", next_cursor.empty() ? "false" : "true");
  if (!next_cursor.empty()) res.set_header("X-Next-Cursor", next_cursor);
}

}  // namespace

void answer_ledger(MoneyStore& money, const Viewer& viewer, const http::Request& req,
                   http::Response& res, std::string_view default_zone) {
  FieldErrors errors;
  const LedgerAsk ask = decode_ledger_query(req, default_zone, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
  if (ask.csv) return send_ledger_csv(money, viewer, ask, res);
  send_page(
      res, ask.query, [&](const LedgerQuery& q) { return money.list_ledger(q); },
      [&](const LedgerEntry& e) { return cursor_after(ask.query, e); },
      [&](const LedgerEntry& e) { return project_ledger_entry(viewer, e); });
}

void register_ledger(Routes& routes, IngestContext& ctx) {
  routes.get("/v1/ledger", [&ctx](const http::Request& q, http::Response& r) {
    const auto key = authorise(ctx, q, r, kScopeReportsRead, /*operator_only=*/true);
    if (!key) return;  // 401, 403, 429 or 503 sent
    answer_ledger(ctx.money, viewer_of(ctx, *key), q, r,
                  key->time_zone.empty() ? "UTC" : key->time_zone);
  });
}

}  // namespace leadflow
