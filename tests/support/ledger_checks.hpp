#pragma once
// The ledger's journal as the operator reads it, over real HTTPS (GET /v1/ledger): every entry in
// the order written, paged by cursor and downloaded as CSV, and nobody else's to read; then
// filtered by time, buyer, seller, lead and kind, paged and downloaded with the filters.
// Header-only checks, run by ledger_test on a SQLite file and by pg_ledger_test on PostgreSQL.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/time_format.hpp"
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

/// The journal's filters over HTTPS: two buyers of two verticals, two sellers, sales and a
/// return; each filter keeps its entries only, pages keep the filters through the cursor (and a
/// cursor of other filters is refused), the CSV holds the same entries, bad parameters are named.
inline void check_ledger_filters(ServiceFixture& svc) {
  using nlohmann::json;
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t start_ms = now_ms() / 1000 * 1000 - 1000;  // a whole second before
  auto sim_a = start_buyer("Filter buyer A", 12.50);
  auto sim_b = start_buyer("Filter buyer B", 20.00);
  const std::string buyer_a = svc.add_buyer(*sim_a, "auto_insurance");
  const std::string buyer_b = svc.add_buyer(*sim_b, "solar");
  const std::string buyer_a_key = svc.add_api_key({{"name", "buyer a"}, {"buyer_id", buyer_a}});
  const std::string seller_1 = svc.add_seller("Filter seller one");
  const std::string seller_2 = svc.add_seller("Filter seller two");
  const std::string key_1 = svc.add_api_key({{"name", "s1"}, {"seller_id", seller_1}});
  const std::string key_2 = svc.add_api_key({{"name", "s2"}, {"seller_id", seller_2}});
  // Seller one: three auto leads (buyer A); seller two: two solar leads (buyer B) and one auto
  // lead (buyer A). Buyer A returns seller one's first lead.
  std::vector<std::string> leads;
  const auto sell = [&](int salt, const std::string& vertical, const std::string& key) {
    auto r = svc.post("/v1/leads", sample_lead(salt, vertical), key);
    ASSERT_EQ(r->status, 201) << r->body;
    const json b = json::parse(r->body);
    ASSERT_EQ(b["distribution"]["delivery_status"], "delivered") << r->body;
    leads.push_back(b["lead_id"]);
  };
  for (int i = 0; i < 3; ++i) sell(1000 + i, "auto_insurance", key_1);
  sell(1100, "solar", key_2);
  sell(1101, "solar", key_2);
  sell(1102, "auto_insurance", key_2);
  ASSERT_EQ(leads.size(), 6u);
  auto back =
      svc.post("/v1/leads/" + leads[0] + "/return", {{"reason", "invalid_phone"}}, buyer_a_key);
  ASSERT_EQ(back->status, 201) << back->body;
  const std::int64_t end_ms = now_ms() / 1000 * 1000 + 2000;  // a whole second after

  // Every page of a list, through its cursors, `limit` a page; the query's own answers checked.
  const auto all_pages = [&](const std::string& query, int limit) {
    json out = json::array();
    std::string cursor;
    for (int pages = 0; pages < 20; ++pages) {
      std::string path = "/v1/ledger?limit=" + std::to_string(limit) + query;
      if (!cursor.empty()) path += "&cursor=" + cursor;
      auto r = svc.get(path, svc.operator_key());
      EXPECT_EQ(r->status, 200) << path << ": " << r->body;
      if (r->status != 200) break;
      const json page = json::parse(r->body);
      for (const auto& e : page["data"]) out.push_back(e);
      if (!page["has_more"].get<bool>()) break;
      cursor = page["next_cursor"];
    }
    return out;
  };
  const auto lead_set = [](const json& entries) {
    std::multiset<std::string> out;
    for (const auto& e : entries)
      out.insert(e["kind"].get<std::string>() + " " + e["lead_id"].get<std::string>());
    return out;
  };
  const auto sale = [](const std::string& id) { return "sale " + id; };

  // By buyer, a page of one at a time: buyer A's four sales and its return, oldest first.
  const json of_a = all_pages("&buyer_id=" + buyer_a, 1);
  EXPECT_EQ(lead_set(of_a),
            (std::multiset<std::string>{sale(leads[0]), sale(leads[1]), sale(leads[2]),
                                        sale(leads[5]), "return " + leads[0]}));
  for (const auto& e : of_a) EXPECT_EQ(e["buyer_id"], buyer_a) << e.dump();
  for (std::size_t i = 1; i < of_a.size(); ++i)
    EXPECT_LE(of_a[i - 1]["at"].get<std::string>(), of_a[i]["at"].get<std::string>());
  // By seller, and by seller and buyer together.
  EXPECT_EQ(lead_set(all_pages("&seller_id=" + seller_2, 2)),
            (std::multiset<std::string>{sale(leads[3]), sale(leads[4]), sale(leads[5])}));
  EXPECT_EQ(lead_set(all_pages("&seller_id=" + seller_2 + "&buyer_id=" + buyer_a, 100)),
            (std::multiset<std::string>{sale(leads[5])}));
  // By kind and by lead.
  EXPECT_EQ(lead_set(all_pages("&kind=return", 100)),
            (std::multiset<std::string>{"return " + leads[0]}));
  EXPECT_EQ(all_pages("&kind=sale&seller_id=" + seller_1, 2).size(), 3u);
  EXPECT_EQ(lead_set(all_pages("&lead_id=" + leads[0], 100)),
            (std::multiset<std::string>{sale(leads[0]), "return " + leads[0]}));
  // By time, [from, to): around every entry, a day (today, UTC), after them all, before them.
  const std::string from = format_rfc3339_ms(start_ms), to = format_rfc3339_ms(end_ms);
  EXPECT_EQ(all_pages("&buyer_id=" + buyer_b + "&from=" + from + "&to=" + to, 100).size(), 2u);
  const std::string today = format_rfc3339_ms(now_ms()).substr(0, 10);
  EXPECT_EQ(all_pages("&seller_id=" + seller_1 + "&from=" + today + "&to=" + today, 100).size(),
            4u);
  EXPECT_TRUE(all_pages("&from=" + to, 100).empty());
  EXPECT_TRUE(all_pages("&to=" + from, 100).empty());

  // A cursor belongs to its filters: with others it is refused, naming it.
  auto first = svc.get("/v1/ledger?limit=1&buyer_id=" + buyer_a, svc.operator_key());
  const std::string cursor = json::parse(first->body)["next_cursor"];
  auto other =
      svc.get("/v1/ledger?limit=1&buyer_id=" + buyer_b + "&cursor=" + cursor, svc.operator_key());
  EXPECT_EQ(other->status, 400) << other->body;
  EXPECT_NE(other->body.find("\"cursor\""), std::string::npos) << other->body;

  // The CSV of the same filters: buyer B's two sales, named after the range's days.
  auto csv = svc.https()->Get(
      ("/v1/ledger?format=csv&buyer_id=" + buyer_b + "&from=" + today + "&to=" + today).c_str(),
      {{"Authorization", "Bearer " + svc.operator_key()}});
  ASSERT_EQ(csv->status, 200) << csv->body;
  std::size_t lines = 0;
  for (char ch : csv->body) lines += ch == '\n';
  EXPECT_EQ(lines, 3u) << csv->body;
  EXPECT_NE(csv->body.find(leads[3]), std::string::npos);
  EXPECT_EQ(csv->body.find(buyer_a), std::string::npos) << csv->body;
  EXPECT_NE(
      csv->get_header_value("Content-Disposition").find("ledger_" + today + "_" + today + ".csv"),
      std::string::npos)
      << csv->get_header_value("Content-Disposition");

  // Each bad parameter is a 400 naming it.
  const std::pair<std::string, std::string> bad[] = {
      {"buyer_id=nobody", "buyer_id"}, {"seller_id=by_x", "seller_id"},
      {"kind=refund", "kind"},         {"lead_id=42", "lead_id"},
      {"from=yesterday", "from"},      {"from=" + to + "&to=" + from, "to"},
      {"tz=Mars/Base", "tz"},          {"account=1", "account"}};
  for (const auto& [query, field] : bad) {
    auto r = svc.get("/v1/ledger?" + query, svc.operator_key());
    EXPECT_EQ(r->status, 400) << query << ": " << r->body;
    EXPECT_NE(r->body.find("\"field\":\"" + field + "\""), std::string::npos)
        << query << ": " << r->body;
  }
}

}  // namespace leadflow::testing
