// The revenue report over real HTTPS: figures equal to the ledger of the leads sold, grouped by
// buyer, seller and time in the caller's zone (a DST change included), scoped to the caller's
// account, as JSON or CSV, every bad parameter a 400.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

#include "leadflow/base/time_format.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// Calendar time set by the test (moving on with the real clock); steady time stays real.
class SetCalendar final : public Clock {
 public:
  SystemTime now() const override {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ahead_ms_.load());
  }
  SteadyTime steady_now() const override { return std::chrono::steady_clock::now(); }
  void set(std::int64_t unix_ms) {
    const auto real = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    ahead_ms_ = unix_ms - real;
  }

 private:
  std::atomic<std::int64_t> ahead_ms_{0};
};

class Reports : public ::testing::Test {
 protected:
  Reports() : svc(options()) {}

  ServiceOptions options() {
    ServiceOptions o;
    o.clock = &clock;
    return o;
  }

  void SetUp() override {
    // 2026-11-01 in New York: 01:00-02:00 happens twice (EDT, then EST from 06:00 UTC).
    clock.set(*parse_rfc3339_ms("2026-11-01T05:40:00Z"));
    high = start_buyer("high", 15.00);
    high_id = svc.add_buyer(*high);
    low = start_buyer("low", 10.00);
    low_id = svc.add_buyer(*low, "solar");
    acme = svc.add_seller("Acme");
    other = svc.add_seller("Other");
    acme_key = svc.add_api_key({{"name", "acme"}, {"seller_id", acme}});
    other_key = svc.add_api_key({{"name", "other"}, {"seller_id", other}});
    low_key = svc.add_api_key({{"name", "low's key"}, {"buyer_id", low_id}});
  }

  std::string sell(const std::string& key, int salt, const std::string& vertical) {
    json lead = sample_lead(salt, vertical);
    if (vertical != "auto_insurance") lead.erase("custom_fields");
    auto r = svc.post("/v1/leads", lead, key);
    EXPECT_EQ(r->status, 201) << r->body;
    EXPECT_EQ(body_of(r)["distribution"]["accepted"], true) << r->body;
    return body_of(r)["lead_id"];
  }

  json report(const std::string& query, const std::string& key,
              const std::string& which = "revenue") {
    auto r = svc.get("/v1/reports/" + which + "?" + query, key);
    EXPECT_EQ(r->status, 200) << r->body;
    return r->status == 200 ? body_of(r)["data"] : json();
  }

  SetCalendar clock;
  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> high, low;
  std::string high_id, low_id, acme, other, acme_key, other_key, low_key;
};

TEST_F(Reports, RevenueAddsUpByBuyerSellerAndTheHoursOfAZoneChangingItsClocks) {
  const std::string a1 = sell(acme_key, 1, "auto_insurance");  // 01:40 EDT
  sell(other_key, 2, "solar");                                 // 01:40 EDT
  clock.set(*parse_rfc3339_ms("2026-11-01T06:20:00Z"));
  sell(acme_key, 3, "solar");  // 01:20 EST
  // A return: its reversal counts when it is made.
  ASSERT_EQ(
      svc.post("/v1/leads/" + a1 + "/return", {{"reason", "fraud"}}, svc.operator_key())->status,
      201);
  const std::string range = "from=2026-10-31&to=2026-11-01&tz=America/New_York";

  const json by_buyer = report(range + "&group_by=buyer", svc.operator_key());
  ASSERT_EQ(by_buyer["rows"].size(), 2u) << by_buyer.dump();
  const json& high_row = by_buyer["rows"][by_buyer["rows"][0]["buyer_id"] == high_id ? 0 : 1];
  EXPECT_EQ(high_row["leads_sold"], 1);
  EXPECT_EQ(high_row["gross_revenue"], 15.0);
  EXPECT_EQ(high_row["returns"], 1);
  EXPECT_EQ(high_row["revenue"], 0.0);  // net of the return
  const json& totals = by_buyer["totals"];
  EXPECT_EQ(totals["leads_sold"], 3);
  EXPECT_EQ(totals["gross_revenue"], 35.0);
  EXPECT_EQ(totals["revenue"], 20.0);
  EXPECT_EQ(totals["payout"], 14.0);  // 70% of what stands
  EXPECT_EQ(totals["margin"], 6.0);
  EXPECT_EQ(by_buyer["currency"], "USD");

  const json by_hour = report(range + "&group_by=hour", svc.operator_key());
  ASSERT_EQ(by_hour["rows"].size(), 2u) << by_hour.dump();
  EXPECT_EQ(by_hour["rows"][0]["hour"], "2026-11-01T01:00-04:00");
  EXPECT_EQ(by_hour["rows"][0]["leads_sold"], 2);
  EXPECT_EQ(by_hour["rows"][1]["hour"], "2026-11-01T01:00-05:00");
  EXPECT_EQ(by_hour["rows"][1]["leads_sold"], 1);
  const json by_day = report(range + "&group_by=day,seller", svc.operator_key());
  ASSERT_EQ(by_day["rows"].size(), 2u) << by_day.dump();
  for (const auto& row : by_day["rows"]) EXPECT_EQ(row["day"], "2026-11-01");
  // In UTC the same sales fall on the same day, in two different hours.
  EXPECT_EQ(
      report("from=2026-11-01&to=2026-11-01&group_by=hour", svc.operator_key())["rows"].size(), 2u);
}

// Lord Howe falls back by half an hour: 2026-04-05 02:00 +11:00 becomes 01:30 +10:30 (15:00 UTC).
// An hour is a local-clock hour at one offset, so the repeated half hour is a row of its own,
// labelled with its offset, and not folded into the hour before it.
TEST_F(Reports, TheHalfHourLordHoweRepeatsIsARowOfItsOwn) {
  int salt = 100;
  const auto sell_at = [&](const char* utc, int n) {
    clock.set(*parse_rfc3339_ms(utc));
    for (int i = 0; i < n; ++i) sell(acme_key, ++salt, "auto_insurance");
  };
  sell_at("2026-04-04T14:10:00Z", 2);  // 01:10 +11:00
  sell_at("2026-04-04T14:50:00Z", 1);  // 01:50 +11:00
  sell_at("2026-04-04T15:05:00Z", 1);  // 01:35 +10:30, the second time
  sell_at("2026-04-04T15:25:00Z", 1);  // 01:55 +10:30
  sell_at("2026-04-04T15:40:00Z", 1);  // 02:10 +10:30
  const std::string range =
      "from=2026-04-04T01:00:00Z&to=2026-04-05T03:00:00Z&tz=Australia/Lord_Howe";

  const json by_hour = report(range + "&group_by=hour", svc.operator_key());
  ASSERT_EQ(by_hour["rows"].size(), 3u) << by_hour.dump();
  EXPECT_EQ(by_hour["rows"][0]["hour"], "2026-04-05T01:00+11:00");
  EXPECT_EQ(by_hour["rows"][0]["leads_sold"], 3);
  EXPECT_EQ(by_hour["rows"][1]["hour"], "2026-04-05T01:30+10:30");
  EXPECT_EQ(by_hour["rows"][1]["leads_sold"], 2);
  EXPECT_EQ(by_hour["rows"][2]["hour"], "2026-04-05T02:00+10:30");
  EXPECT_EQ(by_hour["rows"][2]["leads_sold"], 1);
  EXPECT_EQ(by_hour["totals"]["leads_sold"], 6);
  // Cut by seller too, the same hours.
  const json by_hour_seller = report(range + "&group_by=hour,seller", svc.operator_key());
  ASSERT_EQ(by_hour_seller["rows"].size(), 3u) << by_hour_seller.dump();
  EXPECT_EQ(by_hour_seller["rows"][1]["hour"], "2026-04-05T01:30+10:30");
  EXPECT_EQ(by_hour_seller["rows"][1]["leads_sold"], 2);
  // The day is one day.
  const json by_day = report(range + "&group_by=day", svc.operator_key());
  ASSERT_EQ(by_day["rows"].size(), 1u) << by_day.dump();
  EXPECT_EQ(by_day["rows"][0]["day"], "2026-04-05");
  EXPECT_EQ(by_day["rows"][0]["leads_sold"], 6);
}

TEST_F(Reports, ASellerSeesItsOwnLeadsAndABuyerItsOwnPurchases) {
  sell(acme_key, 11, "auto_insurance");
  sell(other_key, 12, "solar");
  sell(other_key, 13, "auto_insurance");
  const std::string range = "from=2026-10-30&to=2026-11-02";
  const json mine = report(range + "&group_by=seller", acme_key);
  ASSERT_EQ(mine["rows"].size(), 1u);
  EXPECT_EQ(mine["rows"][0]["seller_id"], acme);
  EXPECT_EQ(mine["totals"]["leads_sold"], 1);  // the other seller is not in the totals either
  EXPECT_EQ(svc.get("/v1/reports/revenue?seller_id=" + other, acme_key)->status, 400);
  const json bought = report(range + "&group_by=buyer", low_key);
  ASSERT_EQ(bought["rows"].size(), 1u);
  EXPECT_EQ(bought["rows"][0]["buyer_id"], low_id);
  EXPECT_EQ(bought["totals"]["gross_revenue"], 10.0);
  const json filtered =
      report(range + "&group_by=vertical&vertical=auto_insurance", svc.operator_key());
  ASSERT_EQ(filtered["rows"].size(), 1u);
  EXPECT_EQ(filtered["totals"]["leads_sold"], 2);
}

TEST_F(Reports, PerformanceCountsLeadsByStatusAndBuyersByTheirAnswers) {
  sell(acme_key, 31, "auto_insurance");
  sell(acme_key, 32, "solar");
  // The same person again: a duplicate, never offered to a buyer.
  auto dup = svc.post("/v1/leads", sample_lead(31), acme_key);
  ASSERT_EQ(dup->status, 201) << dup->body;
  const std::string range = "from=2026-10-30&to=2026-11-02";

  const json all = report(range + "&group_by=day", svc.operator_key(), "performance");
  ASSERT_EQ(all["rows"].size(), 1u) << all.dump();
  const json& day = all["rows"][0];
  EXPECT_EQ(day["leads"], 3);
  EXPECT_EQ(day["sold"], 2);
  EXPECT_EQ(day["duplicates"], 1);
  EXPECT_EQ(day["pinged"], 2);  // one buyer per vertical
  EXPECT_EQ(day["won"], 2);
  EXPECT_EQ(day["delivered"], 2);
  EXPECT_EQ(day["acceptance_rate"], 1.0);
  EXPECT_TRUE(day["p95_response_ms"].is_number()) << day.dump();

  const json buyers = report(range + "&group_by=buyer", svc.operator_key(), "performance");
  ASSERT_EQ(buyers["rows"].size(), 2u) << buyers.dump();
  for (const auto& row : buyers["rows"]) {
    EXPECT_TRUE(row["leads"].is_null());  // leads are no buyer's figure
    EXPECT_EQ(row["pinged"], 1);
    EXPECT_EQ(row["bids"], 1);
    EXPECT_EQ(row["delivered"], 1);
  }
  EXPECT_EQ(buyers["totals"]["leads"], 3);
  // A buyer sees its own pings and posts only.
  const json mine = report(range + "&group_by=vertical", low_key, "performance");
  ASSERT_EQ(mine["rows"].size(), 1u) << mine.dump();
  EXPECT_EQ(mine["rows"][0]["vertical"], "solar");
  EXPECT_FALSE(mine["totals"].contains("leads"));  // leads' own counts are no buyer's
}

TEST_F(Reports, UnsoldSaysWhyEachLeadAndEachBuyerDidNotSell) {
  sell(acme_key, 41, "auto_insurance");  // sold: never in this report
  // Nobody buys mortgages; the solar buyer refuses its post, then does not bid.
  for (int salt : {42, 43}) {
    json lead = sample_lead(salt, "mortgage");
    lead.erase("custom_fields");
    ASSERT_EQ(svc.post("/v1/leads", lead, acme_key)->status, 201);
  }
  low->set_reject_next(1, "cap reached");
  json refused = sample_lead(44, "solar");
  refused.erase("custom_fields");
  auto r = svc.post("/v1/leads", refused, other_key);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["accepted"], false);
  low->set_no_bid_rate(1.0);
  json no_bid = sample_lead(45, "solar");
  no_bid.erase("custom_fields");
  ASSERT_EQ(svc.post("/v1/leads", no_bid, acme_key)->status, 201);
  const std::string range = "from=2026-10-30&to=2026-11-02";

  // The leads' own reasons, the most first.
  const json leads = report(range, svc.operator_key(), "unsold");
  EXPECT_EQ(leads["totals"]["counts"], "leads");
  EXPECT_EQ(leads["totals"]["leads"], 4);
  ASSERT_EQ(leads["rows"].size(), 3u) << leads.dump();
  EXPECT_EQ(leads["rows"][0]["reason"], "no_buyer_in_vertical");
  EXPECT_EQ(leads["rows"][0]["leads"], 2);
  EXPECT_EQ(leads["totals"]["reasons"]["refused"], 1);
  EXPECT_EQ(leads["totals"]["reasons"]["no_bid"], 1);
  // They add up to the performance report's unsold leads.
  EXPECT_EQ(report(range, svc.operator_key(), "performance")["totals"]["unsold"], 4);

  // Each buyer's reasons.
  const json buyers = report(range + "&group_by=buyer,reason", svc.operator_key(), "unsold");
  EXPECT_EQ(buyers["totals"]["counts"], "buyers");
  ASSERT_EQ(buyers["rows"].size(), 2u) << buyers.dump();
  for (const auto& row : buyers["rows"]) {
    EXPECT_EQ(row["buyer_id"], low_id);
    EXPECT_EQ(row["leads"], 1);
  }
  EXPECT_EQ(buyers["totals"]["reasons"]["refused"], 1);
  EXPECT_EQ(buyers["totals"]["reasons"]["no_bid"], 1);

  // A seller sees its own leads' reasons; a filter by reason; the day in a zone; CSV.
  const json mine = report(range + "&group_by=seller", acme_key, "unsold");
  EXPECT_EQ(mine["totals"]["leads"], 3);
  for (const auto& row : mine["rows"]) EXPECT_EQ(row["seller_id"], acme);
  const json one = report(range + "&reason=no_bid&group_by=day&tz=America/New_York",
                          svc.operator_key(), "unsold");
  ASSERT_EQ(one["rows"].size(), 1u) << one.dump();
  EXPECT_EQ(one["rows"][0]["day"], "2026-11-01");
  EXPECT_EQ(one["rows"][0]["leads"], 1);
  auto csv =
      svc.get("/v1/reports/unsold?" + range + "&group_by=buyer&format=csv", svc.operator_key());
  ASSERT_EQ(csv->status, 200);
  EXPECT_EQ(csv->body.substr(0, csv->body.find("\r\n")),
            "buyer_id,reason,leads,reoffered,sold_aged");
  for (const char* bad : {"group_by=week", "group_by=buyer,seller,source", "reason=", "colour=1"})
    EXPECT_EQ(svc.get(std::string("/v1/reports/unsold?") + bad, svc.operator_key())->status, 400)
        << bad;
  EXPECT_EQ(svc.get("/v1/reports/performance?reason=no_bid", svc.operator_key())->status, 400);
}

TEST_F(Reports, CsvForSpreadsheetsAndA400ForEachBadParameter) {
  sell(acme_key, 21, "auto_insurance");
  auto csv = svc.get(
      "/v1/reports/revenue?from=2026-10-30&to=2026-11-02&group_by=day,buyer"
      "&format=csv",
      svc.operator_key());
  ASSERT_EQ(csv->status, 200);
  EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  // Named after the report and its days, the last one included.
  EXPECT_EQ(csv->get_header_value("Content-Disposition"),
            "attachment; filename=\"revenue_2026-10-30_2026-11-02.csv\"");
  EXPECT_EQ(csv->body.substr(0, csv->body.find("\r\n")),
            "day,buyer_id,leads_sold,revenue,payout,margin,avg_price,gross_revenue,returns,"
            "returned_revenue,returned_payout,aged_sales,aged_revenue,aged_payout,aged_margin,"
            "aged_returns,aged_returned_revenue,aged_returned_payout,aged_net_revenue,"
            "aged_net_payout,aged_net_margin");
  EXPECT_NE(csv->body.find("2026-11-01," + high_id + ",1,15.0,"), std::string::npos) << csv->body;

  for (const char* bad :
       {"tz=Mars/Olympus", "group_by=week", "group_by=day,hour", "group_by=buyer,seller,source",
        "from=yesterday", "from=2026-11-01T10:07:00Z", "from=2026-11-02&to=2026-11-01",
        "from=2024-01-01&to=2026-01-01", "colour=blue", "format=xml"}) {
    auto r = svc.get(std::string("/v1/reports/revenue?") + bad, svc.operator_key());
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
  }
  EXPECT_EQ(svc.get("/v1/reports/revenue", "")->status, 401);
}

}  // namespace
}  // namespace leadflow::testing
