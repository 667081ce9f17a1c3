#pragma once
// The dashboard's single-page app (ingest/web), built by Vite and embedded in leadflow-ingest
// (dashboard_files.cpp is generated at build time from the built files; without Node it holds
// none and the dashboard answers 503).
#include <cstddef>
#include <string_view>

#include "leadflow/http/routes.hpp"

namespace leadflow {

/// One built file of the dashboard, as embedded: its URL path ("/index.html",
/// "/assets/index-3f2a.js"), media type and bytes. Static, read-only, thread-safe.
struct DashboardFile {
  std::string_view path;
  std::string_view content_type;
  std::string_view content;
};

/// The embedded files (generated); empty when the dashboard was not built.
extern const DashboardFile* const kDashboardFiles;
extern const std::size_t kDashboardFileCount;

/// Registers `GET /*` serving the dashboard: a built file by its path, index.html for any other
/// path (client routing), and 404 for what belongs to the API (/v1, /api). Register it after every
/// other route, since it takes every GET path.
void register_dashboard(Routes& routes);

/// The answer to a dashboard path, given the embedded files. Exposed for the unit test.
void answer_dashboard(const DashboardFile* files, std::size_t count, std::string_view path,
                      http::Response& res);

}  // namespace leadflow
