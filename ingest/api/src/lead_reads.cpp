// Surface A's lead reads: one lead as its reader may see it, and a page of its leads. The
// handlers decode, call and encode; the routes authorise (leads:read).
#include "lead_reads.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/reports/stretches.hpp"
#include "pages.hpp"

namespace leadflow {
namespace {

constexpr std::int64_t kOneDayMs = 86'400'000;

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

// The list's query as asked, cut to the reader's own leads; a refused parameter adds to `errors`.
LeadQuery decode_lead_query(const LeadReadPorts& ports, const Viewer& viewer,
                            const http::Request& req, FieldErrors& errors) {
  unknown_params(req,
                 {"status", "test", "vertical", "source", "buyer_id", "seller_id", "created_from",
                  "created_to", "tz", "limit", "cursor", "q"},
                 errors);
  LeadQuery q;
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
  auto tz = TimeZone::cached(req.has_param("tz") ? std::string_view(req.param("tz"))
                                                 : ports.default_zone);
  if (!tz) {
    if (req.has_param("tz"))
      errors.push_back({"tz", "not_allowed", "an IANA time zone, such as America/New_York"});
    tz = TimeZone::cached("UTC");
  }
  for (auto [name, out] :
       {std::pair{"created_from", &q.created_from_ms}, std::pair{"created_to", &q.created_to_ms}}) {
    if (!req.has_param(name)) continue;
    const std::string& text = req.param(name);
    auto ms = parse_rfc3339_ms(text);
    if (!ms) {
      errors.push_back({name, "invalid_format", "must be an RFC 3339 date-time or a date"});
      continue;
    }
    // A bare date is a whole day in the zone, both ends included: "created_to=2026-11-27" means
    // through the end of the 27th (the store's bound is exclusive, so the next local midnight),
    // as a person choosing "to the 27th" means; a day is 23 or 25 hours where the clocks change
    // in it. A full date-time keeps its exact instant.
    const bool bare_date = text.size() == 10 && text[4] == '-' && text[7] == '-';
    if (bare_date) {
      const std::int64_t day = *ms / kOneDayMs + (out == &q.created_to_ms ? 1 : 0);
      *out = reports::local_midnight_ms(*tz, day);
    } else {
      *out = *ms;
    }
  }
  if (req.has_param("cursor")) {
    q.before_id = http::decode_cursor(req.param("cursor"));
    if (!is_valid_id(q.before_id, kLeadPrefix))
      errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
  }
  return q;
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
    if (status == DeliveryStatus::kDelivered || status == DeliveryStatus::kReturned)
      data["ledger"] = project_ledger(viewer, money.ledger);
  }
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

void answer_lead_list(const LeadReadPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res) {
  FieldErrors errors;
  const LeadQuery q = decode_lead_query(ports, viewer, req, errors);
  if (!errors.empty()) {
    http::send_problem(res, 400, "invalid query parameters", errors);
    return;
  }
  send_page(
      res, q, [&](const LeadQuery& page) { return ports.intake.list_leads(page); },
      [](const LeadRecord& r) { return r.lead.id; },
      [&viewer, &ports](const LeadRecord& r) -> std::optional<json> {
        if (!viewer.is_buyer()) return project_lead(viewer, r, ports.labels, LeadDetail::kRow);
        // A listed row carries no sales: a buyer's own purchase of a shared lead is read
        // with the lead (a lead the store cannot read makes the page a 503).
        const auto whole = ports.intake.get_lead(r.lead.id);
        if (whole.status == StoreStatus::kUnavailable) return std::nullopt;
        return project_lead(viewer, whole.value ? *whole.value : r, ports.labels, LeadDetail::kRow);
      });
}

}  // namespace leadflow
