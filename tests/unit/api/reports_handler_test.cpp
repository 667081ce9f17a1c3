// The report handlers without a server: a request parsed as the server would, a fake reporting
// port, and the answer's status and body. What the handler asks the store (the rollup question
// the reports component plans), what it refuses, and how it encodes what the component folds.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/http/parser.hpp"
#include "reports.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kLordHowe1am = 1'775'311'200'000;  // 2026-04-05T01:00+11:00

// The reporting port, answering canned cells and keeping the questions it was asked.
class FakeReporting final : public ReportingStore {
 public:
  bool up = true;
  bool bands_up = true;  // false: only the bands' questions fail
  std::vector<RevenueCell> revenue;
  std::vector<PerformanceCell> performance;
  std::vector<UnsoldCell> unsold;
  // The bands' cells, at the real quarter hours they count: the aged sales, the leads offered
  // again and those sold aged (docs/reports.md).
  std::vector<RevenueCell> aged;
  std::vector<UnsoldCell> reoffered, sold_aged;
  std::vector<RollupQuery> asked;

  bool healthy() override { return up; }
  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& q) override {
    return band(q) == 0 ? answer(q, revenue) : answer(q, moved(aged, band(q)));
  }
  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& q) override {
    return answer(q, performance);
  }
  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& q) override {
    const int b = band(q);
    return answer(q, b == 0 ? unsold : moved(b == kReofferedBand ? reoffered : sold_aged, b));
  }
  void count_invalid(std::string_view, std::int64_t) override {}
  std::optional<std::int64_t> count_queued(std::string_view, std::int64_t) override {
    return std::nullopt;
  }

 private:
  static int band(const RollupQuery& q) { return static_cast<int>(q.from_ms / kBandMs); }
  template <typename Cell>
  static std::vector<Cell> moved(std::vector<Cell> cells, int band) {
    for (Cell& c : cells) c.bucket_ms = band_bucket(c.bucket_ms, band);
    return cells;
  }
  template <typename Cell>
  std::optional<std::vector<Cell>> answer(const RollupQuery& q, const std::vector<Cell>& cells) {
    asked.push_back(q);
    if (!up || (!bands_up && band(q) != 0)) return std::nullopt;
    return cells;
  }
};

class ReportHandler : public ::testing::Test {
 protected:
  FakeReporting store;
  ManualClock clock{SystemTime{std::chrono::milliseconds{kLordHowe1am + 5 * kHour}}};
  ReportPorts ports{store, clock, "secret"};

  http::Response get(const Viewer& viewer, ReportKind kind, const std::string& query) {
    const std::string raw = "GET /v1/reports/x?" + query + " HTTP/1.1\r\nHost: a.example\r\n\r\n";
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_report(ports, viewer, kind, req, res);
    return res;
  }
};

RevenueCell sale(std::int64_t at, std::string buyer, std::int64_t sales, Cents revenue) {
  RevenueCell c;
  c.bucket_ms = at;
  c.keys = {std::move(buyer)};
  c.sales = sales;
  c.revenue = revenue;
  c.payout = revenue / 2;
  return c;
}

TEST_F(ReportHandler, AsksThePlannedQuestionAndAnswersTheFoldedRows) {
  store.revenue = {sale(kLordHowe1am, "b1", 58, 5800), sale(kLordHowe1am + kHour, "b1", 21, 2100)};
  const auto res = get(Viewer{}, ReportKind::kRevenue,
                       "from=2026-04-04T14:00:00Z&to=2026-04-04T16:00:00Z&tz=Australia/Lord_Howe"
                       "&group_by=hour,buyer");
  ASSERT_EQ(res.status, 200) << res.body;
  ASSERT_EQ(store.asked.size(), 2u);  // the sales, then the aged ones among them
  const RollupQuery& q = store.asked[0];
  EXPECT_EQ(store.asked[1].from_ms, band_bucket(q.from_ms, kAgedSalesBand));
  EXPECT_EQ(store.asked[1].cuts[0], band_bucket(q.cuts[0], kAgedSalesBand));
  EXPECT_EQ(q.from_ms, kLordHowe1am);
  EXPECT_EQ(q.to_ms, kLordHowe1am + 2 * kHour);
  EXPECT_EQ(q.group, std::vector<ReportKey>{ReportKey::kBuyer});
  EXPECT_EQ(q.cuts, (std::vector<std::int64_t>{kLordHowe1am + kHour, kLordHowe1am + 90 * 60'000}));
  const json data = json::parse(res.body)["data"];
  ASSERT_EQ(data["rows"].size(), 2u);
  EXPECT_EQ(data["rows"][0]["hour"], "2026-04-05T01:00+11:00");
  EXPECT_EQ(data["rows"][0]["buyer_id"], "b1");
  EXPECT_EQ(data["rows"][0]["leads_sold"], 58);
  EXPECT_EQ(data["rows"][1]["hour"], "2026-04-05T01:30+10:30");
  EXPECT_EQ(data["rows"][1]["leads_sold"], 21);
  EXPECT_EQ(data["totals"]["revenue"], 79.0);
  EXPECT_EQ(data["totals"]["margin"], 39.5);
}

TEST_F(ReportHandler, ASellersReportIsItsOwnAndHidesWhatTheModelHides) {
  store.revenue = {sale(kLordHowe1am, "", 2, 1000)};
  const auto res = get(Viewer::seller("s1"), ReportKind::kRevenue, "group_by=");
  ASSERT_EQ(res.status, 200) << res.body;
  ASSERT_EQ(store.asked.size(), 2u);
  EXPECT_EQ(store.asked[0].filters,
            (std::vector<std::pair<ReportKey, std::string>>{{ReportKey::kSeller, "s1"}}));
  EXPECT_EQ(store.asked[1].filters, store.asked[0].filters);  // the aged sales: its own too
  // The default range: the 7 days up to the end of the current quarter hour.
  EXPECT_EQ(store.asked[0].to_ms, kLordHowe1am + 5 * kHour + 15 * 60'000);
  const json totals = json::parse(res.body)["data"]["totals"];
  EXPECT_EQ(totals["leads_sold"], 2);
  EXPECT_EQ(totals["payout"], 5.0);
  EXPECT_EQ(totals.count("margin"), 0u);  // the operator's alone (SPEC §8)
  EXPECT_EQ(totals.count("revenue"), 0u);
  EXPECT_EQ(totals["aged_payout"], 0.0);
  EXPECT_EQ(totals.count("aged_revenue"), 0u);
  EXPECT_EQ(totals.count("aged_margin"), 0u);
}

TEST_F(ReportHandler, RevenueSaysHowMuchCameFromAgedSales) {
  store.revenue = {sale(kLordHowe1am, "b1", 3, 3000), sale(kLordHowe1am + kHour, "b2", 1, 500)};
  store.aged = {sale(kLordHowe1am + 15 * 60'000, "b1", 1, 400)};
  const auto res = get(Viewer{}, ReportKind::kRevenue,
                       "from=2026-04-04T14:00:00Z&to=2026-04-04T16:00:00Z&group_by=buyer");
  ASSERT_EQ(res.status, 200) << res.body;
  const json data = json::parse(res.body)["data"];
  ASSERT_EQ(data["rows"].size(), 2u);
  EXPECT_EQ(data["rows"][0]["buyer_id"], "b1");
  EXPECT_EQ(data["rows"][0]["aged_sales"], 1);
  EXPECT_EQ(data["rows"][0]["aged_revenue"], 4.0);
  EXPECT_EQ(data["rows"][0]["aged_payout"], 2.0);
  EXPECT_EQ(data["rows"][0]["aged_margin"], 2.0);
  // Nothing returned: the aged band net of returns is the sales as made.
  EXPECT_EQ(data["rows"][0]["aged_net_revenue"], 4.0);
  EXPECT_EQ(data["rows"][0]["aged_net_payout"], 2.0);
  EXPECT_EQ(data["rows"][0]["aged_net_margin"], 2.0);
  EXPECT_EQ(data["rows"][1]["aged_sales"], 0);
  EXPECT_EQ(data["totals"]["gross_revenue"], 35.0);
  EXPECT_EQ(data["totals"]["aged_revenue"], 4.0);
  // A buyer reads its own spend on aged leads, never a payout or the margin.
  const auto mine = get(Viewer::buyer("b1"), ReportKind::kRevenue,
                        "from=2026-04-04T14:00:00Z&to=2026-04-04T16:00:00Z&format=csv");
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(mine.body.substr(0, mine.body.find("\r\n")),
            "day,leads_sold,revenue,avg_price,gross_revenue,returns,returned_revenue,aged_sales,"
            "aged_revenue,aged_returns,aged_returned_revenue,aged_net_revenue");
  // The aged sales unread: a 503, never a report without them.
  store.bands_up = false;
  EXPECT_EQ(get(Viewer{}, ReportKind::kRevenue, "").status, 503);
  EXPECT_EQ(get(Viewer{}, ReportKind::kUnsold, "").status, 503);
}

RevenueCell returned(std::int64_t at, std::string buyer, std::int64_t returns, Cents revenue) {
  RevenueCell c;
  c.bucket_ms = at;
  c.keys = {std::move(buyer)};
  c.returns = returns;
  c.returned_revenue = revenue;
  c.returned_payout = revenue / 2;
  return c;
}

// The returns of aged sales, apart (docs/reoffers.md): read from the aged sales' band, in the
// same two questions, each reader its own money of them as of the other returns.
TEST_F(ReportHandler, RevenueSaysHowMuchOfTheAgedSalesWasReturned) {
  store.revenue = {sale(kLordHowe1am, "b1", 3, 3000),
                   returned(kLordHowe1am + kHour, "b1", 2, 1400)};
  store.aged = {sale(kLordHowe1am + 15 * 60'000, "b1", 1, 400),
                returned(kLordHowe1am + kHour, "b1", 1, 400)};
  const std::string range = "from=2026-04-04T14:00:00Z&to=2026-04-04T16:00:00Z";
  const auto res = get(Viewer{}, ReportKind::kRevenue, range + "&group_by=buyer");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(store.asked.size(), 2u);  // no question more than the aged sales' band
  const json data = json::parse(res.body)["data"];
  ASSERT_EQ(data["rows"].size(), 1u);
  const json& b1 = data["rows"][0];
  EXPECT_EQ(b1["returns"], 2);
  EXPECT_EQ(b1["aged_returns"], 1);
  EXPECT_EQ(b1["aged_returned_revenue"], 4.0);
  EXPECT_EQ(b1["aged_returned_payout"], 2.0);
  EXPECT_EQ(b1["aged_revenue"], 4.0);      // the aged sale, as made
  EXPECT_EQ(b1["aged_net_revenue"], 0.0);  // and returned: nothing left of it
  EXPECT_EQ(b1["aged_net_payout"], 0.0);
  EXPECT_EQ(b1["aged_net_margin"], 0.0);
  EXPECT_EQ(b1["margin"], 8.0);  // the row's net margin: all of it live
  EXPECT_EQ(data["totals"]["aged_returns"], 1);
  // A seller reads the payout its aged sales gave back, never what the buyer was refunded.
  const auto seller = get(Viewer::seller("s1"), ReportKind::kRevenue, range);
  ASSERT_EQ(seller.status, 200) << seller.body;
  const json sold = json::parse(seller.body)["data"]["totals"];
  EXPECT_EQ(sold["aged_returns"], 1);
  EXPECT_EQ(sold["aged_returned_payout"], 2.0);
  EXPECT_EQ(sold.count("aged_returned_revenue"), 0u);
  EXPECT_EQ(sold["aged_net_payout"], 0.0);
  EXPECT_EQ(sold.count("aged_net_revenue") + sold.count("aged_net_margin"), 0u);
  // A buyer reads its refunds of aged leads, never a payout; in JSON and CSV alike.
  const auto buyer = get(Viewer::buyer("b1"), ReportKind::kRevenue, range);
  ASSERT_EQ(buyer.status, 200) << buyer.body;
  const json bought = json::parse(buyer.body)["data"]["totals"];
  EXPECT_EQ(bought["aged_returned_revenue"], 4.0);
  EXPECT_EQ(bought.count("aged_returned_payout"), 0u);
  EXPECT_EQ(bought["aged_net_revenue"], 0.0);
  EXPECT_EQ(bought.count("aged_net_payout") + bought.count("aged_net_margin"), 0u);
  const auto csv = get(Viewer::seller("s1"), ReportKind::kRevenue, range + "&format=csv");
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_EQ(csv.body.substr(0, csv.body.find("\r\n")),
            "day,leads_sold,payout,returns,returned_payout,aged_sales,aged_payout,aged_returns,"
            "aged_returned_payout,aged_net_payout");
  EXPECT_NE(csv.body.find(",1,2.0,0.0\r\n"), std::string::npos) << csv.body;
}

TEST_F(ReportHandler, RefusesWhatTheReaderMayNotAskBeforeAskingTheStore) {
  EXPECT_EQ(get(Viewer::buyer("b1"), ReportKind::kUnsold, "").status, 403);
  const auto other = get(Viewer::seller("s1"), ReportKind::kRevenue, "seller_id=s2");
  EXPECT_EQ(other.status, 400);
  EXPECT_NE(other.body.find("another account"), std::string::npos);
  EXPECT_EQ(get(Viewer{}, ReportKind::kRevenue, "tz=Mars/Olympus").status, 400);
  EXPECT_EQ(get(Viewer{}, ReportKind::kRevenue, "from=2026-04-04T14:05:00Z").status, 400);
  EXPECT_EQ(get(Viewer{}, ReportKind::kRevenue, "group_by=day,hour").status, 400);
  EXPECT_EQ(get(Viewer{}, ReportKind::kRevenue, "source_code=x").status, 400);
  EXPECT_TRUE(store.asked.empty());
}

TEST_F(ReportHandler, AStoreThatCannotSayIsA503) {
  store.up = false;
  const auto res = get(Viewer{}, ReportKind::kPerformance, "");
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(store.asked.size(), 1u);
}

TEST_F(ReportHandler, PerformanceByBuyerNullsTheLeadsOwnCounts) {
  PerformanceCell lead;
  lead.keys = {""};
  lead.figures[kLeads] = 3;
  lead.figures[kSold] = 3;
  PerformanceCell buyer;
  buyer.keys = {"b1"};
  buyer.figures[kPosts] = 4;
  buyer.figures[kAccepted] = 3;
  store.performance = {lead, buyer};
  const auto res = get(Viewer{}, ReportKind::kPerformance, "group_by=buyer");
  ASSERT_EQ(res.status, 200) << res.body;
  const json data = json::parse(res.body)["data"];
  ASSERT_EQ(data["rows"].size(), 1u);
  EXPECT_EQ(data["rows"][0]["buyer_id"], "b1");
  EXPECT_TRUE(data["rows"][0]["leads"].is_null());
  EXPECT_EQ(data["rows"][0]["acceptance_rate"], 0.75);
  EXPECT_EQ(data["totals"]["leads"], 3);
  EXPECT_EQ(data["totals"]["acceptance_rate"], 1.0);
}

TEST_F(ReportHandler, UnsoldAsCsvIsCutByReason) {
  UnsoldCell a;
  a.keys = {"no_bid"};
  a.leads = 2;
  UnsoldCell b;
  b.keys = {"=refused"};
  b.leads = 5;
  store.unsold = {a, b};
  const auto res = get(Viewer{}, ReportKind::kUnsold, "format=csv");
  ASSERT_EQ(res.status, 200) << res.body;
  ASSERT_EQ(store.asked.size(), 3u);  // the unsold leads, then the two bands
  EXPECT_EQ(store.asked[2].from_ms, band_bucket(store.asked[0].from_ms, kSoldAgedBand));
  EXPECT_EQ(store.asked[0].group, std::vector<ReportKey>{ReportKey::kReason});
  EXPECT_EQ(store.asked[0].filters,
            (std::vector<std::pair<ReportKey, std::string>>{{ReportKey::kBuyer, ""}}));
  // The most leads first; a field a spreadsheet would read as a formula is quoted.
  EXPECT_EQ(res.body, "reason,leads,reoffered,sold_aged\r\n'=refused,5,0,0\r\nno_bid,2,0,0\r\n");
  EXPECT_NE(res.header("Content-Disposition").find("unsold_2026-"), std::string_view::npos);
}

}  // namespace
}  // namespace leadflow
