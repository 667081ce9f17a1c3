// GET /v1/ledger's handler against a fake money port: entries oldest first after the cursor,
// paged; a download cut at 10,000 entries with the cursor of the next; an outage a 503, never a
// short page or download; each refused parameter named.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/api/http_util.hpp"
#include "leadflow/http/parser.hpp"
#include "ledger_routes.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kT0 = 1'775'000'000'000;

class FakeLedger final : public MoneyStore {
 public:
  std::vector<LedgerEntry> entries;  // in id order
  bool down = false;
  int down_after = -1;  // pages answered before the store goes down; -1: never
  std::vector<LedgerQuery> asked;

  bool healthy() override { return !down; }
  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& q) override {
    asked.push_back(q);
    if (down || (down_after >= 0 && static_cast<int>(asked.size()) > down_after))
      return std::nullopt;
    std::vector<LedgerEntry> page;
    for (const auto& e : entries)
      if (e.id > q.after_id && static_cast<int>(page.size()) < std::min(q.limit, 1000))
        page.push_back(e);
    return page;
  }
  ReturnResult record_return(const ReturnRequest&) override { return {}; }
  SettleResult settle_lead(const Settlement&, const PayoutRule&) override { return {}; }
  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view) override {
    return std::nullopt;
  }
  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view) override {
    return std::nullopt;
  }
  std::optional<ReturnStats> return_stats(std::string_view, std::int64_t) override {
    return std::nullopt;
  }
};

class LedgerHandler : public ::testing::Test {
 protected:
  FakeLedger ledger;

  http::Response get(const std::string& query, const std::string& accept = "") {
    const std::string raw = "GET /v1/ledger" + query + " HTTP/1.1\r\nHost: a.example\r\n" +
                            (accept.empty() ? "" : "Accept: " + accept + "\r\n") + "\r\n";
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_ledger(ledger, Viewer{}, req, res);
    return res;
  }

  void add(int n) {
    for (int i = 0; i < n; ++i) {
      LedgerEntry e;
      e.id = static_cast<std::int64_t>(ledger.entries.size()) + 1;
      e.kind = "sale";
      e.lead_id = "ld_" + std::to_string(e.id);
      e.buyer_id = "by_1";
      e.seller_id = "sl_1";
      e.revenue = 2000;
      e.payout = 1400;
      e.at_ms = kT0 + e.id;
      ledger.entries.push_back(e);
    }
  }

  static std::size_t lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
};

TEST_F(LedgerHandler, PagesGoOldestFirstFromTheCursor) {
  add(5);
  const http::Response first = get("?limit=2");
  ASSERT_EQ(first.status, 200) << first.body;
  const json page = json::parse(first.body);
  ASSERT_EQ(page["data"].size(), 2u);
  EXPECT_EQ(page["data"][0]["entry_id"], 1);
  EXPECT_EQ(page["data"][1]["entry_id"], 2);
  EXPECT_EQ(page["data"][0]["margin"], 6.0);
  EXPECT_EQ(page["has_more"], true);
  const http::Response last = get("?limit=3&cursor=" + page["next_cursor"].get<std::string>());
  const json rest = json::parse(last.body);
  ASSERT_EQ(rest["data"].size(), 3u);
  EXPECT_EQ(rest["data"][0]["entry_id"], 3);
  EXPECT_EQ(rest["has_more"], false);
  EXPECT_TRUE(rest["next_cursor"].is_null());
}

TEST_F(LedgerHandler, ADownloadStopsAtTenThousandEntriesWithTheCursorOfTheNext) {
  add(10'500);
  const http::Response csv = get("?format=csv");
  ASSERT_EQ(csv.status, 200);
  EXPECT_EQ(lines(csv.body), 10'001u);  // the header and 10,000 entries
  EXPECT_EQ(csv.header("X-Has-More"), "true");
  const std::string next(csv.header("X-Next-Cursor"));
  ASSERT_FALSE(next.empty());
  EXPECT_EQ(http::decode_cursor(next), "10000");
  const http::Response rest = get("?cursor=" + next, "text/csv");
  ASSERT_EQ(rest.status, 200);
  EXPECT_EQ(lines(rest.body), 501u);
  EXPECT_EQ(rest.header("X-Has-More"), "false");
  EXPECT_EQ(rest.header("X-Next-Cursor"), "");
  EXPECT_NE(rest.body.find("\r\n10001,"), std::string::npos);
}

TEST_F(LedgerHandler, AnOutageIsA503NeverAShortPageOrDownload) {
  add(2'500);
  ledger.down = true;
  EXPECT_EQ(get("").status, 503);
  ledger.down = false;
  ledger.down_after = 1;  // the download's second page fails
  const http::Response csv = get("?format=csv");
  EXPECT_EQ(csv.status, 503) << csv.body;
  EXPECT_EQ(csv.header("Retry-After"), "1");
}

TEST_F(LedgerHandler, EachRefusedParameterIsNamed) {
  const http::Response bad = get("?limit=500&cursor=%21%21&format=pdf&buyer_id=by_1");
  ASSERT_EQ(bad.status, 400) << bad.body;
  std::vector<std::string> fields;
  const json body = json::parse(bad.body);  // a range-for over a temporary's member dangles
  for (const auto& e : body["errors"]) fields.push_back(e["field"]);
  std::sort(fields.begin(), fields.end());
  EXPECT_EQ(fields, (std::vector<std::string>{"buyer_id", "cursor", "format", "limit"}));
  EXPECT_TRUE(ledger.asked.empty());
}

}  // namespace
}  // namespace leadflow::testing
