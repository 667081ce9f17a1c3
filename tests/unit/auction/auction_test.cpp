// Ranking, eligibility and the buyer protocol, without a network.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "leadflow/auction/auction.hpp"
#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/domain/lead_codec.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

Buyer buyer(const std::string& id, int priority = 0, int weight = 1) {
  Buyer b;
  b.id = id;
  b.name = id;
  b.verticals = {"auto_insurance"};
  b.priority = priority;
  b.weight = weight;
  b.ping_url = "http://127.0.0.1:1/ping";
  b.post_url = "http://127.0.0.1:1/post";
  return b;
}

Lead lead() {
  Lead l;
  l.id = "ld_01KAP0000000000000000000AA";
  l.first_name = "Ada";
  l.last_name = "Lovelace";
  l.email = "ada@example.com";
  l.phone = "+12025550143";
  l.zip_code = "90210";
  l.state = "CA";
  l.vertical = "auto_insurance";
  l.source = "google";
  l.ip_address = "203.0.113.9";
  l.user_agent = "Mozilla/5.0";
  l.custom_fields = {{"vehicle_year", 2019.0}, {"credit_rating", std::string("good")}};
  return l;
}

TEST(RankBids, HighestBidFirstThenPriority) {
  Buyer a = buyer("a"), b = buyer("b", 5), c = buyer("c", 1);
  std::mt19937_64 rng(1);
  auto ranked = rank_bids({{&a, 1000, ""}, {&b, 1500, ""}, {&c, 1500, ""}}, rng);
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].buyer->id, "b");  // 15.00 at priority 5 beats 15.00 at priority 1
  EXPECT_EQ(ranked[1].buyer->id, "c");
  EXPECT_EQ(ranked[2].buyer->id, "a");
}

TEST(RankBids, DropsZeroAndBelowMinimum) {
  Buyer a = buyer("a"), b = buyer("b");
  b.min_bid = 2000;
  std::mt19937_64 rng(1);
  auto ranked = rank_bids({{&a, 0, ""}, {&b, 1500, ""}}, rng);
  EXPECT_TRUE(ranked.empty());
}

TEST(RankBids, WeightsShareTiesInProportion) {
  Buyer heavy = buyer("heavy", 0, 3), light = buyer("light", 0, 1);
  std::mt19937_64 rng(7);
  std::map<std::string, int> first;
  for (int i = 0; i < 4000; ++i)
    first[rank_bids({{&heavy, 1000, ""}, {&light, 1000, ""}}, rng)[0].buyer->id]++;
  // Expected 3000 / 1000; allow generous statistical slack.
  EXPECT_GT(first["heavy"], 2800);
  EXPECT_LT(first["heavy"], 3200);
}

TEST(RankSharedBids, OrdersByTheSharedAmountAndIgnoresTheExclusiveFloor) {
  Buyer a = buyer("a"), b = buyer("b"), c = buyer("c");
  a.min_bid = 5000;  // a floor for its bids for the lead alone, not for a share
  std::mt19937_64 rng(1);
  auto ranked = rank_shared_bids({{&a, 0, "", 700}, {&b, 3000, "", 0}, {&c, 9000, "", 900}}, rng);
  ASSERT_EQ(ranked.size(), 2u);  // b buys the lead alone only
  EXPECT_EQ(ranked[0].buyer->id, "c");
  EXPECT_EQ(ranked[1].buyer->id, "a");
}

TEST(SharedEarnsMore, ComparesTheBestSharesTogetherWithTheBestBidAlone) {
  Buyer a = buyer("a"), b = buyer("b"), c = buyer("c");
  const std::vector<Bid> exclusive{{&a, 2000, "", 900}, {&b, 1500, "", 800}};
  const std::vector<Bid> shared{{&a, 2000, "", 900}, {&b, 1500, "", 800}, {&c, 0, "", 400}};
  EXPECT_TRUE(shared_earns_more(exclusive, shared, 3));   // 900 + 800 + 400 > 2000
  EXPECT_FALSE(shared_earns_more(exclusive, shared, 2));  // 1700 < 2000
  EXPECT_FALSE(shared_earns_more(exclusive, shared, 1));  // the vertical sells exclusively
  EXPECT_FALSE(shared_earns_more({{&a, 2100, "", 0}}, shared, 3));  // a tie goes exclusive
  EXPECT_TRUE(shared_earns_more({}, {{&c, 0, "", 400}}, 2));        // no bid alone at all
  EXPECT_FALSE(shared_earns_more(exclusive, {}, 3));
}

TEST(Eligibility, ChecksEachFilterAndNamesIt) {
  const Lead l = lead();
  Buyer b = buyer("b");
  EXPECT_EQ(static_ineligibility(b, l, 1'763'793'145), "");
  b.active = false;
  EXPECT_EQ(static_ineligibility(b, l, 0), "paused");
  b = buyer("b");
  b.verticals = {"solar"};
  EXPECT_EQ(static_ineligibility(b, l, 0), "vertical");
  b = buyer("b");
  b.states = {"NY", "NJ"};
  EXPECT_EQ(static_ineligibility(b, l, 0), "filter:states");
  b = buyer("b");
  b.exclude_states = {"CA"};
  EXPECT_EQ(static_ineligibility(b, l, 0), "filter:exclude_states");
  b = buyer("b");
  b.zip_prefixes = {"100", "902"};
  EXPECT_EQ(static_ineligibility(b, l, 0), "");
  b.zip_prefixes = {"100"};
  EXPECT_EQ(static_ineligibility(b, l, 0), "filter:zip_prefixes");
  b = buyer("b");
  b.sources = {"bing"};
  EXPECT_EQ(static_ineligibility(b, l, 0), "filter:sources");
  b = buyer("b");
  b.custom_rules = {{"vehicle_year", CustomRule::Op::kGte, 2015}};
  EXPECT_EQ(static_ineligibility(b, l, 0), "");
  b.custom_rules = {{"vehicle_year", CustomRule::Op::kLt, 2015}};
  EXPECT_EQ(static_ineligibility(b, l, 0), "filter:custom:vehicle_year");
}

TEST(CustomRules, CoverEveryOperator) {
  const CustomFields f = {
      {"age", 42.0}, {"tier", std::string("gold")}, {"score", std::string("700")}};
  using Op = CustomRule::Op;
  EXPECT_TRUE(custom_rule_matches({"age", Op::kEq, 42}, f));
  EXPECT_TRUE(custom_rule_matches({"age", Op::kNe, 41}, f));
  EXPECT_TRUE(custom_rule_matches({"tier", Op::kIn, json::array({"gold", "silver"})}, f));
  EXPECT_FALSE(custom_rule_matches({"tier", Op::kNin, json::array({"gold"})}, f));
  EXPECT_TRUE(custom_rule_matches({"age", Op::kGt, 18}, f));
  EXPECT_TRUE(custom_rule_matches({"age", Op::kLte, 42}, f));
  EXPECT_TRUE(
      custom_rule_matches({"score", Op::kGte, 650}, f));  // numeric string compares as a number
  EXPECT_TRUE(custom_rule_matches({"tier", Op::kExists, nullptr}, f));
  EXPECT_FALSE(custom_rule_matches({"missing", Op::kExists, nullptr}, f));
  EXPECT_FALSE(custom_rule_matches({"missing", Op::kEq, 1}, f));
  EXPECT_TRUE(custom_rule_matches({"missing", Op::kNe, 1}, f));
  EXPECT_FALSE(custom_rule_matches({"tier", Op::kGt, 5}, f));  // not comparable: no match
}

TEST(CustomRules, IntegersCompareByEveryDigit) {
  const CustomFields f = {
      {"year", std::int64_t{2019}}, {"account", std::int64_t{9007199254740993}}, {"rate", 2.5}};
  using Op = CustomRule::Op;
  EXPECT_TRUE(custom_rule_matches({"year", Op::kEq, 2019}, f));
  EXPECT_TRUE(custom_rule_matches({"year", Op::kEq, 2019.0}, f));
  EXPECT_TRUE(custom_rule_matches({"year", Op::kGte, 2015}, f));
  EXPECT_FALSE(custom_rule_matches({"year", Op::kLt, 2015}, f));
  EXPECT_TRUE(custom_rule_matches({"year", Op::kIn, json::array({2018, 2019})}, f));
  // 9007199254740992 and ...993 are the same double: compared as doubles they would be equal.
  EXPECT_TRUE(custom_rule_matches({"account", Op::kEq, 9007199254740993}, f));
  EXPECT_TRUE(custom_rule_matches({"account", Op::kNe, 9007199254740992}, f));
  EXPECT_TRUE(custom_rule_matches({"account", Op::kGt, 9007199254740992}, f));
  EXPECT_TRUE(custom_rule_matches({"rate", Op::kLt, 3}, f));
}

TEST(BuyerProtocol, PingsAndPostsCarryIntegersAsIntegers) {
  Lead l = lead();
  l.custom_fields = {{"vehicle_year", std::int64_t{2019}},
                     {"account", std::int64_t{9007199254740993}},
                     {"rate", 2019.0}};
  for (const HttpRequest& r :
       {make_ping_request(buyer("b"), l, "pg_1"), make_post_request(buyer("b"), l, "pg_1", 100)}) {
    EXPECT_NE(r.body.find(R"("vehicle_year":2019})"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(R"("account":9007199254740993)"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(R"("rate":2019.0)"), std::string::npos) << r.body;
  }
}

TEST(BuyerProtocol, PingsCarryNoPii) {
  const Lead l = lead();
  const HttpRequest r = make_ping_request(buyer("b"), l, "pg_1");
  const json body = json::parse(r.body);
  for (const char* pii : {"first_name", "last_name", "email", "phone", "ip_address", "user_agent"})
    EXPECT_FALSE(body.contains(pii)) << pii;
  for (const std::string& value : {l.first_name, l.last_name, l.email, l.phone, l.ip_address})
    EXPECT_EQ(r.body.find(value), std::string::npos) << value;
  EXPECT_EQ(body["ping_id"], "pg_1");
  EXPECT_EQ(body["zip_code"], "90210");
  EXPECT_EQ(body["state"], "CA");
  EXPECT_EQ(body["custom_fields"]["vehicle_year"], 2019.0);
}

TEST(BuyerProtocol, PostsCarryTheLeadPriceAndIdempotencyKey) {
  const Lead l = lead();
  const HttpRequest r = make_post_request(buyer("b"), l, "pg_1", 1425);
  const json body = json::parse(r.body);
  EXPECT_EQ(body["email"], "ada@example.com");
  EXPECT_EQ(body["price"], 14.25);
  EXPECT_EQ(body["ping_id"], "pg_1");
  bool has_key = false;
  for (const auto& [k, v] : r.headers) has_key = has_key || (k == "Idempotency-Key" && v == l.id);
  EXPECT_TRUE(has_key);
}

TEST(BuyerProtocol, MappingRenamesAddsConstantsAndSpeaksForm) {
  Buyer b = buyer("b");
  b.mapping = {
      {"request",
       {{"format", "form"},
        {"rename", {{"zip_code", "zip"}}},
        {"constants", {{"api_version", 3}}}}},
      {"response",
       {{"bid", "/result/price"}, {"accepted", "/result/ok"}, {"reference", "/result/id"}}}};
  const HttpRequest ping = make_ping_request(b, lead(), "pg_9");
  EXPECT_NE(ping.body.find("zip=90210"), std::string::npos) << ping.body;
  EXPECT_NE(ping.body.find("api_version=3"), std::string::npos);
  EXPECT_NE(ping.body.find("vehicle_year="), std::string::npos);  // custom fields flattened
  HttpResponse answer;
  answer.status = 200;
  answer.body = R"({"result": {"price": "12.50"}})";
  EXPECT_EQ(read_ping_answer(b, answer).bid, 1250);
  answer.body = R"({"result": {"ok": true, "id": 991}})";
  const PostAnswer posted = read_post_answer(b, answer);
  EXPECT_TRUE(posted.accepted);
  EXPECT_EQ(posted.buyer_lead_id, "991");
}

TEST(BuyerProtocol, BadAnswersAreNoBids) {
  const Buyer b = buyer("b");
  HttpResponse r;
  r.status = 200;
  for (const char* body : {"", "not json", "{}", R"({"bid": "lots"})", R"({"bid": -3})",
                           R"({"bid": 0})", R"({"bid": 1e12})"}) {
    r.body = body;
    EXPECT_FALSE(read_ping_answer(b, r).bid) << body;
  }
  r.body = R"({"bid": 14.25})";
  EXPECT_EQ(read_ping_answer(b, r).bid, 1425);
  // Under a cent rounds to nothing: a no-bid that says why, not a recorded bid of 0.00.
  r.body = R"({"bid": 0.004})";
  EXPECT_FALSE(read_ping_answer(b, r).bid);
  EXPECT_EQ(read_ping_answer(b, r).reason, "bid under one cent");
  r.body = R"({"bid": 0.005})";
  EXPECT_EQ(read_ping_answer(b, r).bid, 1);
  r.status = 503;
  EXPECT_FALSE(read_ping_answer(b, r).bid);
  r.status = 0;
  r.timed_out = true;
  EXPECT_EQ(read_ping_answer(b, r).reason, "timeout");
}

TEST(BuyerProtocol, AShareIsABidOfItsOwn) {
  Buyer b = buyer("b");
  HttpResponse r;
  r.status = 200;
  r.body = R"({"bid": 14.25, "shared_bid": 6})";
  EXPECT_EQ(read_ping_answer(b, r).bid, 1425);
  EXPECT_EQ(read_ping_answer(b, r).shared_bid, 600);
  r.body = R"({"shared_bid": "5.50"})";  // a share only
  EXPECT_FALSE(read_ping_answer(b, r).bid);
  EXPECT_EQ(read_ping_answer(b, r).shared_bid, 550);
  r.body = R"({"bid": 0, "shared_bid": 0})";
  EXPECT_FALSE(read_ping_answer(b, r).bid);
  EXPECT_FALSE(read_ping_answer(b, r).shared_bid);
  EXPECT_EQ(read_ping_answer(b, r).reason, "no bid");
  // A mapping names where the share is.
  b.mapping = nlohmann::json::parse(R"({"response": {"shared_bid": "/offer/shared"}})");
  r.body = R"({"offer": {"shared": 4.2}})";
  EXPECT_EQ(read_ping_answer(b, r).shared_bid, 420);
}

TEST(BuyerProtocol, SharesAndExclusivePostsCarryTheirOwnIdempotencyKeys) {
  const Buyer b = buyer("b");
  const Lead l = lead();
  auto key = [](const HttpRequest& r) {
    for (const auto& [name, value] : r.headers)
      if (name == "Idempotency-Key") return value;
    return std::string();
  };
  EXPECT_EQ(key(make_post_request(b, l, "pg_1", 900)), l.id);
  EXPECT_EQ(key(make_post_request(b, l, "pg_1", 900, /*shared=*/true)), l.id + ":" + b.id);
}

TEST(BuyerProtocol, PostRejectionsKeepTheReason) {
  const Buyer b = buyer("b");
  HttpResponse r;
  r.status = 200;
  r.body = R"({"accepted": false, "reason": "out of area"})";
  const PostAnswer a = read_post_answer(b, r);
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.reason, "out of area");
  r.status = 500;
  r.body = R"({"accepted": true})";
  EXPECT_FALSE(read_post_answer(b, r).accepted);  // a 5xx never counts as a sale
}

TEST(LeadCodec, RoundTripsEveryField) {
  Lead l = lead();
  l.seller_id = "sl_1";
  l.campaign_id = "cp_1";
  l.surface = Surface::kCampaign;
  l.zip4 = "1234";
  l.tcpa_consent = true;
  l.tcpa_consent_text = "I agree";
  l.received_at_ms = 1'763'793'145'123;
  l.sync_wait_ms = 3000;
  auto back = decode_lead(encode_lead(l));
  ASSERT_TRUE(back);
  // Custom fields come back by name (their order is not kept).
  std::sort(l.custom_fields.begin(), l.custom_fields.end());
  std::sort(back->custom_fields.begin(), back->custom_fields.end());
  EXPECT_EQ(encode_lead(*back), encode_lead(l));
  EXPECT_FALSE(decode_lead("garbage"));
  EXPECT_FALSE(decode_lead("{}"));
}

TEST(LeadCodec, DistributionViewSaysAcceptedOnlyWhenDelivered) {
  Distribution d;
  d.status = DeliveryStatus::kDelivered;
  d.buyer_id = "by_1";
  d.price = 1425;
  json j = distribution_to_json(d);
  EXPECT_EQ(j["accepted"], true);
  EXPECT_EQ(j["price"], 14.25);
  EXPECT_EQ(j["currency"], "USD");
  EXPECT_EQ(j["delivery_status"], "delivered");
  d.status = DeliveryStatus::kUnsold;
  d.buyer_id.clear();
  j = distribution_to_json(d);
  EXPECT_EQ(j["accepted"], false);
  EXPECT_TRUE(j["buyer_id"].is_null());
}

}  // namespace
}  // namespace leadflow
