#pragma once
// Private: the reports of Surface A (GET /v1/reports/...).
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/reporting.hpp"
#include "leadflow/visibility/reports.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the report handlers use besides the key that authorised the request: the rollups, the
/// clock (a report's default range ends at the current quarter hour) and the key of buyers'
/// source codes (IngestContext::visibility_secret). Tests hand in fakes.
struct ReportPorts {
  ReportingStore& reporting;
  const Clock& clock;
  std::string_view visibility_secret;
};

/// Answers the report of `kind` to `viewer`: 403 for a report it may not read, 400 naming each
/// parameter it may not ask, 503 when the store cannot say, else the rows (JSON or CSV).
void answer_report(const ReportPorts& ports, const Viewer& viewer, ReportKind kind,
                   const http::Request& req, http::Response& res);

/// GET /v1/reports/revenue, /v1/reports/performance and /v1/reports/unsold (reports:read; a
/// seller's reports hold its own leads, a buyer's its own purchases).
void register_reports(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
