#pragma once
// Private: the verticals' settings as each party reads them (GET /v1/verticals and
// /v1/verticals/{name}; docs/visibility.md, "Verticals"). The settings are the registry loaded
// at start (LEADFLOW_VERTICALS); what each reader sees of them is leadflow/visibility/
// verticals.hpp's.
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the vertical routes use besides the reader. The routes bind them to IngestContext.
struct VerticalPorts {
  const VerticalRegistry& verticals;  // the settings, as loaded at start
  AccountsStore& accounts;            // a buyer's own record: the verticals it buys
};

/// GET /v1/verticals: every vertical `viewer` reads, by name, each as it reads it; a buyer's
/// only those it buys. 400 for any query parameter; 404 when the buyer's record is gone, 503
/// when the store cannot read it.
void answer_verticals(const VerticalPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res);

/// GET /v1/verticals/{name}: the vertical as `viewer` reads it; 404 for no such vertical or, for
/// a buyer, one it does not buy (the same answer); 400 and 503 as above. The operator's answer
/// carries the re-offer setting's ETag (its `reoffer_version`, "v0" never set).
void answer_vertical(const VerticalPorts& ports, const Viewer& viewer, std::string_view name,
                     const http::Request& req, http::Response& res);

/// The answer to a change of a vertical's re-offer policy (Management::set_vertical_reoffer,
/// reset_vertical_reoffer): 200 with the vertical's whole view and the setting's new ETag, 400
/// naming the member at fault, 404 for no such vertical, 412 at a version If-Match does not
/// allow, 409 when others kept changing it, 503 when the store cannot answer.
void answer_vertical_change(const Management::Created& changed, http::Response& res);

/// Registers the reading routes (any key or dashboard user of any party) and PUT and DELETE
/// /v1/verticals/{name}/reoffer (the operator's, with the admin scope).
void register_verticals(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
