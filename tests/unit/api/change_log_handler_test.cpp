// GET /v1/audit's handler against a fake audit port: the query decoded into the port's
// ChangeQuery, each refused parameter named, the page encoded, a store outage a 503.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "change_log.hpp"
#include "fake_change_log.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kChangeLogT0 = 1'775'000'000'000;

class ChangeLogHandler : public ::testing::Test {
 protected:
  FakeChangeLog changes;
  std::string default_zone = "UTC";  // the signed-in user's zone; UTC for an API key

  http::Response get(const std::string& query) {
    const std::string raw = "GET /v1/audit" + query + " HTTP/1.1\r\nHost: a.example\r\n\r\n";
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_change_log(changes, req, res, default_zone);
    return res;
  }

  void add(int n) {
    for (int i = 0; i < n; ++i) {
      ChangeEntry e;
      e.at_ms = kChangeLogT0 + i;
      e.id = new_id(kChangePrefix, e.at_ms);
      e.actor = {"us_olga", "Olga", "dashboard"};
      e.action = "updated";
      e.object_kind = "buyer";
      e.object_id = "by_" + std::to_string(i);
      e.object_name = "Buyer " + std::to_string(i);
      e.changes = {{"name", "Old", e.object_name}};
      changes.entries.push_back(e);
    }
  }

  static std::vector<std::string> fields_of(const http::Response& res) {
    std::vector<std::string> out;
    const json body = json::parse(res.body);  // a range-for over a temporary's member dangles
    for (const auto& e : body["errors"]) out.push_back(e["field"]);
    return out;
  }
};

TEST_F(ChangeLogHandler, AsksThePortForTheFiltersOfTheQuery) {
  ASSERT_EQ(
      get("?q=Acme&object_kind=buyer&actor=us_olga&from=2026-11-01&to=2026-11-27&limit=10").status,
      200);
  ASSERT_EQ(changes.asked.size(), 1u);
  const ChangeQuery& q = changes.asked[0];
  EXPECT_EQ(q.q, "Acme");
  EXPECT_EQ(q.object_kind, "buyer");
  EXPECT_EQ(q.actor, "us_olga");
  EXPECT_EQ(q.from_ms, 1'793'491'200'000);  // 2026-11-01T00:00:00Z
  EXPECT_EQ(q.to_ms, 1'795'824'000'000);    // the end of 2026-11-27 (UTC), excluded
  EXPECT_EQ(q.limit, 11);                   // one more: whether another page follows
}

// Whole days in the zone asked, as the lead list's: New York's 2026-11-01 runs 04:00Z to 05:00Z
// the next day, 25 hours (the clocks fall back); the user's zone applies without `tz`; a full
// date-time keeps its instant; an unknown zone is refused by name before the store is asked.
TEST_F(ChangeLogHandler, ABareDateIsAWholeDayInTheZoneAskedAcrossAChangeOfClocks) {
  constexpr std::int64_t kNov1NewYork = 1'793'505'600'000;  // 2026-11-01T04:00:00Z
  ASSERT_EQ(get("?from=2026-11-01&to=2026-11-01&tz=America/New_York").status, 200);
  EXPECT_EQ(changes.asked.back().from_ms, kNov1NewYork);
  EXPECT_EQ(changes.asked.back().to_ms, kNov1NewYork + 25 * 3'600'000);

  default_zone = "America/New_York";
  ASSERT_EQ(get("?from=2026-11-01&to=2026-11-01").status, 200);
  EXPECT_EQ(changes.asked.back().from_ms, kNov1NewYork);
  EXPECT_EQ(changes.asked.back().to_ms, kNov1NewYork + 25 * 3'600'000);
  ASSERT_EQ(get("?from=2026-11-01&tz=UTC").status, 200);
  EXPECT_EQ(changes.asked.back().from_ms, kNov1NewYork - 4 * 3'600'000);
  ASSERT_EQ(get("?from=2026-11-01T04:30:00Z").status, 200);
  EXPECT_EQ(changes.asked.back().from_ms, kNov1NewYork + 1'800'000);

  const std::size_t asked = changes.asked.size();
  const http::Response bad = get("?from=2026-11-01&tz=Mars/Olympus_Mons");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(fields_of(bad), std::vector<std::string>{"tz"});
  EXPECT_EQ(changes.asked.size(), asked);
}

TEST_F(ChangeLogHandler, AnswersAPageNewestFirstWithEachFieldsBeforeAndAfter) {
  add(3);
  const http::Response res = get("?limit=2");
  ASSERT_EQ(res.status, 200) << res.body;
  const json body = json::parse(res.body);
  ASSERT_EQ(body["data"].size(), 2u);
  const json& top = body["data"][0];
  EXPECT_EQ(top["object"], json({{"kind", "buyer"}, {"id", "by_2"}, {"name", "Buyer 2"}}));
  EXPECT_EQ(top["actor"], json({{"id", "us_olga"}, {"name", "Olga"}, {"surface", "dashboard"}}));
  EXPECT_EQ(top["action"], "updated");
  EXPECT_EQ(top["at"], "2026-03-31T23:33:20.002Z");
  EXPECT_EQ(top["changes"],
            json::parse(R"([{"field": "name", "before": "Old", "after": "Buyer 2"}])"));
  EXPECT_TRUE(body["has_more"]);
  // The next page starts after the last entry shown.
  const std::string cursor = body["next_cursor"];
  ASSERT_EQ(get("?limit=2&cursor=" + cursor).status, 200);
  EXPECT_EQ(changes.asked.back().before_id, changes.entries[1].id);
}

TEST_F(ChangeLogHandler, NamesEachRefusedParameterWithoutAskingThePort) {
  const http::Response res =
      get("?object_kind=invoice&from=yesterday&limit=500&cursor=abc&sort=name");
  EXPECT_EQ(res.status, 400);
  auto fields = fields_of(res);
  std::sort(fields.begin(), fields.end());
  EXPECT_EQ(fields, (std::vector<std::string>{"cursor", "from", "limit", "object_kind", "sort"}));
  EXPECT_TRUE(changes.asked.empty());
}

TEST_F(ChangeLogHandler, AStoreThatCannotSayIsA503) {
  changes.down = true;
  EXPECT_EQ(get("").status, 503);
}

}  // namespace
}  // namespace leadflow::testing
