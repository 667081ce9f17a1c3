#include "leadflow/ingest_app/dashboard.hpp"

#include <gtest/gtest.h>

#include <string>

namespace leadflow {
namespace {

const DashboardFile kBuilt[] = {
    {"/assets/index-1a2b.js", "text/javascript; charset=utf-8", "console.log(1)"},
    {"/favicon.svg", "image/svg+xml", "<svg/>"},
    {"/index.html", "text/html; charset=utf-8", "<!doctype html><div id=app></div>"},
};

http::Response answer(std::string_view path, const DashboardFile* files = kBuilt,
                      std::size_t count = std::size(kBuilt)) {
  http::Response res;
  res.set_header("Cache-Control", "no-store");  // what every answer starts with
  answer_dashboard(files, count, path, res);
  return res;
}

void expect_security_headers(const http::Response& res) {
  EXPECT_EQ(res.header("Content-Security-Policy"),
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  EXPECT_EQ(res.header("X-Frame-Options"), "DENY");
  EXPECT_EQ(res.header("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(res.header("X-Content-Type-Options"), "nosniff");
}

TEST(Dashboard, HashedAssetsAreKeptForEverThePageIsCheckedEachTime) {
  const http::Response js = answer("/assets/index-1a2b.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, "console.log(1)");
  EXPECT_EQ(js.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.header("Cache-Control"), "public, max-age=31536000, immutable");
  expect_security_headers(js);

  const http::Response page = answer("/index.html");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.header("Cache-Control"), "no-cache");
  expect_security_headers(page);
  EXPECT_EQ(answer("/favicon.svg").header("Cache-Control"), "no-cache");
}

TEST(Dashboard, ClientRoutesGetThePage) {
  for (const char* path : {"/", "/leads", "/leads/ld_1", "/settings/api-keys", "/v1x", "/apis"}) {
    const http::Response res = answer(path);
    EXPECT_EQ(res.status, 200) << path;
    EXPECT_EQ(res.body, "<!doctype html><div id=app></div>") << path;
    EXPECT_EQ(res.header("Cache-Control"), "no-cache") << path;
    expect_security_headers(res);
  }
}

TEST(Dashboard, TheApiAndMissingAssetsAreNotThePage) {
  for (const char* path : {"/v1", "/v1/", "/v1/nothing", "/api", "/api/v1/nothing"}) {
    const http::Response res = answer(path);
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_TRUE(res.body.empty()) << path;  // the API's problem body is filled later
  }
  const http::Response asset = answer("/assets/gone-9f8e.js");
  EXPECT_EQ(asset.status, 404);
  EXPECT_TRUE(asset.body.empty());
}

TEST(Dashboard, WithoutABuiltDashboardItSaysSo) {
  const http::Response res = answer("/", nullptr, 0);
  EXPECT_EQ(res.status, 503);
  EXPECT_NE(res.body.find("dashboard not built"), std::string::npos);
  EXPECT_EQ(res.header("Cache-Control"), "no-store");
  expect_security_headers(res);
  EXPECT_EQ(answer("/v1/leads", nullptr, 0).status, 404);
}

}  // namespace
}  // namespace leadflow
