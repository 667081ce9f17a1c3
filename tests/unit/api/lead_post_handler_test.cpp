// Surface A's lead post without a server: a request parsed as the server would, a fake intake
// port holding the Idempotency-Keys, a fake queue append, and the answer's status, headers and
// body. The lead as handed to the queue, each Idempotency-Key case, and every refusal.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lead_post.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kLeadPostNow = 1'775'000'000'000;

// The intake port's Idempotency-Keys: the claim answers as told, and what was asked is kept.
class FakeKeys final : public IntakeStore {
 public:
  StoreStatus claim_answer = StoreStatus::kOk;
  IdempotencyRecord held;  // the claim holding the key, for kConflict
  std::vector<IdempotencyRecord> claims;
  std::vector<std::int64_t> expire_before;
  std::vector<std::string> released;
  std::vector<std::pair<int, std::string>> completed;  // status, answer

  bool healthy() override { return true; }
  StoreStatus claim_idempotency_key(const IdempotencyRecord& record, std::int64_t expire_before_ms,
                                    IdempotencyRecord& existing) override {
    claims.push_back(record);
    expire_before.push_back(expire_before_ms);
    if (claim_answer == StoreStatus::kConflict) existing = held;
    return claim_answer;
  }
  StoreStatus complete_idempotency_key(std::string_view, std::string_view key, int status,
                                       std::string_view response) override {
    completed.emplace_back(status, std::string(response));
    return StoreStatus::kOk;
  }
  StoreStatus release_idempotency_key(std::string_view, std::string_view key) override {
    released.emplace_back(key);
    return StoreStatus::kOk;
  }
  using IntakeStore::insert_leads;
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead>,
                                             std::span<const SearchKeys>) override {
    return {};
  }
  Lookup<LeadRecord> get_lead(std::string_view) override { return {}; }
  std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery&) override {
    return std::nullopt;
  }
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord>) override { return {}; }
};

ApiKey seller_key() {
  ApiKey k;
  k.id = "key_s";
  k.seller_id = "sl_1";
  return k;
}

std::string lead_body(const std::string& email = "ada@example.com") {
  return json{{"first_name", "Ada"},
              {"last_name", "Lovelace"},
              {"email", email},
              {"phone", "2022000042"},
              {"zip_code", "90210"},
              {"vertical", "auto_insurance"},
              {"source", "google"},
              {"landing_page", "lp-auto-1"},
              {"ip_address", "203.0.113.9"},
              {"user_agent", "Mozilla/5.0"},
              {"custom_fields", {{"vehicle_year", 2019}, {"credit_rating", "good"}}}}
      .dump();
}

class LeadPostHandler : public ::testing::Test {
 protected:
  http::Response post(const std::string& body, const std::string& headers = "",
                      const std::string& type = "application/json") {
    const std::string raw = "POST /v1/leads HTTP/1.1\r\nHost: a.example\r\nContent-Type: " + type +
                            "\r\n" + headers + "Content-Length: " + std::to_string(body.size()) +
                            "\r\n\r\n" + body;
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_lead_post(ports, key, Viewer::of(key), req, res);
    return res;
  }

  static json body_of(const http::Response& res) { return json::parse(res.body); }

  FakeKeys keys;
  ManualClock clock{SystemTime{std::chrono::milliseconds{kLeadPostNow}}};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  std::vector<std::pair<Lead, int>> accepted;  // each lead handed to the queue, and its budget
  AcceptResult answer{ProduceStatus::kOk, std::nullopt};
  Lookup<Seller> seller{StoreStatus::kNotFound, std::nullopt};  // what a session's seller reads
  std::optional<bool> buying = false;  // whether the vertical has buyers, for a test's answer
  LeadPostPorts ports{keys,
                      verticals,
                      clock,
                      3000,
                      30000,
                      [this](const Lead& lead, int wait_ms) {
                        accepted.emplace_back(lead, wait_ms);
                        return answer;
                      },
                      [this](std::string_view) { return seller; },
                      [this](std::string_view) { return buying; }};
  ApiKey key = seller_key();
};

TEST_F(LeadPostHandler, ATestPostIsQueuedAsATestAndToldWhatWouldHaveHappened) {
  answer.outcome = OutcomeMessage{"", DeliveryStatus::kTest, "", 0, 0};
  json body = json::parse(lead_body());
  body["test"] = true;
  buying = true;
  const auto res = post(body.dump());
  ASSERT_EQ(res.status, 201) << res.body;
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_TRUE(accepted[0].first.test);
  const json answer_body = body_of(res);
  EXPECT_EQ(answer_body["test"], true);
  EXPECT_EQ(answer_body["message"], "Test lead accepted: stored as a test, offered to no buyer");
  EXPECT_EQ(answer_body["distribution"]["delivery_status"], "test");
  EXPECT_EQ(answer_body["would_have"], json({{"valid", true},
                                             {"stored_as_test", true},
                                             {"offered_to_buyers", false},
                                             {"vertical_has_active_buyers", true}}));
  // The store could not say: null, never a guess.
  buying = std::nullopt;
  EXPECT_TRUE(body_of(post(body.dump()))["would_have"]["vertical_has_active_buyers"].is_null());
  // A real post has neither.
  answer.outcome = OutcomeMessage{"", DeliveryStatus::kUnsold, "", 0, 0};
  const json real = body_of(post(lead_body("grace@example.com")));
  EXPECT_FALSE(real.contains("test"));
  EXPECT_FALSE(real.contains("would_have"));
  EXPECT_FALSE(accepted.back().first.test);
}

TEST_F(LeadPostHandler, EveryPostOfASellerInTestModeIsATest) {
  key.seller_test_mode = true;  // read with the key
  post(lead_body());
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_TRUE(accepted[0].first.test);
  // A signed-in seller user's session reads its seller.
  key = seller_key();
  key.id = "us_1";
  Seller s;
  s.id = "sl_1";
  s.test_mode = true;
  seller = {StoreStatus::kOk, s};
  post(lead_body("b@example.com"));
  ASSERT_EQ(accepted.size(), 2u);
  EXPECT_TRUE(accepted[1].first.test);
  // A seller the store cannot read is never guessed: 503, nothing queued.
  seller = {StoreStatus::kUnavailable, std::nullopt};
  const auto res = post(lead_body("c@example.com"));
  EXPECT_EQ(res.status, 503) << res.body;
  EXPECT_EQ(accepted.size(), 2u);
}

TEST_F(LeadPostHandler, ASoldLeadIs201WithItsOutcomeAsTheSellerSeesIt) {
  answer.outcome = OutcomeMessage{"", DeliveryStatus::kDelivered, "by_1", 2400, 1680};
  const auto res = post(lead_body());
  ASSERT_EQ(res.status, 201) << res.body;
  ASSERT_EQ(accepted.size(), 1u);
  const Lead& lead = accepted[0].first;
  EXPECT_EQ(lead.id.rfind("ld_", 0), 0u);
  EXPECT_EQ(lead.seller_id, "sl_1");
  EXPECT_EQ(lead.api_key_id, "key_s");
  EXPECT_EQ(lead.surface, Surface::kApi);
  EXPECT_EQ(lead.received_at_ms, kLeadPostNow);
  EXPECT_EQ(lead.email, "ada@example.com");
  EXPECT_EQ(accepted[0].second, 3000);  // the default budget
  EXPECT_EQ(lead.sync_wait_ms, 3000);
  EXPECT_EQ(res.header("Location"), "/v1/leads/" + lead.id);
  const json body = body_of(res);
  EXPECT_EQ(body["lead_id"], lead.id);
  EXPECT_EQ(body["message"], "Lead accepted and sold");
  // The seller reads its payout as the price, and no buyer.
  EXPECT_EQ(body["distribution"]["price"], 16.8);
  EXPECT_TRUE(body["distribution"]["buyer_id"].is_null());
  EXPECT_TRUE(keys.claims.empty());
}

TEST_F(LeadPostHandler, AnUndecidedLeadIs202AndWaitsAsLongAsItAsks) {
  const auto res = post(lead_body(), "Prefer: wait=1\r\n");
  EXPECT_EQ(res.status, 202) << res.body;
  EXPECT_EQ(body_of(res)["message"], "Lead accepted; distribution in progress");
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].second, 1000);
  EXPECT_EQ(post(lead_body(), "Prefer: wait=600\r\n").status, 202);
  EXPECT_EQ(accepted[1].second, 30000);  // at most the ceiling
  answer.outcome = OutcomeMessage{"", DeliveryStatus::kUnsold, "", 0, 0};
  EXPECT_EQ(body_of(post(lead_body()))["message"], "Lead accepted; no buyer took it");
  answer.outcome = OutcomeMessage{"", DeliveryStatus::kDuplicate, "", 0, 0};
  EXPECT_EQ(body_of(post(lead_body()))["message"], "Lead accepted; duplicate of an earlier lead");
}

TEST_F(LeadPostHandler, ABadLeadOrKeyIsA400AndNothingIsQueued) {
  const auto invalid = post(json{{"first_name", "Ada"}}.dump());
  EXPECT_EQ(invalid.status, 400);
  EXPECT_EQ(body_of(invalid)["detail"], "the lead failed validation");
  EXPECT_FALSE(body_of(invalid)["errors"].empty());
  const auto malformed = post("[1, 2");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(body_of(malformed)["detail"].get<std::string>().rfind("the body could not be read", 0),
            0u);
  const auto bad_key = post(lead_body(), "Idempotency-Key: two words\r\n");
  EXPECT_EQ(bad_key.status, 400);
  EXPECT_EQ(body_of(bad_key)["errors"][0]["field"], "Idempotency-Key");
  EXPECT_EQ(post(lead_body(), "Idempotency-Key: " + std::string(256, 'k') + "\r\n").status, 400);
  EXPECT_EQ(post(lead_body(), "", "text/plain").status, 415);
  EXPECT_TRUE(accepted.empty());
  EXPECT_TRUE(keys.claims.empty());
}

TEST_F(LeadPostHandler, TheFirstRequestWithAKeyClaimsItAndRecordsItsAnswer) {
  answer.outcome = OutcomeMessage{"", DeliveryStatus::kDelivered, "by_1", 2400, 1680};
  const std::string body = lead_body();
  const auto res = post(body, "Idempotency-Key: order-17\r\n");
  ASSERT_EQ(res.status, 201) << res.body;
  ASSERT_EQ(keys.claims.size(), 1u);
  EXPECT_EQ(keys.claims[0].scope, "key_s");
  EXPECT_EQ(keys.claims[0].key, "order-17");
  EXPECT_EQ(keys.claims[0].request_hash, sha256_hex(body));
  EXPECT_EQ(keys.claims[0].lead_id, accepted[0].first.id);
  EXPECT_EQ(keys.expire_before[0], kLeadPostNow - 86'400'000);  // a claim lives a day
  ASSERT_EQ(keys.completed.size(), 1u);
  EXPECT_EQ(keys.completed[0], std::make_pair(201, res.body));
}

TEST_F(LeadPostHandler, ARepeatGetsTheFirstAnswerOrIsRefusedOrFinishesADeadRequest) {
  const std::string body = lead_body();
  keys.claim_answer = StoreStatus::kConflict;
  keys.held = {"key_s", "order-17",          sha256_hex(body),    "ld_first",
               201,     R"({"first":true})", kLeadPostNow - 1'000};
  const auto replay = post(body, "Idempotency-Key: order-17\r\n");
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, R"({"first":true})");
  EXPECT_EQ(replay.header("Location"), "/v1/leads/ld_first");
  EXPECT_EQ(replay.header("Idempotent-Replayed"), "true");

  const auto other = post(lead_body("grace@example.com"), "Idempotency-Key: order-17\r\n");
  EXPECT_EQ(other.status, 422);
  keys.held.status = 0;  // the first request still runs
  EXPECT_EQ(post(body, "Idempotency-Key: order-17\r\n").status, 409);
  EXPECT_TRUE(accepted.empty());

  // Unanswered for longer than any request runs (the longest wait and 15 s): its request died,
  // and this one queues the lead under the first one's id and time.
  keys.held.created_at_ms = kLeadPostNow - 45'001;
  EXPECT_EQ(post(body, "Idempotency-Key: order-17\r\n").status, 409);  // 60 s at least
  keys.held.created_at_ms = kLeadPostNow - 60'000;
  EXPECT_EQ(post(body, "Idempotency-Key: order-17\r\n").status, 202);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].first.id, "ld_first");
  EXPECT_EQ(accepted[0].first.received_at_ms, kLeadPostNow - 60'000);
}

TEST_F(LeadPostHandler, AStoreOrQueueThatCannotTakeItIsA503AndFreesTheKey) {
  keys.claim_answer = StoreStatus::kUnavailable;
  const auto claim = post(lead_body(), "Idempotency-Key: order-17\r\n");
  EXPECT_EQ(claim.status, 503);
  EXPECT_EQ(body_of(claim)["detail"], "the store is unavailable; nothing was accepted, retry");
  EXPECT_TRUE(accepted.empty());

  keys.claim_answer = StoreStatus::kOk;
  answer.produced = ProduceStatus::kTimedOut;
  const auto queue = post(lead_body(), "Idempotency-Key: order-17\r\n");
  EXPECT_EQ(queue.status, 503);
  EXPECT_EQ(queue.header("Retry-After"), "1");
  EXPECT_EQ(keys.released, std::vector<std::string>{"order-17"});
  EXPECT_TRUE(keys.completed.empty());
}

}  // namespace
}  // namespace leadflow::testing
