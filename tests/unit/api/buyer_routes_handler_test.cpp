// The operator's buyer routes without a server: a request parsed as the server would, fake
// accounts, money and reporting ports, and the answer's status, headers and body. A buyer made,
// read, listed and changed; each refusal (415, 400 naming the field, 404, 412, 409, 503); the
// health's one rollup question for a page; a change shown at once to the buyer's own reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "buyer_routes.hpp"
#include "fake_change_log.hpp"
#include "fake_money_ports.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

// The reporting port: the performance cells of the buyers' traffic, the questions kept.
class FakeRollups final : public ReportingStore {
 public:
  bool up = true;
  std::vector<PerformanceCell> cells;
  std::vector<RollupQuery> asked;

  bool healthy() override { return up; }
  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery&) override {
    return std::nullopt;
  }
  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& q) override {
    asked.push_back(q);
    if (!up) return std::nullopt;
    return cells;
  }
  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery&) override {
    return std::nullopt;
  }
  void count_invalid(std::string_view, std::int64_t) override {}
  std::optional<std::int64_t> count_queued(std::string_view, std::int64_t) override {
    return std::nullopt;
  }
};

json buyer_body(const std::string& name = "Acme") {
  return {{"name", name},
          {"verticals", {"auto_insurance"}},
          {"delivery",
           {{"mode", "ping_post"},
            {"ping_url", "https://buyer.example/ping"},
            {"post_url", "https://buyer.example/post"},
            {"timeout_ms", 1000}}},
          {"pricing", {{"model", "bid"}, {"min_bid", 1.0}}}};
}

class BuyerHandler : public ::testing::Test {
 protected:
  FakeMoneyPorts store;
  FakeRollups rollups;
  ManualClock clock{SystemTime{std::chrono::milliseconds{1'775'000'000'000}}};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  BuyerVisibilityCache visibility{store, clock};
  // Private addresses allowed, as in a test installation: the buyers' example hosts are never
  // resolved (a unit test uses no network).
  testing::FakeChangeLog changes;
  BuyerPorts ports{store, store, rollups, verticals, clock, true, visibility, changes};
  const ChangeActor by{"us_operator", "Olga", "dashboard"};

  static http::Request request(const std::string& method, const std::string& target,
                               const std::string& body = "",
                               const std::string& headers = "Content-Type: application/json\r\n") {
    const std::string raw = method + " " + target + " HTTP/1.1\r\nHost: a.example\r\n" + headers +
                            "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    return req;
  }
  http::Response create(const json& body) {
    http::Response res;
    answer_buyer_create(ports, by, request("POST", "/v1/buyers", body.dump()), res);
    return res;
  }
  http::Response read(const std::string& id) {
    http::Response res;
    answer_buyer(ports, id, res);
    return res;
  }
  http::Response list(const std::string& query) {
    http::Response res;
    answer_buyer_list(ports, request("GET", "/v1/buyers?" + query), res);
    return res;
  }
  http::Response update(const std::string& id, const json& body, const std::string& if_match = "") {
    std::string headers = "Content-Type: application/json\r\n";
    if (!if_match.empty()) headers += "If-Match: " + if_match + "\r\n";
    http::Response res;
    answer_buyer_update(ports, by, id, request("PUT", "/v1/buyers/" + id, body.dump(), headers),
                        res);
    return res;
  }
  std::string made(const std::string& name = "Acme") {
    const http::Response res = create(buyer_body(name));
    EXPECT_EQ(res.status, 201) << res.body;
    return json::parse(res.body)["data"]["buyer_id"];
  }
  static std::vector<std::string> fields_of(const http::Response& res) {
    const json body = json::parse(res.body);
    std::vector<std::string> out;
    for (const auto& e : body["errors"]) out.push_back(e["field"]);
    return out;
  }
};

TEST_F(BuyerHandler, MakesABuyerWithItsLocationAndETag) {
  const http::Response res = create(buyer_body());
  ASSERT_EQ(res.status, 201) << res.body;
  const json data = json::parse(res.body)["data"];
  const std::string id = data["buyer_id"];
  EXPECT_EQ(res.header("Location"), "/v1/buyers/" + id);
  EXPECT_EQ(res.header("ETag"), "\"v1\"");
  EXPECT_EQ(data["version"], 1);
  ASSERT_TRUE(store.buyers.count(id));
  EXPECT_EQ(store.buyers[id].name, "Acme");
}

TEST_F(BuyerHandler, RefusesABadBuyerNamingEachField) {
  EXPECT_EQ(fields_of(create(json::object())),
            (std::vector<std::string>{"name", "verticals", "delivery"}));
  json unknown_vertical = buyer_body();
  unknown_vertical["verticals"] = {"auto_insurance", "moon_rentals"};
  EXPECT_EQ(fields_of(create(unknown_vertical)), std::vector<std::string>{"verticals[1]"});
  // An installation that allows no private address refuses a buyer posting to one.
  json private_url = buyer_body();
  private_url["delivery"]["ping_url"] = "http://127.0.0.1:8080/ping";
  private_url["delivery"]["post_url"] = "http://10.0.0.1/post";
  BuyerPorts public_only = ports;
  public_only.allow_private_buyers = false;
  http::Response refused;
  answer_buyer_create(public_only, by, request("POST", "/v1/buyers", private_url.dump()), refused);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(fields_of(refused),
            (std::vector<std::string>{"delivery.ping_url", "delivery.post_url"}));
  http::Response not_json;
  answer_buyer_create(
      ports, by, request("POST", "/v1/buyers", "name=x", "Content-Type: text/plain\r\n"), not_json);
  EXPECT_EQ(not_json.status, 415);
  EXPECT_TRUE(store.buyers.empty());
}

TEST_F(BuyerHandler, AStoreThatCannotWriteIsA503) {
  store.writes_down = true;
  EXPECT_EQ(create(buyer_body()).status, 503);
  store.writes_down = false;
  const std::string id = made();
  store.writes_down = true;
  EXPECT_EQ(update(id, {{"name", "Renamed"}}).status, 503);
  EXPECT_EQ(store.buyers[id].name, "Acme");
}

TEST_F(BuyerHandler, ReadsABuyerWithItsReturnsHealthAndETag) {
  const std::string id = made();
  PerformanceCell traffic;
  traffic.keys = {id};
  rollups.cells = {traffic};
  const http::Response res = read(id);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.header("ETag"), "\"v1\"");
  const json data = json::parse(res.body)["data"];
  EXPECT_EQ(data["returns"]["sales"], 10);
  EXPECT_EQ(data["returns"]["returned"], 1);
  EXPECT_EQ(data["health"]["status"], "idle");
  ASSERT_EQ(rollups.asked.size(), 1u);
  EXPECT_EQ(rollups.asked.front().filters.size(), 1u);  // this buyer's traffic alone
  EXPECT_EQ(read("by_nobody").status, 404);
}

// Our own failure is never an answer: a buyer the store cannot read is a 503 with Retry-After,
// never "no such buyer"; a buyer the store has not is a 404, one it has a 200.
TEST_F(BuyerHandler, ABuyerTheStoreCannotReadIsA503NotA404) {
  const std::string id = made();
  store.buyers_down = true;
  const http::Response down = read(id);
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(down.header("Retry-After"), "1");
  EXPECT_EQ(json::parse(down.body)["status"], 503);
  EXPECT_EQ(json::parse(down.body)["detail"], "the store cannot be reached; retry");
  EXPECT_EQ(read("by_nobody").status, 503);
  // A change of a buyer the store cannot read: 503, nothing changed.
  EXPECT_EQ(update(id, {{"name", "Renamed"}}).status, 503);
  EXPECT_EQ(store.buyer_updates, 0);
  store.buyers_down = false;
  EXPECT_EQ(read("by_nobody").status, 404);
  EXPECT_EQ(read(id).status, 200);
  EXPECT_EQ(store.buyers[id].name, "Acme");
}

TEST_F(BuyerHandler, AListTheStoreCannotReadIsA503NotAnEmptyPage) {
  // No buyer at all: an empty page.
  const http::Response none = list("");
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(json::parse(none.body)["data"], json::array());
  made();
  const http::Response one = list("");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json::parse(one.body)["data"].size(), 1u);
  store.buyers_down = true;
  const http::Response down = list("");
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(down.header("Retry-After"), "1");
  EXPECT_FALSE(json::parse(down.body).contains("data"));
}

TEST_F(BuyerHandler, AHealthTheStoreCannotSayIsUnknownNotAFailure) {
  const std::string id = made();
  rollups.up = false;
  const http::Response res = read(id);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["data"]["health"]["status"], "unknown");
}

TEST_F(BuyerHandler, ListsAPageWithOneRollupQuestionForAllOfIt) {
  for (const char* name : {"One", "Two", "Three"}) {
    made(name);
    clock.advance(std::chrono::milliseconds(1));
  }
  const http::Response res = list("limit=2");
  ASSERT_EQ(res.status, 200) << res.body;
  const json body = json::parse(res.body);
  EXPECT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["has_more"], true);
  EXPECT_EQ(body["next_cursor"],
            http::encode_cursor(body["data"][1]["buyer_id"].get<std::string>()));
  EXPECT_TRUE(body["data"][0]["health"].is_object());
  EXPECT_EQ(rollups.asked.size(), 1u);
  EXPECT_TRUE(rollups.asked.front().filters.empty());
  ASSERT_EQ(store.buyer_lists.size(), 1u);
  EXPECT_EQ(store.buyer_lists.front().limit, 3);

  ASSERT_EQ(list("status=paused&vertical=auto_insurance").status, 200);
  ASSERT_TRUE(store.buyer_lists.back().active.has_value());
  EXPECT_FALSE(*store.buyer_lists.back().active);
  EXPECT_EQ(store.buyer_lists.back().vertical, "auto_insurance");
}

TEST_F(BuyerHandler, RefusesEachBadListParameterBeforeAskingTheStore) {
  const http::Response res = list("status=asleep&limit=101&cursor=zzz&colour=red");
  EXPECT_EQ(res.status, 400);
  const std::vector<std::string> fields = fields_of(res);
  for (const char* f : {"colour", "limit", "status", "cursor"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), f), fields.end()) << f;
  EXPECT_TRUE(store.buyer_lists.empty());
  EXPECT_TRUE(rollups.asked.empty());
}

TEST_F(BuyerHandler, ChangesTheFieldsTheBodyNamesAtTheNextVersion) {
  const std::string id = made();
  const http::Response res = update(id, {{"name", "Renamed"}, {"version", 1}}, "\"v1\"");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.header("ETag"), "\"v2\"");
  const json data = json::parse(res.body)["data"];
  EXPECT_EQ(data["name"], "Renamed");
  EXPECT_EQ(data["version"], 2);
  EXPECT_EQ(store.buyers[id].verticals, std::vector<std::string>{"auto_insurance"});
}

TEST_F(BuyerHandler, NotesEachBuyerMadeOrChangedInTheChangeLogByItsActor) {
  const std::string id = made();
  ASSERT_EQ(changes.entries.size(), 1u);
  EXPECT_EQ(changes.entries[0].action, "created");
  EXPECT_EQ(changes.entries[0].object_id, id);
  ASSERT_EQ(update(id, {{"name", "Renamed"}}).status, 200);
  ASSERT_EQ(update(id, {{"name", "Renamed"}}).status, 200);  // changes nothing: not noted
  EXPECT_EQ(update(id, {{"verticals", {"moon_rentals"}}}).status, 400);  // refused: not noted
  ASSERT_EQ(changes.entries.size(), 2u);
  const ChangeEntry& e = changes.entries[1];
  EXPECT_EQ(e.action, "updated");
  EXPECT_EQ(e.object_kind, "buyer");
  EXPECT_EQ(e.object_name, "Renamed");
  EXPECT_EQ(e.actor.id, "us_operator");
  EXPECT_EQ(e.actor.surface, "dashboard");
  ASSERT_EQ(e.changes.size(), 1u);
  EXPECT_EQ(e.changes[0].field, "name");
  EXPECT_EQ(e.changes[0].before, "Acme");
  EXPECT_EQ(e.changes[0].after, "Renamed");
}

TEST_F(BuyerHandler, AChangeIsShownAtOnceToTheBuyersOwnReads) {
  const std::string id = made();
  EXPECT_FALSE(visibility.shows_seller_names(id));  // kept for a second
  ASSERT_EQ(update(id, {{"visibility", {{"seller_names", true}}}}).status, 200);
  EXPECT_TRUE(visibility.shows_seller_names(id));
}

TEST_F(BuyerHandler, RefusesAChangeByWhatStoppedIt) {
  const std::string id = made();
  EXPECT_EQ(update("by_nobody", {{"name", "X"}}).status, 404);
  EXPECT_EQ(fields_of(update(id, {{"version", "one"}})), std::vector<std::string>{"version"});
  EXPECT_EQ(fields_of(update(id, {{"verticals", {"moon_rentals"}}})),
            std::vector<std::string>{"verticals[0]"});
  const http::Response stale = update(id, {{"name", "X"}}, "\"v7\"");
  EXPECT_EQ(stale.status, 412);
  EXPECT_EQ(stale.header("ETag"), "\"v1\"");
  store.buyer_races = true;
  EXPECT_EQ(update(id, {{"name", "X"}}).status, 409);
  EXPECT_GT(store.buyer_updates, 1);  // the change was tried again on what others wrote
  http::Response not_json;
  answer_buyer_update(ports, by, id, request("PUT", "/v1/buyers/" + id, "x", ""), not_json);
  EXPECT_EQ(not_json.status, 415);
  EXPECT_EQ(store.buyers[id].name, "Acme");
}

}  // namespace
}  // namespace leadflow::testing
