#pragma once
// The visibility model applied to reports (docs/visibility.md, "Reports"): which report a reader
// may read, which keys it may cut and filter it by, under which column it reads a key, and
// which figures its rows and totals carry. The reports' handlers ask this file and decide
// nothing themselves, so a JSON answer, its CSV and the dashboard's pages agree.
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

enum class ReportKind { kRevenue, kPerformance, kUnsold };

/// Whether `viewer` may read a report of `kind` at all: a buyer does not read the unsold report
/// (why a lead went unsold is no buyer's; SPEC §8).
bool may_read_report(const Viewer& viewer, ReportKind kind);

/// Why `viewer` may not cut a report of `kind` by the key named `group` ("buyer", "vertical",
/// "source", "seller", "campaign", "reason"); empty when it may. The time cuts ("day",
/// "hour") are every reader's and are not asked here. A buyer may cut by seller: it reads
/// each seller as its opaque source code (report_column, report_value).
std::string refuse_group(const Viewer& viewer, ReportKind kind, std::string_view group);

/// Why `viewer` may not filter a report of `kind` by the key named `group`; empty when it
/// may. Its own buyer or seller is no refusal (the handler keeps the report to it anyway). A
/// buyer may not filter by seller unless it is shown sellers' names: a source code would need a
/// reverse lookup from the code to the seller, which would make the code a seller's name.
std::string refuse_filter(const Viewer& viewer, ReportKind kind, std::string_view group);

/// The keys `viewer` may cut a report of `kind` by, in order ("day" and "hour" first).
std::vector<std::string> report_groups(const Viewer& viewer, ReportKind kind);

/// The column under which `viewer` reads the key `group` in a row: "seller_id" for the
/// operator, a seller and a buyer shown sellers' names, "source_code" for any other buyer.
std::string report_column(const Viewer& viewer, std::string_view group);

/// The value `viewer` reads for the key `group` whose stored value is `value` (the seller's id
/// becomes the buyer's source code for it; `secret` is IngestContext::visibility_secret).
std::string report_value(const Viewer& viewer, std::string_view secret, std::string_view group,
                         std::string_view value);

/// Whether the figure `name` of a report of `kind` is in `viewer`'s rows and totals. A figure is
/// of one field class and belongs to one side: a seller's (its leads' counts, its payout), a
/// buyer's (its answers, its spend) or either's (counts that are both the seller's leads and
/// the buyer's purchases). A reader sees it when it may see the class and the figure is its
/// side's; the operator sees every figure.
bool may_see_figure(const Viewer& viewer, ReportKind kind, std::string_view name);

/// Every figure of a report of `kind`, in the order of its rows and CSV columns.
const std::vector<std::string>& report_figures(ReportKind kind);

}  // namespace leadflow
