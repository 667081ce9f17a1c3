// The return handler without a server: a request parsed as the server would, fake store ports,
// and the answer's status and body. Who may return, the window, the reason codes and notes, and
// what each refusal answers, including what a buyer may not learn of a lead it did not buy.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <prometheus/registry.h>
#include <nlohmann/json.hpp>

#include "fake_money_ports.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/http/parser.hpp"
#include "returns.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kReturnsDay = 86'400'000;
constexpr std::int64_t kReturnsNow = 1'775'000'000'000;  // 2026-03-31T23:33:20Z
const std::string kLead = "ld_01JQ0000000000000000000001";
const std::string kReturnsShared = "ld_01JQ0000000000000000000002";
const std::string kPending = "ld_01JQ0000000000000000000003";
const std::string kReturnsNobodys = "ld_01JQ0000000000000000000009";  // a valid id no lead has

ApiKey returns_key_of(std::string id, std::string buyer_id = "", std::string seller_id = "") {
  ApiKey k;
  k.id = std::move(id);
  k.buyer_id = std::move(buyer_id);
  k.seller_id = std::move(seller_id);
  return k;
}

// leadflow_returns_total{reason}, as /metrics would show it.
double returns_counted(const std::string& reason) {
  for (const auto& family : metrics_registry()->Collect()) {
    if (family.name != "leadflow_returns_total") continue;
    for (const auto& m : family.metric)
      for (const auto& label : m.label)
        if (label.name == "reason" && label.value == reason) return m.counter.value;
  }
  return 0;
}

class ReturnHandler : public ::testing::Test {
 protected:
  ReturnHandler() {
    Buyer high;
    high.id = "by_high";
    high.return_window_days = 7;
    store.buyers[high.id] = high;
    Buyer low = high;
    low.id = "by_low";
    store.buyers[low.id] = low;
    Buyer final_sale = high;
    final_sale.id = "by_final";
    final_sale.return_window_days = 0;
    store.buyers[final_sale.id] = final_sale;

    store.leads[kLead] = sold(kLead, {"by_high"});
    store.leads[kReturnsShared] = sold(kReturnsShared, {"by_high", "by_low"});
    store.leads[kPending] = sold(kPending, {});
    store.sold_at_ms = kReturnsNow - kReturnsDay;
  }

  static LeadRecord sold(const std::string& id, const std::vector<std::string>& buyers) {
    LeadRecord r;
    r.lead.id = id;
    r.lead.seller_id = "sl_1";
    for (const auto& b : buyers) r.distribution.sales.push_back(Sale{b, 2400, 1680, ""});
    if (!buyers.empty()) {
      r.distribution.status = DeliveryStatus::kDelivered;
      r.distribution.buyer_id = buyers.front();
    }
    return r;
  }

  http::Response post_raw(const ApiKey& key, const std::string& lead_id, const std::string& body,
                          const std::string& type = "application/json") {
    const std::string raw = "POST /v1/leads/" + lead_id +
                            "/return HTTP/1.1\r\nHost: a.example\r\nContent-Type: " + type +
                            "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                            body;
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_return(ports, key, Viewer::of(key), lead_id, req, res);
    return res;
  }
  http::Response post(const ApiKey& key, const std::string& lead_id, const json& body) {
    return post_raw(key, lead_id, body.dump());
  }

  static json body_of(const http::Response& res) { return json::parse(res.body); }
  static std::string field_of(const http::Response& res) {
    return body_of(res)["errors"][0]["field"].get<std::string>();
  }

  FakeMoneyPorts store;
  ManualClock clock{SystemTime{std::chrono::milliseconds{kReturnsNow}}};
  std::vector<std::string> reasons{"invalid_phone", "duplicate", "fraud", "other"};
  std::vector<Audited> audited;
  ReturnPorts ports{store,   store,
                    store,   clock,
                    reasons, [this](const AuditRecord& r) { audited.push_back(Audited::of(r)); }};
  const ApiKey high = returns_key_of("key_high", "by_high");
  const ApiKey low = returns_key_of("key_low", "by_low");
  const ApiKey op = returns_key_of("key_op");
};

TEST_F(ReturnHandler, ABuyerReturnsALeadItBoughtWithinItsWindow) {
  const double before = returns_counted("fraud");
  const auto res = post(high, kLead, {{"reason", "fraud"}, {"note", "a made-up person"}});
  ASSERT_EQ(res.status, 201) << res.body;
  ASSERT_EQ(store.returns_asked.size(), 1u);
  const ReturnRequest& asked = store.returns_asked[0];
  EXPECT_EQ(asked.lead_id, kLead);
  EXPECT_EQ(asked.buyer_id, "by_high");
  EXPECT_EQ(asked.reason, "fraud");
  EXPECT_EQ(asked.note, "a made-up person");
  EXPECT_EQ(asked.by_key_id, "key_high");
  EXPECT_EQ(asked.at_ms, kReturnsNow);
  EXPECT_EQ(asked.window_ms, 7 * kReturnsDay);
  // Its buyer reads the return's price side, never the seller's payout.
  const json data = body_of(res)["data"];
  EXPECT_EQ(data["buyer_id"], "by_high");
  EXPECT_EQ(data["price"], 24.0);
  EXPECT_EQ(data.count("payout"), 0u);
  EXPECT_EQ(returns_counted("fraud"), before + 1);
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].event, AuditEvent::kLeadReturned);
  EXPECT_EQ(audited[0].kind, "fraud");
  EXPECT_EQ(audited[0].lead_id, kLead);
  EXPECT_EQ(audited[0].buyer_id, "by_high");
  EXPECT_EQ(audited[0].seller_id, "sl_1");
  EXPECT_EQ(audited[0].actor_key_id, "key_high");
}

TEST_F(ReturnHandler, TheOperatorReturnsForTheLeadsBuyerOrTheOneItNames) {
  const auto only = post(op, kLead, {{"reason", "duplicate"}});
  ASSERT_EQ(only.status, 201) << only.body;
  EXPECT_EQ(store.returns_asked.back().buyer_id, "by_high");
  EXPECT_EQ(body_of(only)["data"]["payout"], 16.8);  // the operator reads all of it

  // A shared lead needs the buyer named, before the store is asked.
  const auto unnamed = post(op, kReturnsShared, {{"reason", "duplicate"}});
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_EQ(field_of(unnamed), "buyer_id");
  EXPECT_EQ(store.returns_asked.size(), 1u);
  const auto named = post(op, kReturnsShared, {{"reason", "duplicate"}, {"buyer_id", "by_low"}});
  ASSERT_EQ(named.status, 201) << named.body;
  EXPECT_EQ(store.returns_asked.back().buyer_id, "by_low");
}

TEST_F(ReturnHandler, ABuyerLearnsNothingOfALeadItDidNotBuy) {
  // Not its lead: 404 as for a lead that does not exist, before its window (or the store's
  // answer) is looked at, whatever the lead's state.
  store.return_answer = ReturnStatus::kWindowClosed;
  const auto not_its = post(low, kLead, {{"reason", "fraud"}});
  const auto none = post(low, kReturnsNobodys, {{"reason", "fraud"}});
  EXPECT_EQ(not_its.status, 404);
  EXPECT_EQ(not_its.body, none.body);
  EXPECT_EQ(post(low, kPending, {{"reason", "fraud"}}).status, 404);
  EXPECT_EQ(post(returns_key_of("key_final", "by_final"), kLead, {{"reason", "fraud"}}).status,
            404);
  EXPECT_TRUE(store.returns_asked.empty());
  // The store saying the lead was not sold to it reads the same.
  store.return_answer = ReturnStatus::kNotSold;
  EXPECT_EQ(post(high, kLead, {{"reason", "fraud"}}).status, 404);
  // A malformed id is no lead either, and is not looked up.
  const int reads = store.lead_reads;
  EXPECT_EQ(post(high, "ld_nonsense", {{"reason", "fraud"}}).status, 404);
  EXPECT_EQ(store.lead_reads, reads);
}

TEST_F(ReturnHandler, ConflictsAre409AndNameTheEarlierReturn) {
  EXPECT_EQ(post(op, kPending, {{"reason", "fraud"}}).status, 409);  // nothing to return
  EXPECT_EQ(post(op, kLead, {{"reason", "fraud"}, {"buyer_id", "by_nobody"}}).status, 409);
  store.return_answer = ReturnStatus::kNotSold;
  const auto not_that_buyer = post(op, kLead, {{"reason", "fraud"}, {"buyer_id", "by_low"}});
  EXPECT_EQ(not_that_buyer.status, 409);
  EXPECT_NE(not_that_buyer.body.find("not sold to that buyer"), std::string::npos);

  store.return_answer = ReturnStatus::kAlreadyReturned;
  store.earlier_return = LeadReturn{
      kLead,          "by_high", "duplicate", "", "key_high", 2400, 1680, kReturnsNow - kReturnsDay,
      kReturnsNow - 1};
  const auto again = post(high, kLead, {{"reason", "fraud"}});
  EXPECT_EQ(again.status, 409);
  const json body = body_of(again);
  EXPECT_EQ(body["detail"], "the lead was already returned");
  EXPECT_EQ(body["return"]["reason"], "duplicate");
  EXPECT_EQ(body["return"].count("payout"), 0u);
  EXPECT_TRUE(audited.empty());
}

TEST_F(ReturnHandler, AClosedOrZeroWindowIs422) {
  const auto final_sale =
      post(op, kLead, {{"reason", "fraud"}, {"buyer_id", "by_final"}});  // window 0 days
  EXPECT_EQ(final_sale.status, 422);
  EXPECT_NE(final_sale.body.find("return window 0"), std::string::npos);
  EXPECT_TRUE(store.returns_asked.empty());

  store.return_answer = ReturnStatus::kWindowClosed;
  store.sold_at_ms = kReturnsNow - 8 * kReturnsDay;
  const auto late = post(high, kLead, {{"reason", "fraud"}});
  EXPECT_EQ(late.status, 422);
  EXPECT_EQ(body_of(late)["detail"],
            "the return window of 7 days ended at 2026-03-30T23:33:20.000Z");
}

TEST_F(ReturnHandler, EveryBadBodyIsA400NamingTheField) {
  EXPECT_EQ(field_of(post(high, kLead, json::object())), "reason");
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", 3}})), "reason");
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", "changed_my_mind"}})), "reason");
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", "other"}})), "note");
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", "fraud"}, {"note", 5}})), "note");
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", "other"}, {"note", std::string(1001, 'x')}})),
            "note");
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", "fraud"}, {"refund", 100}})), "refund");
  // Only the operator names a buyer.
  EXPECT_EQ(field_of(post(high, kLead, {{"reason", "fraud"}, {"buyer_id", "by_low"}})), "buyer_id");
  EXPECT_EQ(field_of(post(op, kLead, {{"reason", "fraud"}, {"buyer_id", ""}})), "buyer_id");
  const auto all = post(high, kLead, {{"reason", "other"}, {"refund", 1}});
  EXPECT_EQ(all.status, 400);
  EXPECT_EQ(body_of(all)["errors"].size(), 2u);
  EXPECT_EQ(post_raw(high, kLead, "[]").status, 400);
  EXPECT_EQ(post_raw(high, kLead, "reason=fraud", "application/x-www-form-urlencoded").status, 415);
  EXPECT_TRUE(store.returns_asked.empty());
  EXPECT_EQ(store.lead_reads, 0);
}

TEST_F(ReturnHandler, AStoreThatCannotRecordOrReadTheBuyerIsA503) {
  store.writes_down = true;
  const auto write = post(high, kLead, {{"reason", "fraud"}});
  EXPECT_EQ(write.status, 503);
  EXPECT_EQ(body_of(write)["detail"], "the store is unavailable; nothing was changed");
  store.writes_down = false;
  store.buyers_down = true;
  const auto read = post(high, kLead, {{"reason", "fraud"}});
  EXPECT_EQ(read.status, 503);
  EXPECT_EQ(body_of(read)["detail"], "the store cannot be reached; retry");
  // For the operator too: the store could not say whether the lead was sold to that buyer.
  EXPECT_EQ(post(op, kLead, {{"reason", "fraud"}}).status, 503);
  store.buyers_down = false;
  // A lead the store cannot read is no "no such lead".
  store.leads_down = true;
  const auto lead = post(high, kLead, {{"reason", "fraud"}});
  EXPECT_EQ(lead.status, 503);
  EXPECT_EQ(body_of(lead)["detail"], "the store is unavailable; nothing was changed");
  EXPECT_EQ(store.returns_asked.size(), 1u);
  EXPECT_TRUE(audited.empty());
}

TEST_F(ReturnHandler, ASellerMayNotReturnALead) {
  const auto res = post(returns_key_of("key_s", "", "sl_1"), kLead, {{"reason", "fraud"}});
  EXPECT_EQ(res.status, 403);
  EXPECT_EQ(body_of(res)["detail"], "only the lead's buyer or the operator may return a lead");
  EXPECT_EQ(store.lead_reads, 0);
  // make_return, called by itself, refuses it too.
  ReturnAsk ask;
  ask.lead_id = kLead;
  ask.reason = "fraud";
  const ReturnDone done = make_return(ports, returns_key_of("key_s", "", "sl_1"), ask);
  ASSERT_TRUE(done.refused);
  EXPECT_EQ(done.refused->reason, ReturnRefused::kNotBuyerOrOperator);
  EXPECT_TRUE(store.returns_asked.empty());
}

}  // namespace
}  // namespace leadflow::testing
