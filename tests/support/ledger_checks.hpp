#pragma once
// The ledger's journal as the operator reads it, over real HTTPS (GET /v1/ledger): every entry in
// the order written, paged by cursor and downloaded as CSV, and nobody else's to read.
// Header-only checks, run by ledger_test on a SQLite file and by pg_ledger_test on PostgreSQL.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service_fixture.hpp"

namespace leadflow::testing {

inline void check_ledger_journal(ServiceFixture& svc) {
  using nlohmann::json;
  auto sim = start_buyer("Journal buyer", 12.50);
  const std::string buyer_id = svc.add_buyer(*sim);
  const std::string buyer_key = svc.add_api_key({{"name", "buyer"}, {"buyer_id", buyer_id}});
  const std::string seller_id = svc.add_seller("Journal seller");
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller_id}});
  std::vector<std::string> sold;
  for (int i = 0; i < 3; ++i) {
    auto r = svc.post("/v1/leads", sample_lead(900 + i), seller_key);
    ASSERT_EQ(r->status, 201) << r->body;
    const json b = json::parse(r->body);
    ASSERT_EQ(b["distribution"]["delivery_status"], "delivered") << r->body;
    sold.push_back(b["lead_id"]);
  }
  auto returned =
      svc.post("/v1/leads/" + sold[1] + "/return", {{"reason", "invalid_phone"}}, buyer_key);
  ASSERT_EQ(returned->status, 201) << returned->body;

  // Two pages of two, oldest first: the three sales, then the return.
  auto first = svc.get("/v1/ledger?limit=2", svc.operator_key());
  ASSERT_EQ(first->status, 200) << first->body;
  const json page1 = json::parse(first->body);
  ASSERT_EQ(page1["data"].size(), 2u) << first->body;
  EXPECT_EQ(page1["has_more"], true);
  ASSERT_TRUE(page1["next_cursor"].is_string());
  auto second = svc.get("/v1/ledger?limit=2&cursor=" + page1["next_cursor"].get<std::string>(),
                        svc.operator_key());
  ASSERT_EQ(second->status, 200) << second->body;
  const json page2 = json::parse(second->body);
  ASSERT_EQ(page2["data"].size(), 2u) << second->body;
  EXPECT_EQ(page2["has_more"], false);
  EXPECT_TRUE(page2["next_cursor"].is_null());
  json entries = page1["data"];
  for (const auto& e : page2["data"]) entries.push_back(e);
  const std::vector<std::string> leads = {sold[0], sold[1], sold[2], sold[1]};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    EXPECT_EQ(e["lead_id"], leads[i]) << e.dump();
    EXPECT_EQ(e["kind"], i < 3 ? "sale" : "return") << e.dump();
    EXPECT_EQ(e["buyer_id"], buyer_id);
    EXPECT_EQ(e["seller_id"], seller_id);
    EXPECT_EQ(e["revenue"], i < 3 ? 12.5 : -12.5);
    // The operator reads both sides and the margin, and they add up to the cent.
    const long revenue = std::lround(e["revenue"].get<double>() * 100);
    const long payout = std::lround(e["payout"].get<double>() * 100);
    const long margin = std::lround(e["margin"].get<double>() * 100);
    EXPECT_EQ(revenue - payout, margin) << e.dump();
    if (i > 0) {
      EXPECT_GT(e["entry_id"].get<long>(), entries[i - 1]["entry_id"].get<long>());
    }
  }

  // The same entries as CSV, in one download.
  auto csv = svc.https()->Get("/v1/ledger?format=csv",
                              {{"Authorization", "Bearer " + svc.operator_key()}});
  ASSERT_EQ(csv->status, 200) << csv->body;
  EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  EXPECT_EQ(csv->get_header_value("X-Has-More"), "false");
  EXPECT_NE(csv->get_header_value("Content-Disposition").find("filename=\"ledger_"),
            std::string::npos);
  const std::string& text = csv->body;
  EXPECT_EQ(text.rfind("entry_id,at,kind,lead_id,buyer_id,seller_id,campaign_id,currency,revenue,"
                       "payout,margin\r\n",
                       0),
            0u)
      << text;
  std::size_t lines = 0;
  for (char ch : text) lines += ch == '\n';
  EXPECT_EQ(lines, 5u) << text;  // the header and the four entries
  EXPECT_NE(text.find(sold[2]), std::string::npos);
  // A download from a cursor holds the entries after it: the last two.
  auto after = svc.https()->Get(
      ("/v1/ledger?format=csv&cursor=" + page1["next_cursor"].get<std::string>()).c_str(),
      {{"Authorization", "Bearer " + svc.operator_key()}});
  ASSERT_EQ(after->status, 200);
  lines = 0;
  for (char ch : after->body) lines += ch == '\n';
  EXPECT_EQ(lines, 3u) << after->body;

  // The journal is the operator's: a seller or a buyer reads its own money elsewhere.
  EXPECT_EQ(svc.get("/v1/ledger", seller_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/ledger", buyer_key)->status, 403);
  EXPECT_EQ(svc.https()->Get("/v1/ledger")->status, 401);
  // Bad parameters are named.
  for (const char* bad : {"/v1/ledger?limit=0", "/v1/ledger?cursor=zz!", "/v1/ledger?from=2026",
                          "/v1/ledger?format=xml"}) {
    auto r = svc.get(bad, svc.operator_key());
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
  }
}

}  // namespace leadflow::testing
