// GET /v1/ledger's handler against a fake money port: entries oldest first after the cursor,
// paged; a download cut at 10,000 entries with the cursor of the next; an outage a 503, never a
// short page or download; each refused parameter named; the filters decoded into the store's
// query (time bounds as the other lists read them), and a cursor bound to its filters.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/api/http_util.hpp"
#include "leadflow/http/parser.hpp"
#include "ledger_routes.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kLedgerT0 = 1'775'000'000'000;
// Well-formed ids of each kind (the filters refuse any other).
const std::string kBuyer1 = "by_00000000000000000000000001";
const std::string kBuyer2 = "by_00000000000000000000000002";
const std::string kBuyer7 = "by_00000000000000000000000007";
const std::string kSeller1 = "sl_00000000000000000000000001";
const std::string kSeller2 = "sl_00000000000000000000000002";
const std::string kLead9 = "ld_00000000000000000000000009";

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
    // As the adapters: the filters, then (at, id) after the cursor (entries are in that order).
    std::vector<LedgerEntry> page;
    for (const auto& e : entries) {
      if (!q.buyer_id.empty() && e.buyer_id != q.buyer_id) continue;
      if (!q.kind.empty() && e.kind != q.kind) continue;
      if (q.from_ms != 0 && e.at_ms < q.from_ms) continue;
      if (q.to_ms != 0 && e.at_ms >= q.to_ms) continue;
      if (q.after_id != 0 && std::pair(e.at_ms, e.id) <= std::pair(q.after_at_ms, q.after_id))
        continue;
      if (static_cast<int>(page.size()) < std::min(q.limit, 1000)) page.push_back(e);
    }
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

  http::Response get(const std::string& query, const std::string& accept = "",
                     const std::string& zone = "UTC") {
    const std::string raw = "GET /v1/ledger" + query + " HTTP/1.1\r\nHost: a.example\r\n" +
                            (accept.empty() ? "" : "Accept: " + accept + "\r\n") + "\r\n";
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_ledger(ledger, Viewer{}, req, res, zone);
    return res;
  }

  void add(int n) {
    for (int i = 0; i < n; ++i) {
      LedgerEntry e;
      e.id = static_cast<std::int64_t>(ledger.entries.size()) + 1;
      e.kind = "sale";
      e.lead_id = "ld_" + std::to_string(e.id);
      e.buyer_id = kBuyer1;
      e.seller_id = kSeller1;
      e.revenue = 2000;
      e.payout = 1400;
      e.at_ms = kLedgerT0 + e.id;
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
  // The last entry's time and id, and the filters' mark.
  EXPECT_EQ(http::decode_cursor(next).rfind(std::to_string(kLedgerT0 + 10'000) + ".10000.", 0), 0u)
      << http::decode_cursor(next);
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
  const http::Response bad = get("?limit=500&cursor=%21%21&format=pdf&account=" + kBuyer1);
  ASSERT_EQ(bad.status, 400) << bad.body;
  std::vector<std::string> fields;
  const json body = json::parse(bad.body);  // a range-for over a temporary's member dangles
  for (const auto& e : body["errors"]) fields.push_back(e["field"]);
  std::sort(fields.begin(), fields.end());
  EXPECT_EQ(fields, (std::vector<std::string>{"account", "cursor", "format", "limit"}));
  EXPECT_TRUE(ledger.asked.empty());
}

// The fields refused by decode_ledger_query for `query`, sorted.
std::vector<std::string> refused(const std::string& query) {
  const std::string raw = "GET /v1/ledger" + query + " HTTP/1.1\r\nHost: a.example\r\n\r\n";
  http::Request req;
  EXPECT_EQ(http::parse_request(raw, http::ParseLimits{}, req).status,
            http::ParseStatus::kComplete);
  FieldErrors errors;
  decode_ledger_query(req, "UTC", errors);
  std::vector<std::string> fields;
  for (const auto& e : errors) fields.push_back(e.field);
  std::sort(fields.begin(), fields.end());
  return fields;
}

TEST_F(LedgerHandler, TheFiltersReachTheStoreAsTheyWereAsked) {
  add(3);
  ASSERT_EQ(get("?buyer_id=" + kBuyer7 + "&seller_id=" + kSeller2 + "&lead_id=" + kLead9 +
                "&kind=return&limit=5")
                .status,
            200);
  ASSERT_EQ(ledger.asked.size(), 1u);
  const LedgerQuery& q = ledger.asked[0];
  EXPECT_EQ(q.buyer_id, kBuyer7);
  EXPECT_EQ(q.seller_id, kSeller2);
  EXPECT_EQ(q.lead_id, kLead9);
  EXPECT_EQ(q.kind, "return");
  EXPECT_EQ(q.limit, 6);  // one more than the page, to know whether another follows
  EXPECT_EQ(q.from_ms, 0);
  EXPECT_EQ(q.to_ms, 0);
  EXPECT_EQ(q.after_id, 0);
}

TEST_F(LedgerHandler, TimeBoundsAreHalfOpenInstantsOrWholeDaysOfTheZone) {
  // Instants as given; `to` excluded by the store.
  ASSERT_EQ(get("?from=2026-11-01T10:00:00Z&to=2026-11-01T10:15:00.500Z").status, 200);
  EXPECT_EQ(ledger.asked.back().from_ms, 1'793'527'200'000);
  EXPECT_EQ(ledger.asked.back().to_ms, 1'793'528'100'500);
  // Bare dates: the first day's midnight to the midnight after the last, in `tz`...
  ASSERT_EQ(get("?from=2026-11-01&to=2026-11-01&tz=America/New_York").status, 200);
  EXPECT_EQ(ledger.asked.back().from_ms, 1'793'505'600'000);  // 04:00Z, still EDT
  EXPECT_EQ(ledger.asked.back().to_ms, 1'793'595'600'000);    // 05:00Z on the 2nd, EST: 25 h
  // ... else in the reader's own zone (a signed-in user's), else UTC.
  ASSERT_EQ(get("?from=2026-11-02", "", "Europe/Paris").status, 200);
  EXPECT_EQ(ledger.asked.back().from_ms, 1'793'574'000'000);  // 23:00Z on the 1st
  ASSERT_EQ(get("?to=2026-11-02").status, 200);
  EXPECT_EQ(ledger.asked.back().to_ms, 1'793'664'000'000);  // midnight UTC after the 2nd
}

TEST_F(LedgerHandler, EachMalformedFilterIsNamed) {
  EXPECT_EQ(refused("?buyer_id=" + kSeller1 + "&seller_id=" + kBuyer1 + "&lead_id=x&kind=fee"),
            (std::vector<std::string>{"buyer_id", "kind", "lead_id", "seller_id"}));
  EXPECT_EQ(refused("?from=2026-13-01&to=soon"), (std::vector<std::string>{"from", "to"}));
  EXPECT_EQ(refused("?from=2026-11-02&to=2026-11-01"), (std::vector<std::string>{"to"}));
  EXPECT_EQ(refused("?from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z"),
            (std::vector<std::string>{"to"}));
  EXPECT_EQ(refused("?tz=Nowhere%2FLand&from=2026-11-01"), (std::vector<std::string>{"tz"}));
  EXPECT_TRUE(refused("?kind=sale&buyer_id=" + kBuyer1 + "&from=2026-11-01&to=2026-11-30").empty());
}

TEST_F(LedgerHandler, FilteredPagesKeepTheirFiltersAndTheirCursorNoOther) {
  add(6);
  for (auto& e : ledger.entries)
    if (e.id % 2 == 0) e.buyer_id = kBuyer2;
  const json first = json::parse(get("?buyer_id=" + kBuyer2 + "&limit=2").body);
  ASSERT_EQ(first["data"].size(), 2u);
  EXPECT_EQ(first["data"][0]["entry_id"], 2);
  EXPECT_EQ(first["data"][1]["entry_id"], 4);
  const std::string cursor = first["next_cursor"];
  const json rest = json::parse(get("?buyer_id=" + kBuyer2 + "&limit=2&cursor=" + cursor).body);
  ASSERT_EQ(rest["data"].size(), 1u);
  EXPECT_EQ(rest["data"][0]["entry_id"], 6);
  EXPECT_EQ(ledger.asked.back().after_id, 4);
  EXPECT_EQ(ledger.asked.back().after_at_ms, kLedgerT0 + 4);
  // The same cursor with other filters (or none) would skip or repeat entries: refused.
  const std::size_t asked = ledger.asked.size();
  EXPECT_EQ(refused("?buyer_id=" + kBuyer1 + "&cursor=" + cursor),
            std::vector<std::string>{"cursor"});
  EXPECT_EQ(refused("?cursor=" + cursor), std::vector<std::string>{"cursor"});
  EXPECT_EQ(refused("?buyer_id=" + kBuyer2 + "&kind=sale&cursor=" + cursor),
            std::vector<std::string>{"cursor"});
  EXPECT_EQ(get("?cursor=" + cursor).status, 400);
  EXPECT_EQ(ledger.asked.size(), asked);
  // The page's cursor serves the download of the same filters, and the other way round.
  const http::Response csv = get("?buyer_id=" + kBuyer2 + "&format=csv&cursor=" + cursor);
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_EQ(lines(csv.body), 2u);  // the header and entry 6
  EXPECT_EQ(csv.header("Content-Disposition"),
            "attachment; filename=\"ledger_2026-03-31_2026-03-31.csv\"");
}

}  // namespace
}  // namespace leadflow::testing
