#pragma once
// Private: the operator's journal of the ledger (GET /v1/ledger; docs/money.md, "The ledger"):
// every movement of money, oldest first, filtered, in pages or as a CSV download.
#include <memory>
#include <string_view>

#include "errors.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What a GET /v1/ledger asks: the store's query (its filters, the page's size, the cursor's
/// position), whether as CSV, and the zone its whole days are read in.
struct LedgerAsk {
  LedgerQuery query;
  bool csv = false;
  std::shared_ptr<const TimeZone> tz;
};

/// Decodes the query: `from`, `to` (a date, a whole day in `tz`, else `default_zone`; or an
/// RFC 3339 instant; [from, to)), `buyer_id`, `seller_id`, `lead_id`, `kind` (sale, return),
/// `limit`, `cursor` (refused when it was given for other filters), `format`. Each parameter
/// refused (unknown, malformed) adds its error to `errors`.
LedgerAsk decode_ledger_query(const http::Request& req, std::string_view default_zone,
                              FieldErrors& errors);

/// GET /v1/ledger for `viewer` (the operator: the route refuses anyone else): the entries the
/// filters keep after the `cursor`, oldest first, `limit` (1-100) a page as `{success, data,
/// has_more, next_cursor}`, each entry as project_ledger_entry shows it; or CSV (`format=csv` or
/// `Accept: text/csv`), at most 10,000 entries a download with X-Has-More and X-Next-Cursor.
/// 400 naming each bad parameter, 503 when the store cannot read a page (never a short or empty
/// one).
void answer_ledger(MoneyStore& money, const Viewer& viewer, const http::Request& req,
                   http::Response& res, std::string_view default_zone = "UTC");

/// Registers the route: operator keys with reports:read, and signed-in operators.
void register_ledger(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
