// The statement routes' handlers without a server: requests parsed as the server would, the
// store as FakeStore (the SQLite adapter on a temporary file, which can be made unavailable),
// time on a manual clock. What each party may read, every refusal's status, the close audited.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/http/parser.hpp"
#include "statements.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kOct20 = 1'792'497'600'000;  // 2026-10-20T12:00Z
constexpr std::int64_t kNov2 = 1'793'577'600'000;   // 2026-11-02T00:00Z

class StatementHandler : public ::testing::Test {
 protected:
  void SetUp() override {
    Buyer b;
    b.id = buyer;
    b.name = "Buyer";
    b.verticals = {"auto_insurance"};
    b.ping_url = "https://buyer.example.com/ping";
    b.post_url = "https://buyer.example.com/post";
    ASSERT_EQ(store.insert_buyer(b), StoreStatus::kOk);
    Seller s;
    s.id = seller;
    s.name = "Seller";
    ASSERT_EQ(store.insert_seller(s), StoreStatus::kOk);
    Lead l;
    l.id = new_id(kLeadPrefix, kOct20);
    l.seller_id = seller;
    l.api_key_id = "key_s";
    l.first_name = "Ada";
    l.last_name = "L";
    l.email = "ada@example.com";
    l.phone = "+14155550100";
    l.zip_code = "94107";
    l.vertical = "auto_insurance";
    l.source = "test";
    l.received_at_ms = kOct20;
    ASSERT_TRUE(store.insert_leads(std::vector<Lead>{l}).front().inserted);
    Distribution d;
    d.status = DeliveryStatus::kDelivered;
    d.buyer_id = buyer;
    d.price = 1500;
    d.payout = 1050;
    d.decided_at_ms = kOct20;
    ASSERT_EQ(store.record_outcomes(std::vector<OutcomeRecord>{{l.id, d}}).front(),
              StoreStatus::kOk);
  }

  http::Response get(const Viewer& viewer, const std::string& path) {
    const std::string raw = "GET " + path + " HTTP/1.1\r\nHost: a.example\r\n\r\n";
    http::Request req;
    EXPECT_EQ(http::parse_request(raw, http::ParseLimits{}, req).status,
              http::ParseStatus::kComplete);
    http::Response res;
    if (path.rfind("/v1/periods", 0) == 0)
      answer_periods(ports, viewer, req, res);
    else
      answer_statement(ports, viewer, req, res);
    return res;
  }
  http::Response close(const ApiKey& key, const std::string& period) {
    http::Response res;
    answer_close(ports, key, Viewer::of(key), period, res);
    return res;
  }
  static json body(const http::Response& r) { return json::parse(r.body); }

  ManualClock clock{SystemTime{std::chrono::milliseconds{kOct20 + 3'600'000}}};
  testing::FakeStore store{clock};
  std::vector<AuditRecord> audited;
  StatementPorts ports{store, store, clock, [this](const AuditRecord& r) { audited.push_back(r); }};
  std::string buyer = new_id(kBuyerPrefix, kOct20), seller = new_id(kSellerPrefix, kOct20);
  ApiKey op = [] {
    ApiKey k;
    k.id = "key_op";
    return k;
  }();
};

TEST_F(StatementHandler, EachPartyReadsOnlyItsOwnSideOfItsOwnStatement) {
  auto mine = get(Viewer::buyer(buyer), "/v1/statements?period=2026-10");
  ASSERT_EQ(mine.status, 200) << mine.body;
  const json s = body(mine)["data"];
  EXPECT_EQ(s["party"], "buyer");
  EXPECT_EQ(s["totals"]["total"], 15.0);
  EXPECT_FALSE(s["totals"].contains("total_payout"));
  EXPECT_FALSE(s["lines"][0].contains("payout"));
  EXPECT_FALSE(s["lines"][0].contains("seller_id"));
  auto paid = get(Viewer::seller(seller), "/v1/statements?period=2026-10");
  ASSERT_EQ(paid.status, 200) << paid.body;
  EXPECT_EQ(body(paid)["data"]["totals"]["total_payout"], 10.5);
  EXPECT_FALSE(body(paid)["data"]["lines"][0].contains("amount"));
  EXPECT_FALSE(body(paid)["data"]["lines"][0].contains("buyer_id"));
  // Another's statement, or an unknown account, is not found.
  EXPECT_EQ(
      get(Viewer::buyer("by_other"), "/v1/statements?party=buyer&id=" + buyer + "&period=2026-10")
          .status,
      404);
  EXPECT_EQ(
      get(Viewer::seller(seller), "/v1/statements?party=buyer&id=" + buyer + "&period=2026-10")
          .status,
      404);
  EXPECT_EQ(get(Viewer{}, "/v1/statements?party=seller&id=sl_nobody&period=2026-10").status, 404);
  auto all = get(Viewer{}, "/v1/statements?party=buyer&id=" + buyer + "&period=2026-10");
  EXPECT_EQ(body(all)["data"]["totals"]["margin"], 4.5);
}

TEST_F(StatementHandler, BadParametersAreNamed) {
  auto r = get(Viewer{}, "/v1/statements?period=2026-13&format=xml");
  ASSERT_EQ(r.status, 400);
  std::vector<std::string> fields;
  const json answer = body(r);
  for (const auto& e : answer["errors"]) fields.push_back(e["field"]);
  EXPECT_EQ(fields, (std::vector<std::string>{"party", "id", "period", "format"}));
  EXPECT_EQ(get(Viewer{}, "/v1/periods?calendar=year").status, 400);
}

TEST_F(StatementHandler, TheOperatorClosesAnEndedPeriodOnceAndItIsAudited) {
  ApiKey buyer_key;
  buyer_key.id = "key_b";
  buyer_key.buyer_id = buyer;
  EXPECT_EQ(close(buyer_key, "2026-10").status, 403);
  EXPECT_EQ(close(op, "2026-1").status, 400);
  EXPECT_EQ(close(op, "2026-10").status, 422);  // not ended yet
  EXPECT_TRUE(audited.empty());
  clock.advance(std::chrono::milliseconds(kNov2 - clock.now_ms()));
  auto done = close(op, "2026-10");
  ASSERT_EQ(done.status, 201) << done.body;
  EXPECT_EQ(body(done)["data"]["closed_by"], "key_op");
  EXPECT_EQ(body(done)["data"]["totals"].size(), 2u);
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].event, AuditEvent::kPeriodClosed);
  EXPECT_EQ(audited[0].kind, "month");
  auto again = close(op, "2026-10");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(body(again)["close"]["period"], "2026-10");
  EXPECT_EQ(audited.size(), 1u);
  auto periods = get(Viewer::buyer(buyer), "/v1/periods");
  ASSERT_EQ(periods.status, 200);
  EXPECT_EQ(body(periods)["data"][1]["status"], "closed");
  EXPECT_FALSE(body(periods)["data"][1].contains("closed_by")) << "the operator's record";
  auto read = get(Viewer::buyer(buyer), "/v1/statements?period=2026-10");
  EXPECT_EQ(body(read)["data"]["status"], "closed");
}

TEST_F(StatementHandler, AStoreThatCannotAnswerIs503AndClosesNothing) {
  clock.advance(std::chrono::milliseconds(kNov2 - clock.now_ms()));
  store.unavailable_for(std::chrono::minutes(1));
  EXPECT_EQ(get(Viewer::buyer(buyer), "/v1/statements?period=2026-10").status, 503);
  EXPECT_EQ(get(Viewer{}, "/v1/periods").status, 503);
  EXPECT_EQ(close(op, "2026-10").status, 503);
  EXPECT_TRUE(audited.empty());
  clock.advance(std::chrono::minutes(2));
  EXPECT_EQ(close(op, "2026-10").status, 201);
}

}  // namespace
}  // namespace leadflow
