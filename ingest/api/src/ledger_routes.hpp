#pragma once
// Private: the operator's journal of the ledger (GET /v1/ledger; docs/money.md, "The ledger"):
// every movement of money, oldest first, in pages or as a CSV download.
#include "leadflow/api/api.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// GET /v1/ledger for `viewer` (the operator: the route refuses anyone else): entries after the
/// `cursor`, oldest first, `limit` (1-100) a page as `{success, data, has_more, next_cursor}`,
/// each entry as project_ledger_entry shows it; or CSV (`format=csv` or `Accept: text/csv`), at
/// most 10,000 entries a download with X-Has-More and X-Next-Cursor. 400 for a bad parameter,
/// 503 when the store cannot read a page (never a short or empty one).
void answer_ledger(MoneyStore& money, const Viewer& viewer, const http::Request& req,
                   http::Response& res);

/// Registers the route: operator keys with reports:read, and signed-in operators.
void register_ledger(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
