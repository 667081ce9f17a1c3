#pragma once
// A buyer's own portal over real HTTPS: its account (GET /v1/account), pausing and resuming its
// buying, the changes the operator opened to it, its purchase's return window and the lead
// export, each through the visibility model. Header-only, run by buyer_portal_test on a SQLite
// file and by pg_buyer_portal_test on PostgreSQL.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service_fixture.hpp"

namespace leadflow::testing {

/// Two buyers (`high` bids more) and a named seller posting with its own key.
struct PortalWorld {
  std::unique_ptr<BuyerSimulator> high_sim, low_sim;
  std::string high, low, high_key, low_key, seller, seller_key;
  static constexpr const char* kSellerName = "Quietly Named Sellers Ltd";
};

inline PortalWorld make_portal_world(ServiceFixture& svc) {
  using nlohmann::json;
  PortalWorld w;
  w.high_sim = start_buyer("high", 15.00);
  w.low_sim = start_buyer("low", 10.00);
  w.high = svc.add_buyer(*w.high_sim, "auto_insurance",
                         {{"caps", {{"daily", 100}, {"daily_budget", 500}}},
                          {"priority", 5},
                          {"max_return_rate", 0.3},
                          {"self_service", {{"caps", true}}}});
  w.low = svc.add_buyer(*w.low_sim);
  w.high_key = svc.add_api_key({{"name", "high's key"}, {"buyer_id", w.high}});
  w.low_key = svc.add_api_key({{"name", "low's key"}, {"buyer_id", w.low}});
  w.seller = svc.add_seller(PortalWorld::kSellerName);
  w.seller_key = svc.add_api_key({{"name", "seller's key"}, {"seller_id", w.seller}});
  return w;
}

inline nlohmann::json json_of(const httplib::Result& r) { return nlohmann::json::parse(r->body); }

inline httplib::Result put_account(ServiceFixture& svc, const nlohmann::json& body,
                                   const std::string& key) {
  return svc.https()->Put("/v1/account", {{"Authorization", "Bearer " + key}}, body.dump(),
                          "application/json");
}

inline std::string sold_by_seller(ServiceFixture& svc, const PortalWorld& w, int salt,
                                  const std::string& to) {
  auto r = svc.post("/v1/leads", sample_lead(salt), w.seller_key);
  EXPECT_EQ(r->status, 201) << r->body;
  const nlohmann::json b = json_of(r);
  EXPECT_EQ(b["distribution"]["accepted"], true) << r->body;
  auto read = svc.get("/v1/leads/" + b["lead_id"].get<std::string>(), w.high_key);
  EXPECT_EQ(read->status, to == w.high ? 200 : 404) << "the lead was not sold to " << to;
  return b["lead_id"];
}

inline void expect_no_seller(const std::string& body, const PortalWorld& w) {
  EXPECT_EQ(body.find(PortalWorld::kSellerName), std::string::npos) << "the seller's name";
  EXPECT_EQ(body.find(w.seller), std::string::npos) << "the seller's id";
  EXPECT_EQ(body.find("payout"), std::string::npos) << "a payout";
}

inline void check_buyer_account(ServiceFixture& svc) {
  using nlohmann::json;
  const PortalWorld w = make_portal_world(svc);
  const std::string lead = sold_by_seller(svc, w, 1, w.high);

  // Its own account: its configuration without the operator's record, its caps' use, health.
  auto r = svc.get("/v1/account", w.high_key);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_no_seller(r->body, w);
  const json a = json_of(r)["data"];
  EXPECT_EQ(a["buyer_id"], w.high);
  EXPECT_EQ(a["status"], "active");
  for (const char* f : {"priority", "weight", "tier", "max_concurrency", "max_return_rate"})
    EXPECT_FALSE(a.contains(f)) << f;
  EXPECT_FALSE(a["returns"].contains("max_return_rate"));
  EXPECT_EQ(a["self_service"], json({{"caps", true}, {"filters", false}}));
  ASSERT_EQ(a["limits"].size(), 2u) << a["limits"];
  EXPECT_EQ(a["limits"][0]["kind"], "cap");
  EXPECT_EQ(a["limits"][0]["period"], "daily");
  EXPECT_EQ(a["limits"][0]["used"], 1);
  EXPECT_EQ(a["limits"][0]["limit"], 100);
  EXPECT_EQ(a["limits"][1]["kind"], "budget");
  EXPECT_EQ(a["limits"][1]["used"], 15.0);
  EXPECT_EQ(a["limits"][1]["limit"], 500.0);
  EXPECT_LT(a["limits"][0]["since"].get<std::string>(),
            a["limits"][0]["resets_at"].get<std::string>());
  EXPECT_EQ(a["health"]["pings_24h"], 1);
  EXPECT_FALSE(a["return_reasons"].empty());
  EXPECT_EQ(a["version"],
            json_of(svc.get("/v1/buyers/" + w.high, svc.operator_key()))["data"]["version"]);

  // Nobody else's account: the operator has none, a seller reads its own (nothing of a buyer);
  // the operator's routes stay its.
  EXPECT_EQ(svc.get("/v1/account", svc.operator_key())->status, 403);
  auto seller = svc.get("/v1/account", w.seller_key);
  ASSERT_EQ(seller->status, 200) << seller->body;
  EXPECT_EQ(json_of(seller)["data"]["seller_id"], w.seller);
  for (const std::string& b : {w.high, w.low})
    EXPECT_EQ(seller->body.find(b), std::string::npos) << "a buyer in a seller's account";
  EXPECT_EQ(svc.get("/v1/buyers/" + w.high, w.low_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/buyers/" + w.low, w.low_key)->status, 403);
  auto other = svc.get("/v1/account", w.low_key);
  ASSERT_EQ(other->status, 200);
  EXPECT_EQ(json_of(other)["data"]["buyer_id"], w.low);
  EXPECT_EQ(other->body.find(w.high), std::string::npos) << "another buyer in an account";

  // Its purchase's return window, as its lead page shows it before asking.
  auto view = svc.get("/v1/leads/" + lead, w.high_key);
  ASSERT_EQ(view->status, 200);
  const json window = json_of(view)["data"]["return_window"];
  EXPECT_EQ(window["returnable"], true);
  EXPECT_EQ(window["standing"], "open");
  EXPECT_EQ(window["days"], 7);
  EXPECT_FALSE(window["ends_at"].is_null());
  EXPECT_FALSE(
      json_of(svc.get("/v1/leads/" + lead, w.seller_key))["data"].contains("return_window"));
  ASSERT_EQ(svc.post("/v1/leads/" + lead + "/return", {{"reason", "fraud"}}, w.high_key)->status,
            201);
  const json after = json_of(svc.get("/v1/leads/" + lead, w.high_key))["data"]["return_window"];
  EXPECT_EQ(after["standing"], "returned");
  EXPECT_EQ(after["returnable"], false);
}

inline void check_buyer_changes(ServiceFixture& svc) {
  using nlohmann::json;
  const PortalWorld w = make_portal_world(svc);

  // Caps, where the operator opened them; anything else is read-only; filters are closed.
  auto caps = put_account(svc, {{"caps", {{"daily", 40}}}}, w.high_key);
  ASSERT_EQ(caps->status, 200) << caps->body;
  EXPECT_EQ(json_of(caps)["data"]["caps"], json({{"daily", 40}}));
  auto ro = put_account(svc, {{"caps", {{"daily", 1}}}, {"priority", 9}, {"pricing", nullptr}},
                        w.high_key);
  ASSERT_EQ(ro->status, 400) << ro->body;
  const json refused = json_of(ro)["errors"];
  ASSERT_EQ(refused.size(), 2u) << ro->body;  // each named, caps (allowed) not among them
  EXPECT_EQ(refused[0]["field"], "pricing");
  EXPECT_EQ(refused[1]["field"], "priority");
  for (const auto& e : refused) EXPECT_EQ(e["code"], "read_only");
  auto closed = put_account(svc, {{"filters", {{"states", {"CA"}}}}}, w.high_key);
  ASSERT_EQ(closed->status, 403) << closed->body;
  EXPECT_NE(json_of(closed)["detail"].get<std::string>().find("filters"), std::string::npos);
  // The other buyer was opened nothing, and changes only itself.
  EXPECT_EQ(put_account(svc, {{"caps", {{"daily", 1}}}}, w.low_key)->status, 403);
  EXPECT_EQ(put_account(svc, {{"caps", {{"daily", 1}}}}, w.seller_key)->status, 403);
  EXPECT_EQ(put_account(svc, {{"caps", {{"daily", 1}}}}, svc.operator_key())->status, 403);
  const json high = json_of(svc.get("/v1/buyers/" + w.high, svc.operator_key()))["data"];
  EXPECT_EQ(high["caps"], json({{"daily", 40}}));
  EXPECT_EQ(high["priority"], 5);

  // The operator's option: opening filters lets the buyer change them.
  auto open = svc.https()->Put(
      ("/v1/buyers/" + w.high).c_str(), {{"Authorization", "Bearer " + svc.operator_key()}},
      json{{"self_service", {{"caps", true}, {"filters", true}}}}.dump(), "application/json");
  ASSERT_EQ(open->status, 200) << open->body;
  ASSERT_EQ(put_account(svc, {{"filters", {{"states", {"CA", "TX"}}}}}, w.high_key)->status, 200);
  EXPECT_EQ(put_account(svc, {{"self_service", {{"caps", true}}}}, w.high_key)->status, 400);

  // Pause: its next lead goes to the other buyer once the workers see it (within their 0.5 s
  // refresh of the buyers); resume brings it back.
  auto paused = svc.post("/v1/account/pause", json::object(), w.high_key);
  ASSERT_EQ(paused->status, 200) << paused->body;
  EXPECT_EQ(json_of(paused)["data"]["status"], "paused");
  EXPECT_EQ(json_of(svc.get("/v1/buyers/" + w.high, svc.operator_key()))["data"]["status"],
            "paused");
  EXPECT_EQ(svc.post("/v1/account/pause", json::object(), w.high_key)->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  sold_by_seller(svc, w, 2, w.low);
  auto resumed = svc.post("/v1/account/resume", json::object(), w.high_key);
  ASSERT_EQ(resumed->status, 200);
  EXPECT_EQ(json_of(resumed)["data"]["status"], "active");
  EXPECT_EQ(svc.post("/v1/account/pause", json::object(), svc.operator_key())->status, 403);

  // Every change the buyer made is in the change log, the buyer's key the actor.
  auto log = svc.get("/v1/audit?object_kind=buyer&q=" + w.high, svc.operator_key());
  ASSERT_EQ(log->status, 200) << log->body;
  int by_buyer = 0;
  const json entries = json_of(log)["data"];
  for (const auto& e : entries)
    if (e["actor"]["name"].get<std::string>().find("(buyer " + w.high + ")") != std::string::npos)
      ++by_buyer;
  EXPECT_EQ(by_buyer, 4) << log->body;  // caps, filters, pause, resume
}

inline void check_lead_exports(ServiceFixture& svc) {
  using nlohmann::json;
  const PortalWorld w = make_portal_world(svc);
  sold_by_seller(svc, w, 1, w.high);
  sold_by_seller(svc, w, 2, w.high);

  auto csv =
      svc.get("/v1/leads?format=csv&created_from=2020-01-01&created_to=2099-12-31", w.high_key);
  ASSERT_EQ(csv->status, 200) << csv->body;
  EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  EXPECT_EQ(csv->get_header_value("Content-Disposition"),
            "attachment; filename=\"leads_2020-01-01_2099-12-31.csv\"");
  EXPECT_EQ(csv->get_header_value("X-Has-More"), "false");
  const std::string header = csv->body.substr(0, csv->body.find("\r\n"));
  EXPECT_EQ(header,
            "lead_id,created_at,status,vertical,source,source_code,buyer_id,price,currency,"
            "decided_at,first_name,last_name,email,phone,zip_code,state,erased_at");
  expect_no_seller(csv->body, w);
  EXPECT_NE(csv->body.find(",15.0,USD,"), std::string::npos) << csv->body;
  // A cell a spreadsheet would run as a formula is written as text (the phone's "+").
  EXPECT_NE(csv->body.find(",'+1202200000"), std::string::npos) << csv->body;
  int lines = 0;
  for (char c : csv->body) lines += c == '\n';
  EXPECT_EQ(lines, 3);

  // Accept: text/csv is the same; the other buyer's export has none of it.
  httplib::Headers accept = {{"Authorization", "Bearer " + w.low_key}, {"Accept", "text/csv"}};
  auto low = svc.https()->Get("/v1/leads", accept);
  ASSERT_EQ(low->status, 200);
  int low_lines = 0;
  for (char c : low->body) low_lines += c == '\n';
  EXPECT_EQ(low_lines, 1) << low->body;

  // A seller's: its payout, never a buyer or a price.
  auto sold = svc.get("/v1/leads?format=csv", w.seller_key);
  ASSERT_EQ(sold->status, 200);
  const std::string sheader = sold->body.substr(0, sold->body.find("\r\n"));
  EXPECT_NE(sheader.find("payout"), std::string::npos);
  for (const char* f : {"buyer_id", "price", "source_code"})
    EXPECT_EQ(sheader.find(f), std::string::npos) << f;
  EXPECT_EQ(sold->body.find(w.high), std::string::npos) << "a buyer in a seller's export";
  // The same refusals as the list.
  EXPECT_EQ(svc.get("/v1/leads?format=csv&seller_id=" + w.seller, w.high_key)->status, 400);
  EXPECT_EQ(svc.get("/v1/leads?format=xml", w.high_key)->status, 400);
}

}  // namespace leadflow::testing
