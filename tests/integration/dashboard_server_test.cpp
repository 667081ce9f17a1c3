// What the dashboard needs of the server, over real HTTPS: campaigns read by their seller and
// changed by the operator, buyers' health from the performance rollup, a test ping of a buyer
// through the workers' own protocol code, and the first operator user made at start.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "leadflow/api/buyer_test_ping.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

std::set<std::string> fields_of(const httplib::Result& r) {
  const json body = body_of(r);
  std::set<std::string> out;
  for (const auto& e : body["errors"]) out.insert(e["field"].get<std::string>());
  return out;
}

httplib::Result put(const ServiceFixture& svc, const std::string& path, const json& body,
                    const std::string& key) {
  return svc.https()->Put(path.c_str(), httplib::Headers{{"Authorization", "Bearer " + key}},
                          body.dump(), "application/json");
}

// --- campaigns --------------------------------------------------------------------------------

class CampaignApiTest : public ::testing::Test {
 protected:
  ServiceFixture svc{[] {
    ServiceOptions o;
    o.workers = 0;
    return o;
  }()};
};

TEST_F(CampaignApiTest, PutReplacesTheNamedFieldsAndKeepsTheRest) {
  const std::string seller = svc.add_seller("Owner");
  const auto [id, key] = svc.add_campaign(seller);
  const std::string path = "/v1/campaigns/" + id;
  auto before = svc.get(path, svc.operator_key());
  ASSERT_EQ(before->status, 200) << before->body;
  const json read = body_of(before)["data"];
  EXPECT_EQ(read["campaign_id"], id);
  EXPECT_EQ(read["campaign_key_hint"].get<std::string>().rfind("lfc_", 0), 0u);

  auto changed = put(svc, path,
                     {{"name", "Renamed"},
                      {"status", "paused"},
                      {"mode", "async"},
                      {"sync_timeout_ms", 900},
                      {"rate_limit_per_minute", 50},
                      {"payout", {{"model", "fixed"}, {"value", 2.5}}}},
                     svc.operator_key());
  ASSERT_EQ(changed->status, 200) << changed->body;
  json expected = read;
  expected["name"] = "Renamed";
  expected["status"] = "paused";
  expected["mode"] = "async";
  expected["sync_timeout_ms"] = 900;
  expected["rate_limit_per_minute"] = 50;
  expected["payout"] = {{"model", "fixed"}, {"value", 2.5}};
  expected["version"] = 2;  // each change moves the version (docs/versions.md)
  EXPECT_EQ(body_of(changed)["data"], expected);
  EXPECT_EQ(body_of(svc.get(path, svc.operator_key()))["data"], expected);

  // The view may be sent back as read; only the fields it names change.
  json back = expected;
  back["name"] = "Renamed again";
  auto again = put(svc, path, back, svc.operator_key());
  ASSERT_EQ(again->status, 200) << again->body;
  expected["name"] = "Renamed again";
  expected["version"] = 3;
  EXPECT_EQ(body_of(again)["data"], expected);
  auto name_only = put(svc, path, {{"name", "Third"}}, svc.operator_key());
  ASSERT_EQ(name_only->status, 200) << name_only->body;
  EXPECT_EQ(body_of(name_only)["data"]["mode"], "async");
  EXPECT_EQ(body_of(name_only)["data"]["payout"], expected["payout"]);
}

TEST_F(CampaignApiTest, PutRefusesTheSellerTheVerticalTheKeyAndBadValues) {
  const std::string seller = svc.add_seller("Owner");
  const std::string other = svc.add_seller("Other");
  const auto [id, key] = svc.add_campaign(seller);
  const std::string path = "/v1/campaigns/" + id;
  auto fixed =
      put(svc, path, {{"seller_id", other}, {"vertical", "mortgage"}, {"campaign_key", key}},
          svc.operator_key());
  ASSERT_EQ(fixed->status, 400) << fixed->body;
  EXPECT_EQ(fields_of(fixed), (std::set<std::string>{"seller_id", "vertical", "campaign_key"}));
  const json refused = body_of(fixed);
  for (const auto& e : refused["errors"]) {
    EXPECT_EQ(e["code"], "read_only");
  }

  auto bad = put(svc, path,
                 {{"name", 5},
                  {"status", "gone"},
                  {"mode", "later"},
                  {"sync_timeout_ms", 5},
                  {"rate_limit_per_minute", "many"},
                  {"payout", {{"model", "percent"}, {"value", 10}}},
                  {"colour", "red"}},
                 svc.operator_key());
  ASSERT_EQ(bad->status, 400) << bad->body;
  EXPECT_EQ(fields_of(bad),
            (std::set<std::string>{"name", "status", "mode", "sync_timeout_ms",
                                   "rate_limit_per_minute", "payout.model", "colour"}));
  EXPECT_EQ(put(svc, path, json::array(), svc.operator_key())->status, 400);
  // Nothing changed.
  const json now = body_of(svc.get(path, svc.operator_key()))["data"];
  EXPECT_EQ(now["name"], "Spring promo");
  EXPECT_EQ(now["seller_id"], seller);
  EXPECT_EQ(now["vertical"], "auto_insurance");

  EXPECT_EQ(put(svc, "/v1/campaigns/cp_nothing", {{"name", "X"}}, svc.operator_key())->status, 404);
  EXPECT_EQ(svc.get("/v1/campaigns/cp_nothing", svc.operator_key())->status, 404);
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller}});
  EXPECT_EQ(put(svc, path, {{"name", "Mine now"}}, seller_key)->status, 403);
}

TEST_F(CampaignApiTest, APausedCampaignStopsTakingLeadsWithinItsCacheTime) {
  const std::string seller = svc.add_seller("Owner");
  const auto [id, key] = svc.add_campaign(seller, {{"mode", "async"}});
  auto first = svc.post("/api/v1/lead", sample_campaign_lead(1, key), "");
  ASSERT_EQ(first->status, 202) << first->body;
  ASSERT_EQ(put(svc, "/v1/campaigns/" + id, {{"status", "paused"}}, svc.operator_key())->status,
            200);
  // The front caches campaigns for a second.
  int status = 0;
  for (int i = 0; i < 40 && status != 401; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = svc.post("/api/v1/lead", sample_campaign_lead(2 + i, key), "")->status;
  }
  EXPECT_EQ(status, 401);
  ASSERT_EQ(put(svc, "/v1/campaigns/" + id, {{"status", "active"}}, svc.operator_key())->status,
            200);
  for (int i = 0; i < 40 && status != 202; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = svc.post("/api/v1/lead", sample_campaign_lead(100 + i, key), "")->status;
  }
  EXPECT_EQ(status, 202);
}

TEST_F(CampaignApiTest, AKeysLastUseIsListed) {
  const std::string seller = svc.add_seller("Uses its key");
  const std::string key = svc.add_api_key({{"name", "used"}, {"seller_id", seller}});
  auto listed = [&] {
    auto r = svc.get("/v1/api-keys", svc.operator_key());
    EXPECT_EQ(r->status, 200) << r->body;
    const json body = body_of(r);
    for (const auto& k : body["data"])
      if (k["name"] == "used") return k;
    ADD_FAILURE() << "no key named used in " << r->body;
    return json::object();
  };
  EXPECT_TRUE(listed()["last_used_at"].is_null()) << listed().dump();
  ASSERT_EQ(svc.get("/v1/leads", key)->status, 200);
  const json used = listed();
  ASSERT_TRUE(used["last_used_at"].is_string()) << used.dump();
  EXPECT_TRUE(parse_rfc3339_ms(used["last_used_at"].get<std::string>()).has_value());
}

TEST_F(CampaignApiTest, ASellerListsOnlyItsOwnCampaignsWithoutKeys) {
  const std::string mine = svc.add_seller("Mine");
  const std::string theirs = svc.add_seller("Theirs");
  const auto [my_id, my_key] = svc.add_campaign(mine);
  const auto [their_id, their_key] = svc.add_campaign(theirs);
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", mine}});

  auto list = svc.get("/v1/campaigns", seller_key);
  ASSERT_EQ(list->status, 200) << list->body;
  const json data = body_of(list)["data"];
  ASSERT_EQ(data.size(), 1u) << list->body;
  EXPECT_EQ(data[0]["campaign_id"], my_id);
  EXPECT_FALSE(data[0].contains("campaign_key_hint"));
  EXPECT_EQ(list->body.find(my_key), std::string::npos);
  EXPECT_EQ(list->body.find(my_key.substr(0, 8)), std::string::npos);
  auto own = svc.get("/v1/campaigns/" + my_id, seller_key);
  ASSERT_EQ(own->status, 200) << own->body;
  EXPECT_FALSE(body_of(own)["data"].contains("campaign_key_hint"));
  EXPECT_EQ(svc.get("/v1/campaigns/" + their_id, seller_key)->status, 404);
  EXPECT_EQ(svc.get("/v1/campaigns?seller_id=" + theirs, seller_key)->status, 400);
  EXPECT_EQ(svc.get("/v1/campaigns?seller_id=" + mine, seller_key)->status, 200);
  EXPECT_EQ(svc.get("/v1/campaigns?colour=red", seller_key)->status, 400);

  // A seller user's session reads the same list.
  ASSERT_EQ(svc.post("/v1/users",
                     {{"email", "mine@example.com"},
                      {"name", "Mine"},
                      {"password", kPassword},
                      {"account", "seller"},
                      {"seller_id", mine}},
                     svc.operator_key())
                ->status,
            201);
  auto signed_in = svc.https()->Post(
      "/v1/session", json{{"email", "mine@example.com"}, {"password", kPassword}}.dump(),
      "application/json");
  ASSERT_EQ(signed_in->status, 201) << signed_in->body;
  const std::string set = signed_in->get_header_value("Set-Cookie");
  auto by_session =
      svc.https()->Get("/v1/campaigns", httplib::Headers{{"Cookie", set.substr(0, set.find(';'))}});
  ASSERT_EQ(by_session->status, 200) << by_session->body;
  EXPECT_EQ(body_of(by_session)["data"], data);

  // The operator sees every campaign, hints included; a buyer none.
  auto all = svc.get("/v1/campaigns", svc.operator_key());
  ASSERT_EQ(all->status, 200);
  ASSERT_EQ(body_of(all)["data"].size(), 2u);
  EXPECT_TRUE(body_of(all)["data"][0].contains("campaign_key_hint"));
  EXPECT_EQ(body_of(svc.get("/v1/campaigns?seller_id=" + theirs,
                            svc.operator_key()))["data"][0]["campaign_id"],
            their_id);
  auto sim = start_buyer("b", 5.0);
  const std::string buyer = svc.add_buyer(*sim);
  const std::string buyer_key = svc.add_api_key({{"name", "b"}, {"buyer_id", buyer}});
  EXPECT_EQ(svc.get("/v1/campaigns", buyer_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/campaigns/" + my_id, buyer_key)->status, 403);
  const std::string write_only =
      svc.add_api_key({{"name", "w"}, {"seller_id", mine}, {"scopes", {"leads:write"}}});
  EXPECT_EQ(svc.get("/v1/campaigns", write_only)->status, 403);
}

// --- buyer health -----------------------------------------------------------------------------

TEST(BuyerHealthTest, ListAndViewCarryTheLast24HoursOfTheRollup) {
  ServiceFixture svc;
  auto good = start_buyer("good", 12.0);
  auto bad = start_buyer("bad", 12.0);
  bad->set_error_rate(1.0);
  auto idle = start_buyer("idle", 12.0);
  const std::string good_id = svc.add_buyer(*good);
  const std::string bad_id = svc.add_buyer(*bad);
  const std::string idle_id = svc.add_buyer(*idle, "solar");
  for (int i = 0; i < 3; ++i) {
    auto r = svc.post("/v1/leads", sample_lead(i), svc.operator_key());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  json health;
  for (int i = 0; i < 100; ++i) {
    auto r = svc.get("/v1/buyers/" + bad_id, svc.operator_key());
    ASSERT_EQ(r->status, 200) << r->body;
    health = body_of(r)["data"]["health"];
    if (health["pings_24h"] == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(health, (json{{"status", "failing"},
                          {"pings_24h", 3},
                          {"posts_24h", 0},
                          {"errors_24h", 3},
                          {"timeouts_24h", 0},
                          {"error_rate_24h", 1.0},
                          {"return_rate", 0.0},
                          {"flagged", false}}));

  auto list = svc.get("/v1/buyers", svc.operator_key());
  ASSERT_EQ(list->status, 200) << list->body;
  std::map<std::string, json> by_id;
  const json listed = body_of(list);
  for (const auto& b : listed["data"]) by_id[b["buyer_id"]] = b["health"];
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id[bad_id], health);
  const json& g = by_id[good_id];
  EXPECT_EQ(g["status"], "healthy");
  EXPECT_EQ(g["pings_24h"], 3);
  EXPECT_EQ(g["posts_24h"], 3);
  EXPECT_EQ(g["errors_24h"], 0);
  EXPECT_EQ(g["error_rate_24h"], 0.0);
  EXPECT_EQ(by_id[idle_id], (json{{"status", "idle"},
                                  {"pings_24h", 0},
                                  {"posts_24h", 0},
                                  {"errors_24h", 0},
                                  {"timeouts_24h", 0},
                                  {"error_rate_24h", nullptr},
                                  {"return_rate", 0.0},
                                  {"flagged", false}}));

  // Read-only: sent back in a PUT, it is ignored.
  json view = body_of(svc.get("/v1/buyers/" + good_id, svc.operator_key()))["data"];
  view["health"]["status"] = "failing";
  auto same = put(svc, "/v1/buyers/" + good_id, {{"name", "good two"}, {"health", view["health"]}},
                  svc.operator_key());
  ASSERT_EQ(same->status, 200) << same->body;
  EXPECT_EQ(
      body_of(svc.get("/v1/buyers/" + good_id, svc.operator_key()))["data"]["health"]["status"],
      "healthy");
}

// --- test pings -------------------------------------------------------------------------------

TEST(BuyerTestPingTest, PingsTheBuyerAsAWorkerWouldAndAnswersWhatCameBack) {
  ServiceOptions o;
  o.workers = 0;
  ServiceFixture svc(o);
  auto sim = start_buyer("tested", 12.5);
  const std::string id =
      svc.add_buyer(*sim, "auto_insurance",
                    {{"delivery", {{"headers", {{"X-Api-Key", "buyer-secret-1234"}}}}},
                     {"filters", {{"states", {"TX"}}}}});
  const std::string path = "/v1/buyers/" + id + "/test-ping";

  auto bid = svc.post(path, json::object(), svc.operator_key());
  ASSERT_EQ(bid->status, 200) << bid->body;
  const json d = body_of(bid)["data"];
  EXPECT_EQ(body_of(bid)["success"], true);
  EXPECT_EQ(d["url"], sim->ping_url());
  EXPECT_EQ(d["http_status"], 200);
  EXPECT_EQ(d["outcome"], "bid");
  EXPECT_EQ(d["bid"], 12.5);
  EXPECT_EQ(d["reason"], nullptr);
  EXPECT_GE(d["duration_ms"].get<int>(), 0);
  // The ping is the workers' own: the buyer's headers, no personal data, a clearly synthetic
  // lead in a state the buyer's filters take.
  ASSERT_EQ(sim->pings().size(), 1u);
  const RecordedRequest ping = sim->pings().front();
  EXPECT_EQ(ping.header("X-Api-Key"), "buyer-secret-1234");
  const json sent = json::parse(ping.body);
  EXPECT_EQ(sent["source"], "leadflow_test_ping");
  EXPECT_EQ(sent["vertical"], "auto_insurance");
  EXPECT_EQ(sent["state"], "TX");
  EXPECT_EQ(sent["lead_id"].get<std::string>().rfind("test_", 0), 0u);
  EXPECT_FALSE(sent.contains("email"));
  EXPECT_FALSE(sent.contains("phone"));
  EXPECT_EQ(sim->stats().pii_pings, 0u);
  EXPECT_EQ(sim->stats().posts, 0u);  // never a post

  sim->stub("/ping", 200, R"({"bid": 0})");
  auto none = svc.post(path, json::object(), svc.operator_key());
  ASSERT_EQ(none->status, 200) << none->body;
  EXPECT_EQ(body_of(none)["data"]["outcome"], "no_bid");
  EXPECT_EQ(body_of(none)["data"]["bid"], nullptr);
  EXPECT_EQ(body_of(none)["data"]["reason"], "no bid");

  sim->stub("/ping", 503, "down");
  auto error = svc.post(path, json::object(), svc.operator_key());
  ASSERT_EQ(error->status, 200) << error->body;
  EXPECT_EQ(body_of(error)["data"]["outcome"], "error");
  EXPECT_EQ(body_of(error)["data"]["http_status"], 503);
  EXPECT_EQ(body_of(error)["data"]["reason"], "http 503");
  sim->clear_stubs();

  // The buyer's own timeout bounds the wait.
  // (PUT replaces a top-level field whole: the delivery is sent again.)
  const json delivery = {{"mode", "ping_post"},
                         {"ping_url", sim->ping_url()},
                         {"post_url", sim->post_url()},
                         {"timeout_ms", 200}};
  auto shorter = put(svc, "/v1/buyers/" + id, {{"delivery", delivery}}, svc.operator_key());
  ASSERT_EQ(shorter->status, 200) << shorter->body;
  sim->set_hang_next(1);
  const auto started = std::chrono::steady_clock::now();
  auto slow = svc.post(path, json::object(), svc.operator_key());
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(slow->status, 200) << slow->body;
  EXPECT_EQ(body_of(slow)["data"]["outcome"], "timeout");
  EXPECT_EQ(body_of(slow)["data"]["http_status"], nullptr);
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST(BuyerTestPingTest, RefusesWhatCannotBePingedAndWhoMayNotAsk) {
  ServiceOptions o;
  o.workers = 0;
  ServiceFixture svc(o);
  auto sim = start_buyer("tested", 12.5);
  const std::string id = svc.add_buyer(*sim);
  const std::string path = "/v1/buyers/" + id + "/test-ping";
  const std::string direct =
      svc.add_buyer(*sim, "auto_insurance",
                    {{"delivery", {{"mode", "direct_post"}, {"ping_url", nullptr}}},
                     {"pricing", {{"model", "fixed"}, {"price", 5.0}}}});
  auto no_ping =
      svc.post("/v1/buyers/" + direct + "/test-ping", json::object(), svc.operator_key());
  EXPECT_EQ(no_ping->status, 409) << no_ping->body;
  EXPECT_EQ(body_of(no_ping)["detail"], "direct-post buyers have no ping");
  EXPECT_EQ(svc.post("/v1/buyers/by_nobody/test-ping", json::object(), svc.operator_key())->status,
            404);
  auto vertical = svc.post(path, {{"vertical", "solar"}}, svc.operator_key());
  ASSERT_EQ(vertical->status, 400) << vertical->body;
  EXPECT_EQ(fields_of(vertical), (std::set<std::string>{"vertical"}));
  EXPECT_EQ(svc.post(path, {{"colour", "red"}}, svc.operator_key())->status, 400);
  const std::string seller = svc.add_seller("S");
  const std::string seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller}});
  EXPECT_EQ(svc.post(path, json::object(), seller_key)->status, 403);
  EXPECT_EQ(sim->stats().pings, 0u);

  // An outbound request on a click: 10 a minute per caller.
  for (int i = 0; i < kTestPingsPerMinute; ++i) {
    auto r = svc.post(path, {{"vertical", "auto_insurance"}}, svc.operator_key());
    ASSERT_EQ(r->status, 200) << i << r->body;
  }
  auto limited = svc.post(path, json::object(), svc.operator_key());
  ASSERT_EQ(limited->status, 429) << limited->body;
  EXPECT_FALSE(limited->get_header_value("Retry-After").empty());
  EXPECT_EQ(sim->stats().pings, static_cast<std::uint64_t>(kTestPingsPerMinute));
}

// A service of the test's own configuration, on the same wiring as leadflow-ingest.
struct OwnService {
  TempDir dir;
  std::unique_ptr<App> app;
  std::string key = new_api_key_secret();

  explicit OwnService(const std::function<void(Config&)>& configure) {
    Config c;
    c.data_dir = dir.path();
    c.store_url = "sqlite:" + dir.path() + "/leadflow.db";
    c.listen = {"127.0.0.1", 0};
    c.bootstrap_key = key;
    c.workers = 0;
    c.http_threads = 8;
    c.log_level = "warn";
    configure(c);
    app = std::make_unique<App>(c);
  }
  std::unique_ptr<httplib::SSLClient> https() const {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", app->tls_port());
    c->set_ca_cert_path((dir.path() + "/tls/cert.pem").c_str());
    c->enable_server_certificate_verification(true);
    return c;
  }
};

TEST(BuyerTestPingTest, APrivateAddressIsRefusedUnlessAllowed) {
  auto sim = start_buyer("loopback", 12.5);
  OwnService svc([](Config& c) { c.allow_private_buyers = false; });
  std::string error;
  ASSERT_TRUE(svc.app->start(error)) << error;
  // Saved when private buyers were allowed (or a public name that resolves to loopback now).
  Buyer b;
  b.id = "by_loopback";
  b.name = "loopback";
  b.verticals = {"auto_insurance"};
  b.ping_url = sim->ping_url();
  b.post_url = sim->post_url();
  ASSERT_EQ(svc.app->store().insert_buyer(b), StoreStatus::kOk);
  auto r = svc.https()->Post("/v1/buyers/by_loopback/test-ping",
                             httplib::Headers{{"Authorization", "Bearer " + svc.key}}, "{}",
                             "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  const json d = body_of(r)["data"];
  EXPECT_EQ(d["outcome"], "error");
  EXPECT_EQ(d["http_status"], nullptr);
  EXPECT_NE(d["reason"].get<std::string>().find("refused to connect to a loopback address"),
            std::string::npos)
      << r->body;
  EXPECT_EQ(sim->stats().pings, 0u);
  svc.app->stop();
}

// --- the first operator -----------------------------------------------------------------------

TEST(ConsoleBootstrap, TheFirstOperatorIsMadeOnceAndSignsIn) {
  TempDir secrets;
  const std::string file = secrets.path() + "/password";
  std::ofstream(file) << kPassword << "\n";
  std::string db;
  const auto configure = [&](Config& c) {
    if (!db.empty()) c.store_url = db;
    c.bootstrap_operator_email = "First@Example.com";
    c.bootstrap_operator_password_file = file;
  };
  OwnService first(configure);
  std::string error;
  ASSERT_TRUE(first.app->start(error)) << error;
  db = "sqlite:" + first.dir.path() + "/leadflow.db";
  auto users = first.app->store().list_users().value();
  ASSERT_EQ(users.size(), 1u);
  const std::string made = users[0].id;
  EXPECT_EQ(users[0].email, "first@example.com");
  EXPECT_TRUE(users[0].is_operator());
  EXPECT_TRUE(users[0].active);
  auto r = first.https()->Post("/v1/session",
                               json{{"email", "first@example.com"}, {"password", kPassword}}.dump(),
                               "application/json");
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["user"]["account"], "operator");
  first.app->stop();

  // A restart on the same store, even with another password, makes no second user.
  std::ofstream(file) << "another long password\n";
  first.app = std::make_unique<App>([&] {
    Config c;
    c.data_dir = first.dir.path();
    c.store_url = db;
    c.listen = {"127.0.0.1", 0};
    c.workers = 0;
    c.log_level = "warn";
    configure(c);
    return c;
  }());
  ASSERT_TRUE(first.app->start(error)) << error;
  users = first.app->store().list_users().value();
  ASSERT_EQ(users.size(), 1u);
  EXPECT_EQ(users[0].id, made);
  first.app->stop();
}

TEST(ConsoleBootstrap, ProcessesStartingAtOnceMakeOneOperator) {
  TempDir dir;
  const std::string url = "sqlite:" + dir.path() + "/leadflow.db";
  std::string error;
  ASSERT_NE(open_migrated_store(url, error), nullptr) << error;
  constexpr int kProcesses = 4;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kProcesses; ++i) {
    stores.push_back(open_migrated_store(url, error));
    ASSERT_NE(stores.back(), nullptr) << error;
  }
  const VerticalRegistry verticals = VerticalRegistry::defaults();
  std::vector<Management::Bootstrap> results(kProcesses);
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      Management m(*stores[i], verticals, SystemClock::instance(), *stores[i]);
      std::string why;
      results[i] = m.ensure_bootstrap_operator("ops@example.com", kPassword, why);
    });
  }
  for (auto& t : threads) t.join();
  int created = 0;
  for (auto r : results) {
    EXPECT_TRUE(r == Management::Bootstrap::kCreated || r == Management::Bootstrap::kUsersExist);
    created += r == Management::Bootstrap::kCreated ? 1 : 0;
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(stores[0]->list_users().value().size(), 1u);
}

TEST(ConsoleBootstrap, ABadEmailOrPasswordStopsTheStartNamingTheSetting) {
  TempDir secrets;
  const std::string file = secrets.path() + "/password";
  std::ofstream(file) << "short\n";
  OwnService weak([&](Config& c) {
    c.bootstrap_operator_email = "ops@example.com";
    c.bootstrap_operator_password_file = file;
  });
  std::string error;
  EXPECT_FALSE(weak.app->start(error));
  EXPECT_EQ(error.rfind("LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE: ", 0), 0u) << error;
  EXPECT_EQ(error.find("short"), std::string::npos) << error;  // never the password

  OwnService missing([&](Config& c) {
    c.bootstrap_operator_email = "ops@example.com";
    c.bootstrap_operator_password_file = secrets.path() + "/none";
  });
  EXPECT_FALSE(missing.app->start(error));
  EXPECT_EQ(error.rfind("LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE: ", 0), 0u) << error;

  std::ofstream(file) << kPassword << "\n";
  OwnService email([&](Config& c) {
    c.bootstrap_operator_email = "not an address";
    c.bootstrap_operator_password_file = file;
  });
  EXPECT_FALSE(email.app->start(error));
  EXPECT_EQ(error.rfind("LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL: ", 0), 0u) << error;
}

}  // namespace
}  // namespace leadflow::testing
