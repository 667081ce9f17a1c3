#pragma once
// Private: the change log's route (GET /v1/audit), the operator's alone.
#include "leadflow/api/api.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/audit.hpp"

namespace leadflow {

/// GET /v1/audit: one page of the change log, newest first, filtered by `q` (a part of the
/// object's or actor's id or name), `object_kind`, `actor` (an actor's id), `from` and `to`
/// (RFC 3339 or a bare date, `to` then through that UTC day), `limit` (1 to 100, default 50) and
/// `cursor`. 400 naming each parameter refused, 503 when the store cannot say.
void answer_change_log(AuditStore& changes, const http::Request& req, http::Response& res);

/// Registers GET /v1/audit: operator keys with admin and operator users only.
void register_change_log(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
