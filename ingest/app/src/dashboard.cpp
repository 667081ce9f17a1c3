#include "leadflow/ingest_app/dashboard.hpp"

namespace leadflow {
namespace {

// The app loads nothing from elsewhere and has no inline script or style, so the policy can
// allow only its own origin (and data: images for the favicon).
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

void security_headers(http::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Content-Type-Options", "nosniff");
}

bool api_path(std::string_view path) {
  for (std::string_view prefix : {"/v1", "/api"}) {
    if (path.substr(0, prefix.size()) == prefix &&
        (path.size() == prefix.size() || path[prefix.size()] == '/'))
      return true;
  }
  return false;
}

const DashboardFile* find(const DashboardFile* files, std::size_t count, std::string_view path) {
  for (std::size_t i = 0; i < count; ++i)
    if (files[i].path == path) return &files[i];
  return nullptr;
}

}  // namespace

void answer_dashboard(const DashboardFile* files, std::size_t count, std::string_view path,
                      http::Response& res) {
  if (api_path(path)) {
    res.status = 404;  // the API's own problem body (Routes::on_error)
    return;
  }
  security_headers(res);
  const DashboardFile* index = find(files, count, "/index.html");
  if (index == nullptr) {
    res.status = 503;
    res.set_header("Cache-Control", "no-store");
    res.set_content(
        "<!doctype html><title>leadflow</title><p>dashboard not built: build leadflow with Node "
        "and npm present (scripts/deps.sh installs them)</p>\n",
        "text/html; charset=utf-8");
    return;
  }
  const bool asset = path.rfind("/assets/", 0) == 0;
  const DashboardFile* file = find(files, count, path);
  if (file == nullptr && asset) {
    res.status = 404;  // a missing script must not be answered with the page
    return;
  }
  if (file == nullptr) file = index;  // a client route: the app decides what it shows
  // Vite names every asset by its content's hash: it can be kept for ever. The page itself must
  // be checked each time, so a new release's assets are picked up.
  res.set_header("Cache-Control", asset ? "public, max-age=31536000, immutable" : "no-cache");
  res.status = 200;
  res.set_content(std::string(file->content), file->content_type);
}

void register_dashboard(Routes& routes) {
  routes.get("/*", [](const http::Request& req, http::Response& res) {
    answer_dashboard(kDashboardFiles, kDashboardFileCount, req.path(), res);
  });
}

}  // namespace leadflow
