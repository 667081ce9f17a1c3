// Surface A's lead reads: one lead as its reader may see it, and a page of its leads. The
// handlers decode, call and encode; the routes authorise (leads:read).
#include "lead_reads.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "csv.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/money/returns.hpp"
#include "leadflow/reports/stretches.hpp"
#include "leadflow/visibility/account.hpp"
#include "leadflow/visibility/lead_csv.hpp"
#include "pages.hpp"

namespace leadflow {
namespace {

// A lead export holds at most this many rows (newest first); past it, X-Next-Cursor says where
// the next download starts.
constexpr int kCsvMaxRows = 10'000;
constexpr int kCsvPage = 100;

using nlohmann::json;

// One box finding a lead by its id, e-mail or phone (`q`); the e-mail and phone are matched by
// their search keys, as the lead's writer stored them. False for a text that is none of the three.
bool search_by(std::string_view secret, std::string_view text, LeadQuery& q) {
  const LeadSearchTerm term = parse_lead_search(text);
  switch (term.kind) {
    case LeadSearchTerm::Kind::kId:
      q.lead_id = term.value;
      return true;
    case LeadSearchTerm::Kind::kEmail:
      q.email_key = search_key(secret, SearchField::kEmail, term.value);
      return true;
    case LeadSearchTerm::Kind::kPhone:
      q.phone_key = search_key(secret, SearchField::kPhone, term.value);
      return true;
    case LeadSearchTerm::Kind::kNone:
      break;
  }
  return false;
}

// What the list answers: JSON, or CSV (`format=csv`, or `Accept: text/csv` without `format`).
struct ListAsk {
  LeadQuery query;
  bool csv = false;
  std::shared_ptr<const TimeZone> tz;
};

// The list's query as asked, cut to the reader's own leads; a refused parameter adds to `errors`.
ListAsk decode_lead_query(const LeadReadPorts& ports, const Viewer& viewer,
                          const http::Request& req, FieldErrors& errors) {
  unknown_params(req,
                 {"status", "test", "vertical", "source", "buyer_id", "seller_id", "created_from",
                  "created_to", "tz", "limit", "cursor", "q", "format"},
                 errors);
  ListAsk ask;
  ask.csv = asks_csv(req, errors);
  LeadQuery& q = ask.query;
  parse_limit(req, q.limit, errors);
  // A search is one more filter: the reader's own leads only, like every list, so another
  // party's lead is simply not found.
  if (req.has_param("q") && !search_by(ports.search_key, req.param("q"), q))
    errors.push_back({"q", "invalid_format", "must be a lead id, an e-mail address or a phone"});
  if (req.has_param("status")) {
    q.status = parse_delivery_status(req.param("status"));
    if (!q.status) errors.push_back({"status", "not_allowed", "unknown delivery status"});
  }
  // Test leads (leadflow/domain/test_mode.hpp): only them, or only real ones; both by default.
  if (req.has_param("test")) {
    const std::string test = req.param("test");
    if (test == "true" || test == "false")
      q.test = test == "true";
    else
      errors.push_back({"test", "not_allowed", "must be true or false"});
  }
  q.vertical = req.param("vertical");
  q.source = req.param("source");
  q.buyer_id = req.param("buyer_id");
  q.seller_id = req.param("seller_id");
  // A filter on a party the reader may not see is refused, naming it: answering it would tell
  // which of its leads that party bought or sold (SPEC §8). A seller may name itself, a buyer
  // itself; every list is cut to the reader's own leads whatever it names.
  if (req.has_param("buyer_id") &&
      !may_see(viewer, FieldClass::kBuyerIdentity, viewer.seller_id, q.buyer_id))
    errors.push_back({"buyer_id", "not_allowed",
                      viewer.is_seller() ? "a seller's leads cannot be filtered by buyer"
                                         : "a buyer key lists its own purchases"});
  if (req.has_param("seller_id") &&
      (viewer.is_buyer() ||
       !may_see(viewer, FieldClass::kSellerIdentity, q.seller_id, viewer.buyer_id)))
    errors.push_back({"seller_id", "not_allowed",
                      viewer.is_buyer() ? "a buyer's purchases cannot be filtered by seller"
                                        : "a seller key lists its own leads"});
  if (viewer.is_buyer()) {
    // A buyer lists its purchases: the leads sold to it (returned ones included).
    q.buyer_id = viewer.buyer_id;
  } else if (viewer.is_seller()) {
    q.seller_id = viewer.seller_id;
  }
  // Whole days are the reader's: `tz`, else a session's user's zone, else UTC (a key's).
  const auto tz = list_zone(req, ports.default_zone, errors);
  parse_day_bound(req, "created_from", false, *tz, q.created_from_ms, errors);
  parse_day_bound(req, "created_to", true, *tz, q.created_to_ms, errors);
  if (req.has_param("cursor")) {
    q.before_id = http::decode_cursor(req.param("cursor"));
    if (!is_valid_id(q.before_id, kLeadPrefix))
      errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
  }
  ask.tz = tz;
  return ask;
}

// A listed lead as `viewer` may see it; nullopt when a read it needed failed.
std::optional<json> list_row(const LeadReadPorts& ports, const Viewer& viewer,
                             const LeadRecord& r) {
  if (!viewer.is_buyer()) return project_lead(viewer, r, ports.labels, LeadDetail::kRow);
  // A listed row carries no sales: a buyer's own purchase of a shared lead is read with the
  // lead (a lead the store cannot read makes the page a 503).
  const auto whole = ports.intake.get_lead(r.lead.id);
  if (whole.status == StoreStatus::kUnavailable) return std::nullopt;
  return project_lead(viewer, whole.value ? *whole.value : r, ports.labels, LeadDetail::kRow);
}

// The export: the list's leads (every page of it, up to kCsvMaxRows) in the reader's columns,
// named after its days in the reader's zone ("leads_2026-11-01_2026-11-27.csv": the range asked
// for, or else the days of the first and last lead it holds).
void send_lead_csv(const LeadReadPorts& ports, const Viewer& viewer, const ListAsk& ask,
                   http::Response& res) {
  LeadQuery q = ask.query;
  json rows = json::array();
  std::int64_t newest_ms = 0, oldest_ms = 0;
  std::string next_cursor;
  while (true) {
    q.limit = kCsvPage + 1;
    auto page = ports.intake.list_leads(q);
    if (!page) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    const bool more = static_cast<int>(page->size()) > kCsvPage;
    if (more) page->resize(kCsvPage);
    for (const LeadRecord& r : *page) {
      auto row = list_row(ports, viewer, r);
      if (!row) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
      if (rows.empty()) newest_ms = r.lead.received_at_ms;
      oldest_ms = r.lead.received_at_ms;
      rows.push_back(lead_csv_row(*row));
    }
    if (!more || page->empty()) break;
    q.before_id = page->back().lead.id;
    if (static_cast<int>(rows.size()) >= kCsvMaxRows) {
      next_cursor = http::encode_cursor(q.before_id);
      break;
    }
  }
  const auto day = [&](std::int64_t ms) { return reports::local_date(*ask.tz, ms); };
  // An empty export without a range is named after today.
  const std::int64_t today_ms = ports.clock != nullptr ? ports.clock->now_ms() : 0;
  const std::int64_t now_ms = newest_ms > 0 ? newest_ms : today_ms;
  const std::string from = ask.query.created_from_ms > 0 ? day(ask.query.created_from_ms)
                                                         : day(oldest_ms > 0 ? oldest_ms : now_ms);
  const std::string to =
      ask.query.created_to_ms > 0 ? day(ask.query.created_to_ms - 1) : day(now_ms);
  res.status = 200;
  res.set_content(csv_table(lead_csv_columns(viewer), rows), "text/csv; charset=utf-8");
  res.set_header("Content-Disposition",
                 "attachment; filename=\"leads_" + from + "_" + to + ".csv\"");
  res.set_header("X-Has-More", next_cursor.empty() ? "false" : "true");
  if (!next_cursor.empty()) res.set_header("X-Next-Cursor", next_cursor);
}

// The buyer's return standing of its purchase (leadflow/visibility/account.hpp): its window, when
// it ends, whether it is still open and the reasons the server accepts. Null when there is no
// sale of this buyer (or no ports to tell); the string "unavailable" when its record cannot be
// read.
json return_window_of(const LeadReadPorts& ports, const Viewer& viewer, const LeadMoney& money) {
  if (ports.accounts == nullptr || ports.clock == nullptr || ports.return_reasons == nullptr)
    return nullptr;
  const money::LedgerEntry* sale = nullptr;
  for (const auto& e : money.ledger)
    if (e.kind == "sale" && e.buyer_id == viewer.buyer_id) sale = &e;
  if (sale == nullptr) return nullptr;
  const Lookup<Buyer> buyer = ports.accounts->get_buyer(viewer.buyer_id);
  if (!buyer.value) return "unavailable";
  const bool returned =
      std::any_of(money.returns.begin(), money.returns.end(),
                  [&](const LeadReturn& r) { return r.buyer_id == viewer.buyer_id; });
  const int days = buyer.value->return_window_days;
  const money::ReturnOutlook outlook =
      money::return_outlook(days, sale->at_ms, returned, ports.clock->now_ms());
  return project_return_outlook(viewer, viewer.buyer_id, days, money::to_string(outlook.standing),
                                outlook.window_ends_at_ms, *ports.return_reasons);
}

}  // namespace

// One lead as its reader may see it (leadflow/visibility/projections.hpp): the lead, and its
// returns, settlements and ledger entries, each projected; another account's lead is a 404. A
// lead or money the store could not read is a 503: never "no such lead", never a lead shown
// without its money.
void answer_lead(const LeadReadPorts& ports, const Viewer& viewer, std::string_view lead_id,
                 http::Response& res) {
  Lookup<LeadRecord> found{StoreStatus::kNotFound, std::nullopt};
  if (is_valid_id(lead_id, kLeadPrefix)) found = ports.intake.get_lead(lead_id);
  if (found.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(found.status, StoreStep::kRead));
  const std::optional<LeadRecord>& record = found.value;
  // Another account's lead is a 404: its existence is not theirs to know.
  if (!record || !may_see_lead(viewer, *record)) {
    http::send_problem(res, 404, "no such lead");
    return;
  }
  const std::string& seller_id = record->lead.seller_id;
  json data = project_lead(viewer, *record, ports.labels, LeadDetail::kFull);
  // A lead still pending, a duplicate or rejected was never sold nor settled: no money to read.
  const DeliveryStatus status = record->distribution.status;
  if (status != DeliveryStatus::kPending && status != DeliveryStatus::kDuplicate &&
      status != DeliveryStatus::kRejected) {
    const std::optional<LeadMoney> read = ports.money.money_of_lead(lead_id);
    if (!read) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    const LeadMoney& money = *read;
    if (status == DeliveryStatus::kReturned)
      data["returns"] = project_returns(viewer, money.returns, seller_id);
    if (!money.settlements.empty()) {
      // One per buyer settled with; "settlement" stays the first, as before shared sales.
      json all = project_settlements(viewer, money.settlements, seller_id);
      if (!all.empty()) {
        data["settlement"] = all.front();
        data["settlements"] = std::move(all);
      }
    }
    // The movements of money of the lead: each reader its own side of them.
    if (status == DeliveryStatus::kDelivered || status == DeliveryStatus::kReturned) {
      data["ledger"] = project_ledger(viewer, money.ledger);
      if (viewer.is_buyer()) {
        json window = return_window_of(ports, viewer, money);
        if (window.is_string())
          return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
        if (!window.is_null()) data["return_window"] = std::move(window);
      }
    }
  }
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

void answer_lead_list(const LeadReadPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res) {
  FieldErrors errors;
  const ListAsk ask = decode_lead_query(ports, viewer, req, errors);
  if (!errors.empty()) {
    http::send_problem(res, 400, "invalid query parameters", errors);
    return;
  }
  if (ask.csv) return send_lead_csv(ports, viewer, ask, res);
  send_page(
      res, ask.query, [&](const LeadQuery& page) { return ports.intake.list_leads(page); },
      [](const LeadRecord& r) { return r.lead.id; },
      [&viewer, &ports](const LeadRecord& r) { return list_row(ports, viewer, r); });
}

}  // namespace leadflow
