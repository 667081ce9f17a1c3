// GET /v1/verticals and /v1/verticals/{name} against the store as FakeStore: each reader's
// verticals from the registry, a buyer's kept to those of its record; a buyer whose record the
// store cannot read is a 503 (never the verticals of no buyer, never an empty list), one whose
// record is gone a 404; any query parameter a 400.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/http/parser.hpp"
#include "verticals.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

class VerticalsHandler : public ::testing::Test {
 protected:
  void SetUp() override {
    Buyer b;
    b.id = "by_sun";
    b.name = "Sun";
    b.verticals = {"solar", "legal"};
    b.ping_url = "https://buyer.example.com/ping";
    b.post_url = "https://buyer.example.com/post";
    ASSERT_EQ(store.insert_buyer(b), StoreStatus::kOk);
  }

  http::Response get(const Viewer& viewer, const std::string& target) {
    const std::string raw = "GET " + target + " HTTP/1.1\r\nHost: a.example\r\n\r\n";
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    const VerticalPorts ports{registry, store};
    const std::string path = target.substr(0, target.find('?'));
    if (path == "/v1/verticals")
      answer_verticals(ports, viewer, req, res);
    else
      answer_vertical(ports, viewer, path.substr(std::string("/v1/verticals/").size()), req, res);
    return res;
  }

  ManualClock clock;
  FakeStore store{clock};
  VerticalRegistry registry = VerticalRegistry::defaults();
};

TEST_F(VerticalsHandler, ABuyerReadsTheVerticalsOfItsRecordOnly) {
  const http::Response res = get(Viewer::buyer("by_sun"), "/v1/verticals");
  ASSERT_EQ(res.status, 200) << res.body;
  const json data = json::parse(res.body)["data"];
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0]["vertical"], "legal");
  EXPECT_EQ(data[1]["vertical"], "solar");
  EXPECT_EQ(get(Viewer::buyer("by_sun"), "/v1/verticals/solar").status, 200);
  EXPECT_EQ(get(Viewer::buyer("by_sun"), "/v1/verticals/mortgage").status, 404);
  // The operator and a seller read every vertical.
  EXPECT_EQ(json::parse(get(Viewer{}, "/v1/verticals").body)["data"].size(), 11u);
  EXPECT_EQ(get(Viewer::seller("se_1"), "/v1/verticals/mortgage").status, 200);
}

// The re-offer policies the operator set are read from the store: every reader reads the one in
// force, so a store that cannot say is a 503 for each (never the configured policy instead).
TEST_F(VerticalsHandler, APolicySetByTheOperatorIsReadInForceAndAnOutageIsA503) {
  VerticalReoffer set{"solar", {{60}, 0}, 0, 0};
  ASSERT_EQ(store.set_vertical_reoffer(set), StoreStatus::kOk);
  const json op = json::parse(get(Viewer{}, "/v1/verticals/solar").body)["data"];
  EXPECT_EQ(op["reoffer"]["delays_seconds"], json({60}));
  EXPECT_EQ(op["reoffer_source"], "operator");
  const json seller = json::parse(get(Viewer::seller("se_1"), "/v1/verticals").body)["data"];
  for (const json& v : seller) {
    if (v["vertical"] == "solar") {
      EXPECT_EQ(v["reoffer"]["delays_seconds"], json({60}));
    }
  }
  store.unavailable_for(std::chrono::minutes(1));
  for (const char* target : {"/v1/verticals", "/v1/verticals/solar"}) {
    EXPECT_EQ(get(Viewer{}, target).status, 503) << target;
    EXPECT_EQ(get(Viewer::seller("se_1"), target).status, 503) << target;
  }
}

TEST_F(VerticalsHandler, ABuyerWhoseRecordTheStoreCannotReadIsA503AndAGoneOneA404) {
  store.unavailable_for(std::chrono::minutes(1));
  for (const char* target : {"/v1/verticals", "/v1/verticals/solar"}) {
    const http::Response down = get(Viewer::buyer("by_sun"), target);
    EXPECT_EQ(down.status, 503) << target << ": " << down.body;
    EXPECT_EQ(down.header("Retry-After"), "1");
  }
  clock.advance(std::chrono::minutes(2));
  EXPECT_EQ(get(Viewer::buyer("by_gone"), "/v1/verticals").status, 404);
  // An unknown vertical is a 404 before the buyer's record is asked for.
  store.unavailable_for(std::chrono::minutes(1));
  EXPECT_EQ(get(Viewer::buyer("by_sun"), "/v1/verticals/no_such").status, 404);
}

TEST_F(VerticalsHandler, AnyQueryParameterIsA400NamingIt) {
  const http::Response res = get(Viewer::seller("se_1"), "/v1/verticals/solar?fields=name");
  ASSERT_EQ(res.status, 400);
  EXPECT_EQ(json::parse(res.body)["errors"][0]["field"], "fields");
}

}  // namespace
}  // namespace leadflow::testing
