#pragma once
// Private: the change log's route (GET /v1/audit), the operator's alone.
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/audit.hpp"

namespace leadflow {

/// GET /v1/audit: one page of the change log, newest first, filtered by `q` (a part of the
/// object's or actor's id or name), `object_kind`, `actor` (an actor's id), `from` and `to`
/// (RFC 3339, or a bare date: a whole day in `tz`, both ends included; `tz` defaults to
/// `default_zone`, the signed-in user's zone, UTC for an API key), `limit` (1 to 100, default
/// 50) and `cursor`. 400 naming each parameter refused, 503 when the store cannot say.
void answer_change_log(AuditStore& changes, const http::Request& req, http::Response& res,
                       std::string_view default_zone = "UTC");

/// Registers GET /v1/audit: operator keys with admin and operator users only.
void register_change_log(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
