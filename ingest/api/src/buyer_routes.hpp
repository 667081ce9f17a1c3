#pragma once
// Private: the operator's buyer routes (GET and POST /v1/buyers, GET and PUT /v1/buyers/{id});
// their routes are registered by register_surface_a.
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/audit.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/store/reporting.hpp"

namespace leadflow {

/// What the buyer routes use besides the operator's key that authorised the request. The routes
/// bind them to IngestContext; tests hand in fakes.
struct BuyerPorts {
  AccountsStore& accounts;            // the buyers
  MoneyStore& money;                  // a buyer's returns over its window, for its health
  ReportingStore& reporting;          // buyers' traffic over the last 24 hours, for their health
  const VerticalRegistry& verticals;  // the verticals a buyer may name
  const Clock& clock;
  bool allow_private_buyers;         // Config::allow_private_buyers
  BuyerVisibilityCache& visibility;  // forgets a buyer changed through this replica
  AuditStore& changes;               // the change log: each buyer made or changed, by whom
};

/// GET /v1/buyers: one page of buyers, oldest first, filtered by status and vertical, each with
/// its health (one rollup question for the page). 400 naming each parameter refused.
void answer_buyer_list(const BuyerPorts& ports, const http::Request& req, http::Response& res);

/// POST /v1/buyers: the buyer configured by the body (415, 400 naming each field refused), made
/// with a new id (201 with Location and ETag); 503 when the store cannot write it. Noted in the
/// change log as `by`'s.
void answer_buyer_create(const BuyerPorts& ports, const ChangeActor& by, const http::Request& req,
                         http::Response& res);

/// GET /v1/buyers/{id}: the buyer (secrets masked) with its returns and health, and its ETag;
/// 404 for an unknown id.
void answer_buyer(const BuyerPorts& ports, std::string_view buyer_id, http::Response& res);

/// PUT /v1/buyers/{id}: the body applied to the buyer as it is when written (docs/versions.md):
/// 404, 415, 400 naming each field refused, 412 for a stale If-Match, 409 when others kept
/// changing it, 503 when the store cannot write; else 200 with the buyer and its new ETag. The
/// fields changed are noted in the change log as `by`'s.
void answer_buyer_update(const BuyerPorts& ports, const ChangeActor& by, std::string_view buyer_id,
                         const http::Request& req, http::Response& res);

}  // namespace leadflow
