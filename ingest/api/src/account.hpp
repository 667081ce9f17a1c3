#pragma once
// Private: a buyer's own account (GET and PUT /v1/account, POST /v1/account/pause and /resume):
// what it reads of its configuration, its caps' and budgets' use, its health; pausing and
// resuming its own buying; changing the fields the operator opened to it.
#include <string>
#include <vector>

#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/audit.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/store/reporting.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the account routes use besides the reader. The routes bind them to IngestContext; tests
/// hand in fakes.
struct AccountPorts {
  AccountsStore& accounts;          // the buyer itself
  MoneyStore& money;                // its returns over its window
  ReportingStore& reporting;        // its traffic over the last 24 hours (health)
  DistributionStore& distribution;  // its sales and spend in each cap's and budget's period
  const Clock& clock;
  bool allow_private_buyers;                // Config::allow_private_buyers
  BuyerVisibilityCache& visibility;         // forgets the buyer once it changed itself
  AuditStore& changes;                      // the change log: the buyer as the actor
  const std::vector<std::string>& reasons;  // LEADFLOW_RETURN_REASONS
};

/// GET /v1/account: the buyer's own configuration as it may read it, `limits` (each cap and
/// budget with its use in the current period and when that period ends), `returns`, `health`
/// and the `return_reasons` the server accepts; a seller's own record as it may read it (its
/// statements' `time_zone` among it) and `campaigns` ({count, active}). 403 for the operator,
/// who has no account of its own; 503 when the store cannot say.
void answer_account(const AccountPorts& ports, const Viewer& viewer, http::Response& res);

/// POST /v1/account/pause (`active` false) and /resume (true): the buyer's own status; 200 with
/// the account as GET answers it, whether or not the status changed. Noted in the change log as
/// `by`'s when it changed.
void answer_account_buying(const AccountPorts& ports, const Viewer& viewer, const ChangeActor& by,
                           bool active, http::Response& res);

/// PUT /v1/account: `caps` and `filters`, each only where the operator opened it
/// (self_service). Any other field is 400 read_only naming it; a field not opened to the buyer
/// is 403; If-Match as on the operator's PUT (412, 409). Noted in the change log as `by`'s.
void answer_account_update(const AccountPorts& ports, const Viewer& viewer, const ChangeActor& by,
                           const http::Request& req, http::Response& res);

/// Registers the routes above: the reads with leads:read, the changes with buyers:write (a
/// buyer's key or dashboard user; see docs/security.md).
void register_account(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
