// The operator's journal of the ledger: every entry a sale, a return or a settlement wrote, in
// the order written, for reconciling with the books. Entries are read through the money port and
// shown through the visibility model (project_ledger_entry), as on a lead's own view.
#include "ledger_routes.hpp"

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "csv.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/visibility/projections.hpp"
#include "pages.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// A download holds at most this many entries; past it, X-Next-Cursor says where the next starts.
constexpr int kCsvMaxRows = 10'000;
constexpr int kCsvPage = 1'000;  // the money port's largest page: a full one may have more behind

const std::vector<std::string> kCsvColumns = {"entry_id", "at",        "kind",        "lead_id",
                                              "buyer_id", "seller_id", "campaign_id", "currency",
                                              "revenue",  "payout",    "margin"};

struct LedgerAsk {
  LedgerQuery query;
  bool csv = false;
};

// The entry id a cursor names: the entries after it follow.
std::optional<std::int64_t> entry_after(std::string_view cursor) {
  const std::string id = http::decode_cursor(cursor);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size() || v < 0) return std::nullopt;
  return v;
}

LedgerAsk decode_ledger_query(const http::Request& req, FieldErrors& errors) {
  unknown_params(req, {"limit", "cursor", "format"}, errors);
  LedgerAsk ask;
  ask.csv = asks_csv(req, errors);
  parse_limit(req, ask.query.limit, errors);
  if (req.has_param("cursor")) {
    if (const auto after = entry_after(req.param("cursor")))
      ask.query.after_id = *after;
    else
      errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
  }
  return ask;
}

void send_ledger_csv(MoneyStore& money, const Viewer& viewer, LedgerQuery q, http::Response& res) {
  json rows = json::array();
  std::string next_cursor, first_day, last_day;
  q.limit = kCsvPage;
  for (;;) {
    auto page = money.list_ledger(q);
    if (!page) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    const bool more = static_cast<int>(page->size()) == kCsvPage;
    for (const LedgerEntry& e : *page) {
      if (static_cast<int>(rows.size()) == kCsvMaxRows) {
        next_cursor = http::encode_cursor(std::to_string(q.after_id));
        break;
      }
      json row = project_ledger_entry(viewer, e);
      if (row.is_null()) continue;
      const std::string day = format_rfc3339_ms(e.at_ms).substr(0, 10);
      if (first_day.empty()) first_day = day;
      last_day = day;
      rows.push_back(std::move(row));
      q.after_id = e.id;
    }
    if (!next_cursor.empty() || !more) break;
  }
  // Named after the days (UTC) its entries were written on; an empty download after its cursor.
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
                   http::Response& res) {
  FieldErrors errors;
  const LedgerAsk ask = decode_ledger_query(req, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
  if (ask.csv) return send_ledger_csv(money, viewer, ask.query, res);
  send_page(
      res, ask.query, [&](const LedgerQuery& q) { return money.list_ledger(q); },
      [](const LedgerEntry& e) { return std::to_string(e.id); },
      [&](const LedgerEntry& e) { return project_ledger_entry(viewer, e); });
}

void register_ledger(Routes& routes, IngestContext& ctx) {
  routes.get("/v1/ledger", [&ctx](const http::Request& q, http::Response& r) {
    const auto key = authorise(ctx, q, r, kScopeReportsRead, /*operator_only=*/true);
    if (!key) return;  // 401, 403, 429 or 503 sent
    answer_ledger(ctx.money, viewer_of(ctx, *key), q, r);
  });
}

}  // namespace leadflow
