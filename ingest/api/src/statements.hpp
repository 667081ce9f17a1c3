#pragma once
// Private: statements and closed periods (docs/statements.md): GET /v1/statements,
// GET /v1/periods, POST /v1/periods/{period}/close. Which entry belongs to which period and the
// totals are leadflow/money/statements.hpp's; what each reader sees, leadflow/visibility/
// statements.hpp's.
#include <functional>
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/statements.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the statement handlers use besides the key that authorised the request. The routes
/// bind them to IngestContext; tests hand in fakes.
struct StatementPorts {
  StatementStore& statements;  // closes, and the ledger entries statements are cut from
  AccountsStore& accounts;     // the buyer or seller a statement is of, and a buyer's zone
  const Clock& clock;
  /// Writes an audit record with the request's route and client address.
  std::function<void(const AuditRecord&)> audit;
};

/// GET /v1/statements?party=&id=&period=[&format=csv]: one account's statement for a period, as
/// `viewer` reads it (a buyer or seller its own only: party and id default to its own), JSON or
/// CSV; 400 naming each parameter at fault, 404 for another's or an unknown account, 503.
void answer_statement(const StatementPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res);

/// GET /v1/periods?calendar=month|week: the last 12 periods to the current one (UTC names) and
/// every closed one, newest first, each open or closed (and, for the operator, closable).
void answer_periods(const StatementPorts& ports, const Viewer& viewer, const http::Request& req,
                    http::Response& res);

/// POST /v1/periods/{period}/close by the operator's `key`: 201 with the close and its frozen
/// totals; 400 for a period that is not one, 422 before it ended everywhere, 409 when closed
/// before (with that close), 503. Audited.
void answer_close(const StatementPorts& ports, const ApiKey& key, const Viewer& viewer,
                  std::string_view period, http::Response& res);

void register_statements(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
