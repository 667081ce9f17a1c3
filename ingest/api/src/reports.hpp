#pragma once
// Private: the reports of Surface A (GET /v1/reports/...).
#include "leadflow/api/api.hpp"

namespace leadflow {

/// GET /v1/reports/revenue and /v1/reports/performance (reports:read; a seller's reports hold
/// its own leads, a buyer's its own purchases).
void register_reports(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
