#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "leadflow/http/parser.hpp"
#include "leadflow/http/routes.hpp"

namespace leadflow {
namespace {

// A request read by the server's own parser.
http::Request request(const std::string& method, const std::string& target) {
  http::Request req;
  const std::string raw = method + " " + target + " HTTP/1.1\r\nHost: test\r\n\r\n";
  EXPECT_EQ(http::parse_request(raw, http::ParseLimits{}, req).status,
            http::ParseStatus::kComplete);
  return req;
}

// Some of the front's routes, registered in its order (the legacy form last).
Routes front_routes() {
  const Routes::Handler none = [](const http::Request&, http::Response&) {};
  Routes routes;
  routes.get("/healthz", none);
  routes.post("/v1/leads", none);
  routes.get("/v1/leads", none);
  routes.get("/v1/leads/{id}", none);
  routes.get("/api/v1/stats/{key}", none);
  routes.post_inline("/api/v1/lead", [](const std::shared_ptr<Exchange>&) {});
  routes.post_inline("/{seller_campaign_key}", [](const std::shared_ptr<Exchange>&) {});
  return routes;
}

// The matched route's pattern, which the metrics use as the route label ("" when unmatched).
std::string routed(const Routes& routes, const std::string& method, const std::string& target) {
  http::Request req = request(method, target);
  const Routes::Route* route = routes.find(req);
  EXPECT_EQ(route != nullptr, !req.route().empty());
  return std::string(req.route());
}

TEST(Routes, ThePatternIsTheRouteLabel) {
  const Routes routes = front_routes();
  EXPECT_EQ(routed(routes, "GET", "/v1/leads/ld_123"), "/v1/leads/{id}");
  EXPECT_EQ(routed(routes, "POST", "/v1/leads"), "/v1/leads");
  EXPECT_EQ(routed(routes, "POST", "/lfc_secret"), "/{seller_campaign_key}");
  EXPECT_EQ(routed(routes, "GET", "/api/v1/stats/lfc_secret"), "/api/v1/stats/{key}");
  EXPECT_EQ(routed(routes, "POST", "/api/v1/lead"),
            "/api/v1/lead");  // named routes win over the legacy form
  EXPECT_EQ(routed(routes, "HEAD", "/healthz"), "/healthz");  // HEAD takes GET's route
  EXPECT_EQ(routed(routes, "GET", "/random/deep/path"), "");
  EXPECT_EQ(routed(routes, "DELETE", "/v1/leads"), "");
}

TEST(Routes, AStarTakesTheRestOfThePathAfterEveryOtherRoute) {
  Routes routes = front_routes();
  routes.get("/*", [](const http::Request&, http::Response&) {});
  EXPECT_EQ(routed(routes, "GET", "/"), "/*");
  EXPECT_EQ(routed(routes, "GET", "/leads"), "/*");
  EXPECT_EQ(routed(routes, "GET", "/random/deep/path"), "/*");
  EXPECT_EQ(routed(routes, "GET", "/assets/index-1a2b.js"), "/*");
  EXPECT_EQ(routed(routes, "HEAD", "/buyers/by_1"), "/*");
  EXPECT_EQ(routed(routes, "GET", "/v1/leads/ld_1"), "/v1/leads/{id}");  // registered first
  EXPECT_EQ(routed(routes, "GET", "/healthz"), "/healthz");
  EXPECT_EQ(routed(routes, "POST", "/a/b"), "");  // GET only
  EXPECT_EQ(routed(routes, "POST", "/lfc_secret"), "/{seller_campaign_key}");
}

TEST(Routes, AParameterIsOneNonEmptySegment) {
  const Routes routes = front_routes();
  http::Request req = request("GET", "/v1/leads/ld%2F1?x=1");  // decoded: "/v1/leads/ld/1"
  EXPECT_EQ(routes.find(req), nullptr);
  req = request("GET", "/v1/leads/ld_1?x=1");
  ASSERT_NE(routes.find(req), nullptr);
  EXPECT_EQ(req.match(1), "ld_1");
  EXPECT_EQ(routed(routes, "GET", "/v1/leads/"), "");
  EXPECT_EQ(routed(routes, "GET", "/v1/leads/a/b"), "");
  EXPECT_EQ(routed(routes, "POST", "/"), "");
  EXPECT_EQ(routed(routes, "POST", "/a/b"), "");
  req = request("POST", "/key%20with%20space");
  ASSERT_NE(routes.find(req), nullptr);
  EXPECT_EQ(req.match(1), "key with space");
}

// What an exchange hands its server: every complete() and complete_at(), in order.
class RecordingHost : public ExchangeHost {
 public:
  struct Completion {
    std::shared_ptr<Exchange> exchange;
    std::optional<std::chrono::steady_clock::time_point> when;  // none: complete()
  };
  void complete(std::shared_ptr<Exchange> exchange) override {
    std::lock_guard lock(mu_);
    completions_.push_back({std::move(exchange), std::nullopt});
  }
  void complete_at(std::shared_ptr<Exchange> exchange,
                   std::chrono::steady_clock::time_point when) override {
    std::lock_guard lock(mu_);
    completions_.push_back({std::move(exchange), when});
  }
  void run_blocking(std::function<void()> task) override { task(); }
  void handler_failed(Exchange& exchange, const std::string&) override {
    exchange.res.status = 500;
  }
  std::vector<Completion> completions() const {
    std::lock_guard lock(mu_);
    return completions_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Completion> completions_;
};

TEST(Exchange, DoneAtHandsTheAnswerAndItsTimeToTheServerOnce) {
  RecordingHost host;
  auto ex = std::make_shared<Exchange>(host, 1);
  const auto when = ex->started + std::chrono::milliseconds(300);
  ex->done_at(when);
  ex->done_at(when + std::chrono::seconds(1));  // answered already: ignored
  ex->done();                                   // so is this
  const auto completions = host.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].exchange, ex);
  ASSERT_TRUE(completions[0].when.has_value());
  EXPECT_EQ(*completions[0].when, when);
}

TEST(Exchange, DoneThenDoneAtIsOneAnswerNow) {
  RecordingHost host;
  auto ex = std::make_shared<Exchange>(host, 1);
  ex->done();
  ex->done_at(ex->started + std::chrono::seconds(1));
  const auto completions = host.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_FALSE(completions[0].when.has_value());
}

TEST(Exchange, RacingDoneAndDoneAtCompleteExactlyOnce) {
  for (int round = 0; round < 50; ++round) {
    RecordingHost host;
    auto ex = std::make_shared<Exchange>(host, 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([ex, t] {
        if (t % 2 == 0)
          ex->done();
        else
          ex->done_at(std::chrono::steady_clock::now());
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(host.completions().size(), 1u) << "round " << round;
  }
}

}  // namespace
}  // namespace leadflow
