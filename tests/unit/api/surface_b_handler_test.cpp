// Surface B's handlers without a server: requests parsed as the server would, the campaign
// lookup, the key refusals and the rate-limit audit as fakes, a real limiter on a manual clock,
// and in-memory intake and reporting ports. A lead post's checks on the event loop and on the
// pool (what the loop leaves to the pool, and what it never waits for), the answer to a lead
// handed to the queue, and the stats, job and fields reads with each of their refusals.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_intake.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/api/job_ids.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/http/parser.hpp"
#include "leadflow/visibility/projections.hpp"
#include "leadflow/visibility/verticals.hpp"
#include "surface_b.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kSurfaceBNow = 1'775'000'000'000;
const std::string kSurfaceBKey = "lfc_campaign_key_one";
const std::string kPaused = "lfc_campaign_key_paused";

// The intake and reporting ports: leads put in by the test, canned rollups, and what was asked.
class FakeReads final : public FakeIntakeReads, public ReportingStore {
 public:
  std::map<std::string, LeadRecord, std::less<>> leads;
  std::vector<PerformanceCell> performance;
  std::vector<RevenueCell> revenue;
  std::int64_t queued = 0;
  bool down = false;  // every read answers "cannot say"
  std::vector<RollupQuery> asked;
  std::vector<std::pair<std::string, std::int64_t>> invalid_counted;

  bool healthy() override { return !down; }
  Lookup<LeadRecord> get_lead(std::string_view id) override {
    if (down) return {};
    const auto it = leads.find(id);
    if (it == leads.end()) return {StoreStatus::kNotFound, std::nullopt};
    return {StoreStatus::kOk, it->second};
  }
  std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery&) override {
    if (down) return std::nullopt;
    return std::vector<LeadRecord>{};
  }

  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& q) override {
    asked.push_back(q);
    if (down) return std::nullopt;
    return revenue;
  }
  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& q) override {
    asked.push_back(q);
    if (down) return std::nullopt;
    return performance;
  }
  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery&) override {
    return std::nullopt;
  }
  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override {
    invalid_counted.emplace_back(std::string(campaign_id), at_ms);
  }
  std::optional<std::int64_t> count_queued(std::string_view, std::int64_t) override {
    if (down) return std::nullopt;
    return queued;
  }
};

http::Request parse_surface_b_request(const std::string& raw) {
  http::Request req;
  const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
  EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
  return req;
}

std::string post_request(const std::string& target, const std::string& type,
                         const std::string& body, const std::string& headers = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: b.example\r\nContent-Type: " + type + "\r\n" +
         headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

json lead_json(const std::string& key = kSurfaceBKey) {
  json lead = {{"first_name", "Grace"},
               {"last_name", "Hopper"},
               {"email_address", "grace@example.com"},
               {"phone_home", "2125550143"},
               {"zip_code", "10001"}};
  if (!key.empty()) lead["SELLER_CAMPAIGN_KEY"] = key;
  return lead;
}

json surface_b_body_of(const http::Response& res) { return json::parse(res.body); }

// A lead id made at `ms`, whatever ids this process made before (new_id never goes back in time).
std::string lead_id_at(std::int64_t ms) {
  static constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string time(10, '0');
  for (int i = 9; i >= 0; --i, ms >>= 5) time[static_cast<std::size_t>(i)] = kCrockford[ms & 31];
  return std::string(kLeadPrefix) + time + "0000000000000001";
}

class SurfaceBHandler : public ::testing::Test {
 protected:
  SurfaceBHandler() {
    Campaign c;
    c.id = "cp_1";
    c.seller_id = "sl_1";
    c.vertical = "auto_insurance";
    c.rate_limit_per_minute = 2;
    campaigns[kSurfaceBKey] = c;
    Campaign paused = c;
    paused.id = "cp_paused";
    paused.active = false;
    campaigns[kPaused] = paused;
  }

  // A lead post: on the loop (may_block false) or on the pool; `path_key` for the legacy form.
  Intake post(const std::string& raw, bool may_block, const std::string* path_key = nullptr) {
    req = parse_surface_b_request(raw);
    res = http::Response{};
    body = PostBody{};
    in = LeadIntake{};
    return take_campaign_lead(ports, req, res, path_key, may_block, body, in);
  }
  Intake post_json(const json& lead, bool may_block = false, const std::string& headers = "") {
    return post(post_request("/api/v1/lead", "application/json", lead.dump(), headers), may_block);
  }

  http::Response get(const std::string& target, const std::string& headers = "") {
    req = parse_surface_b_request("GET " + target + " HTTP/1.1\r\nHost: b.example\r\n" + headers +
                                  "\r\n");
    return http::Response{};
  }

  FakeReads store;
  ManualClock clock{SystemTime{std::chrono::milliseconds{kSurfaceBNow}}};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  RateLimiter limiter{clock};
  std::map<std::string, Campaign> campaigns;
  bool cached = true;       // the cache can say without the store
  bool keys_down = false;   // the store cannot say
  bool auth_waits = false;  // counting a failed key would wait on the store
  int store_lookups = 0;    // lookups that asked the store (may_block)
  std::vector<std::string> refused_kinds;
  std::vector<std::string> rate_limited;
  std::vector<VerticalReoffer> reoffers;  // the policies the operator set
  bool reoffers_down = false;             // the store cannot say them
  SurfaceBPorts ports{
      store,
      store,
      verticals,
      clock,
      limiter,
      [this](const std::string& key, bool may_block, std::optional<Campaign>& out,
             bool& unavailable) {
        if (!may_block && !cached) return false;
        if (may_block) ++store_lookups;
        if (may_block && keys_down) {
          unavailable = true;
          return true;
        }
        const auto it = campaigns.find(key);
        if (it != campaigns.end()) out = it->second;
        return true;
      },
      [this](const http::Request&, http::Response& r, const FailedCampaignAuth& failed,
             std::string_view message, bool may_block) {
        if (!may_block && auth_waits) return false;
        refused_kinds.emplace_back(failed.kind);
        http::send_json(r, 401, {{"status", "unauthorized"}, {"message", message}});
        return true;
      },
      [this](const http::Request&, const Campaign& c) { rate_limited.push_back(c.id); },
      [](std::string_view vertical) { return std::optional<bool>(vertical == "auto_insurance"); },
      [this]() -> std::optional<std::vector<VerticalReoffer>> {
        if (reoffers_down) return std::nullopt;
        return reoffers;
      }};

  http::Request req;
  http::Response res;
  PostBody body;
  LeadIntake in;
};

TEST_F(SurfaceBHandler, AValidPostIsAcceptedOnTheLoopWithItsLeadFilledIn) {
  ASSERT_EQ(post_json(lead_json()), Intake::kAccept) << res.body;
  EXPECT_EQ(store_lookups, 0);  // the cache knew the campaign: no store call on the loop
  EXPECT_EQ(in.lead.id.rfind("ld_", 0), 0u);
  EXPECT_EQ(in.lead.received_at_ms, kSurfaceBNow);
  EXPECT_EQ(in.lead.seller_id, "sl_1");
  EXPECT_EQ(in.lead.campaign_id, "cp_1");
  EXPECT_EQ(in.lead.surface, Surface::kCampaign);
  EXPECT_EQ(in.lead.email, "grace@example.com");
  EXPECT_EQ(in.campaign_key, kSurfaceBKey);
  EXPECT_EQ(in.wait_ms, 3000);  // a sync campaign waits its sync_timeout_ms
  EXPECT_EQ(in.lead.sync_wait_ms, 3000);
  EXPECT_EQ(res.header("X-RateLimit-Limit"), "2");

  EXPECT_EQ(post_json(lead_json(), false, "Prefer: respond-async\r\n"), Intake::kAccept);
  EXPECT_EQ(in.wait_ms, 0);
}

TEST_F(SurfaceBHandler, APostIsATestWhenItsBodyItsCampaignOrItsSellerSaysSo) {
  campaigns[kSurfaceBKey].rate_limit_per_minute = 100;
  ASSERT_EQ(post_json(lead_json()), Intake::kAccept) << res.body;
  EXPECT_FALSE(in.lead.test);
  json marked = lead_json();
  marked["test"] = "yes";  // Surface B's words for a boolean
  ASSERT_EQ(post_json(marked), Intake::kAccept) << res.body;
  EXPECT_TRUE(in.lead.test);
  campaigns[kSurfaceBKey].test_mode = true;
  ASSERT_EQ(post_json(lead_json()), Intake::kAccept) << res.body;
  EXPECT_TRUE(in.lead.test);
  campaigns[kSurfaceBKey].test_mode = false;
  campaigns[kSurfaceBKey].seller_test_mode = true;
  ASSERT_EQ(post_json(lead_json()), Intake::kAccept) << res.body;
  EXPECT_TRUE(in.lead.test);
  // A test mark is validated as any field is.
  campaigns[kSurfaceBKey].seller_test_mode = false;
  marked["test"] = "perhaps";
  ASSERT_EQ(post_json(marked), Intake::kAnswered);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(surface_b_body_of(res)["errors"][0]["field"], "test");
}

TEST_F(SurfaceBHandler, ATestLeadsAnswerSaysItWasATestAndWhatWouldHaveHappened) {
  const json would_have = project_would_have(true);
  AcceptResult decided{ProduceStatus::kOk, OutcomeMessage{"ld_1", DeliveryStatus::kTest, "", 0, 0}};
  http::Response r;
  answer_campaign_lead(r, "ld_1", "sl_1", kSurfaceBKey, decided, &would_have);
  ASSERT_EQ(r.status, 200) << r.body;
  json b = surface_b_body_of(r);
  EXPECT_EQ(b["status"], "test");
  EXPECT_EQ(b["sold"], false);
  EXPECT_EQ(b["price"], 0.0);
  EXPECT_EQ(b["test"], true);
  EXPECT_EQ(b["would_have"]["vertical_has_active_buyers"], true);
  EXPECT_EQ(b["would_have"]["offered_to_buyers"], false);
  // Not decided within the wait (or an async campaign): 202 with its job, still told.
  http::Response queued;
  answer_campaign_lead(queued, "ld_1", "sl_1", kSurfaceBKey, AcceptResult{ProduceStatus::kOk, {}},
                       &would_have);
  ASSERT_EQ(queued.status, 202);
  b = surface_b_body_of(queued);
  EXPECT_EQ(b["status"], "queued");
  EXPECT_EQ(b["job_id"], job_id_for("ld_1", kSurfaceBKey));
  EXPECT_EQ(b["test"], true);
}

TEST_F(SurfaceBHandler, TheLegacyFormTakesItsKeyFromThePath) {
  std::string form =
      "first_name=Grace&last_name=Hopper&email_address=grace%40example.com"
      "&phone_home=2125550143&zip_code=10001";
  ASSERT_EQ(post(post_request("/" + kSurfaceBKey, "application/x-www-form-urlencoded", form), false,
                 &kSurfaceBKey),
            Intake::kAccept)
      << res.body;
  EXPECT_EQ(in.lead.campaign_id, "cp_1");
  // JSON on the legacy path need not repeat the key.
  ASSERT_EQ(post(post_request("/" + kSurfaceBKey, "application/json", lead_json("").dump()), false,
                 &kSurfaceBKey),
            Intake::kAccept)
      << res.body;
  // A key in the body that differs from the path's is named.
  EXPECT_EQ(post(post_request("/" + kSurfaceBKey, "application/x-www-form-urlencoded",
                              form + "&SELLER_CAMPAIGN_KEY=lfc_other"),
                 false, &kSurfaceBKey),
            Intake::kAnswered);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(surface_b_body_of(res)["status"], "invalid");
  EXPECT_EQ(surface_b_body_of(res)["errors"][0]["code"], "mismatch");
}

TEST_F(SurfaceBHandler, AnUnsupportedBodyIs415) {
  EXPECT_EQ(post(post_request("/api/v1/lead", "application/x-www-form-urlencoded", "a=b"), false),
            Intake::kAnswered);
  EXPECT_EQ(res.status, 415);
  EXPECT_EQ(surface_b_body_of(res), (json{{"status", "unsupported_media_type"},
                                          {"message", "Content-Type must be application/json"}}));
  EXPECT_EQ(post(post_request("/" + kSurfaceBKey, "text/plain", "x"), false, &kSurfaceBKey),
            Intake::kAnswered);
  EXPECT_EQ(res.status, 415);
  EXPECT_NE(surface_b_body_of(res)["message"].get<std::string>().find("multipart/form-data"),
            std::string::npos);
}

TEST_F(SurfaceBHandler, AMissingKeyOrABadLeadIsA400NamingTheFields) {
  EXPECT_EQ(post_json(lead_json("")), Intake::kAnswered);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(surface_b_body_of(res)["errors"][0]["field"], "SELLER_CAMPAIGN_KEY");

  json bad = lead_json();
  bad["email_address"] = "nope";
  EXPECT_EQ(post_json(bad), Intake::kAnswered);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(surface_b_body_of(res)["status"], "invalid");
  // On the loop the count is left to the caller, which counts it on the pool.
  EXPECT_EQ(in.invalid_campaign, "cp_1");
  EXPECT_EQ(in.invalid_at_ms, kSurfaceBNow);
  EXPECT_TRUE(store.invalid_counted.empty());
  EXPECT_EQ(post_json(bad, true), Intake::kAnswered);
  ASSERT_EQ(store.invalid_counted.size(), 1u);
  EXPECT_EQ(store.invalid_counted[0], std::make_pair(std::string("cp_1"), kSurfaceBNow));
}

TEST_F(SurfaceBHandler, WhatOnlyTheStoreCanSayMovesToThePoolWithNothingSpent) {
  cached = false;
  EXPECT_EQ(post_json(lead_json()), Intake::kMustBlock);
  EXPECT_EQ(res.status, 200);  // nothing answered
  EXPECT_TRUE(body.read);      // the body was read once, for the pool
  EXPECT_EQ(body.key, kSurfaceBKey);
  // The pool goes on with the same body and asks the store.
  res = http::Response{};
  EXPECT_EQ(take_campaign_lead(ports, req, res, nullptr, true, body, in), Intake::kAccept)
      << res.body;
  EXPECT_GE(store_lookups, 1);

  // A failed key whose count would wait on the store also goes to the pool.
  cached = true;
  auth_waits = true;
  EXPECT_EQ(post_json(lead_json("lfc_nobody")), Intake::kMustBlock);
  EXPECT_TRUE(refused_kinds.empty());
}

TEST_F(SurfaceBHandler, AnUnknownOrPausedKeyIsRefusedByTheKeyCheck) {
  EXPECT_EQ(post_json(lead_json("lfc_nobody")), Intake::kAnswered);
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(post_json(lead_json(kPaused)), Intake::kAnswered);
  EXPECT_EQ(refused_kinds, (std::vector<std::string>{"unknown_key", "inactive_campaign"}));
}

TEST_F(SurfaceBHandler, AStoreThatCannotCheckTheKeyIs503) {
  cached = false;
  keys_down = true;
  EXPECT_EQ(post_json(lead_json(), true), Intake::kAnswered);
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(surface_b_body_of(res),
            (json{{"status", "unavailable"},
                  {"message", "the service cannot check campaign keys right now; retry"}}));
}

TEST_F(SurfaceBHandler, PastTheCampaignsCeilingIs429AuditedWithTheRateHeaders) {
  ASSERT_EQ(post_json(lead_json()), Intake::kAccept);
  ASSERT_EQ(post_json(lead_json()), Intake::kAccept);
  EXPECT_EQ(post_json(lead_json()), Intake::kAnswered);
  EXPECT_EQ(res.status, 429);
  EXPECT_EQ(surface_b_body_of(res)["status"], "rate_limited");
  EXPECT_EQ(res.header("X-RateLimit-Remaining"), "0");
  EXPECT_EQ(rate_limited, std::vector<std::string>{"cp_1"});
}

TEST_F(SurfaceBHandler, ALeadHandedToTheQueueIsAnsweredByItsOutcome) {
  const std::string id = new_id(kLeadPrefix, kSurfaceBNow);
  http::Response queued;
  answer_campaign_lead(queued, id, "sl_1", kSurfaceBKey, {ProduceStatus::kOk, std::nullopt});
  EXPECT_EQ(queued.status, 202);
  EXPECT_EQ(
      surface_b_body_of(queued),
      (json{{"status", "queued"}, {"job_id", job_id_for(id, kSurfaceBKey)}, {"lead_id", id}}));

  http::Response sold;
  answer_campaign_lead(
      sold, id, "sl_1", kSurfaceBKey,
      {ProduceStatus::kOk, OutcomeMessage{id, DeliveryStatus::kDelivered, "by_1", 2400, 1680}});
  EXPECT_EQ(sold.status, 200);
  // The seller reads its payout as the price, and no buyer.
  EXPECT_EQ(surface_b_body_of(sold), (json{{"status", "sold"},
                                           {"sold", true},
                                           {"price", 16.8},
                                           {"currency", "USD"},
                                           {"lead_id", id}}));

  http::Response down;
  answer_campaign_lead(down, id, "sl_1", kSurfaceBKey, {ProduceStatus::kTimedOut, std::nullopt});
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.header("Retry-After"), "1");
  EXPECT_EQ(surface_b_body_of(down)["status"], "unavailable");
}

TEST_F(SurfaceBHandler, StatsAreTheRollupsOfThePeriod) {
  PerformanceCell cell;
  cell.figures[kLeads] = 10;
  cell.figures[kSold] = 6;
  cell.figures[kUnsold] = 3;
  cell.figures[kFailed] = 1;
  store.performance = {cell};
  RevenueCell money;
  money.sales = 6;
  money.payout = 6000;
  store.revenue = {money};
  store.queued = 2;
  res = get("/api/v1/stats/" + kSurfaceBKey + "?period=24h");
  answer_stats(ports, kSurfaceBKey, req, res);
  ASSERT_EQ(res.status, 200) << res.body;
  const json b = surface_b_body_of(res);
  EXPECT_EQ(b["campaign_id"], "cp_1");
  EXPECT_EQ(b["period"], "24h");
  EXPECT_EQ(b["received"], 12);
  EXPECT_EQ(b["sold"], 6);
  EXPECT_EQ(b["queued"], 2);
  EXPECT_EQ(b["errors"], 1);
  EXPECT_EQ(b["acceptance_rate"], 0.6);
  EXPECT_EQ(b["payout"], 60.0);
  ASSERT_FALSE(store.asked.empty());
  EXPECT_EQ(store.asked[0].from_ms % kRollupBucketMs, 0);
  EXPECT_EQ(store.asked[0].filters.size(), 1u);
}

TEST_F(SurfaceBHandler, StatsRefuseABadPeriodAnUnknownKeyAndAStoreDown) {
  res = get("/api/v1/stats/" + kSurfaceBKey + "?period=year");
  answer_stats(ports, kSurfaceBKey, req, res);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(surface_b_body_of(res)["errors"][0]["field"], "period");

  res = get("/api/v1/stats/lfc_nobody");
  answer_stats(ports, "lfc_nobody", req, res);
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(refused_kinds, std::vector<std::string>{"unknown_key"});

  // A paused campaign still reads its own stats.
  res = get("/api/v1/stats/" + kPaused);
  answer_stats(ports, kPaused, req, res);
  EXPECT_EQ(res.status, 200);

  store.down = true;
  res = get("/api/v1/stats/" + kSurfaceBKey);
  answer_stats(ports, kSurfaceBKey, req, res);
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(surface_b_body_of(res),
            (json{{"status", "unavailable"}, {"message", "the store cannot be reached; retry"}}));
  keys_down = true;
  res = get("/api/v1/stats/" + kSurfaceBKey);
  answer_stats(ports, kSurfaceBKey, req, res);
  EXPECT_EQ(res.status, 503);
}

TEST_F(SurfaceBHandler, AJobIsItsCampaignsAloneAndQueuedUntilDecided) {
  const std::string id = lead_id_at(kSurfaceBNow - 1000);
  ASSERT_EQ(id_time_ms(id, kLeadPrefix), kSurfaceBNow - 1000);
  const std::string job = job_id_for(id, kSurfaceBKey);
  const std::string header = "X-Campaign-Key: " + kSurfaceBKey + "\r\n";

  // Issued to this key, not yet stored: queued.
  res = get("/api/v1/jobs/" + job, header);
  answer_job(ports, job, req, res);
  EXPECT_EQ(surface_b_body_of(res), (json{{"status", "queued"}, {"job_id", job}}));

  LeadRecord r;
  r.lead.id = id;
  r.lead.campaign_id = "cp_1";
  r.lead.seller_id = "sl_1";
  r.distribution.status = DeliveryStatus::kUnsold;
  store.leads[id] = r;
  res = get("/api/v1/jobs/" + job, header);
  answer_job(ports, job, req, res);
  EXPECT_EQ(surface_b_body_of(res)["status"], "unsold");
  // A lead the store cannot read is neither "queued" nor "no such job": 503, retry.
  store.down = true;
  res = get("/api/v1/jobs/" + job, header);
  answer_job(ports, job, req, res);
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(res.header("Retry-After"), "1");
  EXPECT_EQ(surface_b_body_of(res)["status"], "unavailable");
  store.down = false;

  // Held under another campaign, a tag this key made reads as the key's own queued job: it says
  // nothing of that lead.
  store.leads[id].lead.campaign_id = "cp_2";
  res = get("/api/v1/jobs/" + job, header);
  answer_job(ports, job, req, res);
  EXPECT_EQ(surface_b_body_of(res), (json{{"status", "queued"}, {"job_id", job}}));
  // A bare id proves nothing, and anything malformed is nobody's: one 404.
  for (const std::string& other : {id, std::string("nonsense")}) {
    res = get("/api/v1/jobs/" + other, header);
    answer_job(ports, other, req, res);
    EXPECT_EQ(res.status, 404) << other;
    EXPECT_EQ(surface_b_body_of(res), (json{{"status", "not_found"}, {"message", "no such job"}}));
  }
  // A day after its id was made, an unstored job is no longer anyone's.
  store.leads.clear();
  clock.advance(std::chrono::hours(24));
  res = get("/api/v1/jobs/" + job, header);
  answer_job(ports, job, req, res);
  EXPECT_EQ(res.status, 404);
}

TEST_F(SurfaceBHandler, AJobNeedsItsCampaignsKey) {
  res = get("/api/v1/jobs/x");
  answer_job(ports, "x", req, res);
  EXPECT_EQ(res.status, 401);
  res = get("/api/v1/jobs/x", "X-Campaign-Key: lfc_nobody\r\n");
  answer_job(ports, "x", req, res);
  EXPECT_EQ(refused_kinds, (std::vector<std::string>{"missing_key", "unknown_key"}));
  keys_down = true;
  res = get("/api/v1/jobs/x", "X-Campaign-Key: " + kSurfaceBKey + "\r\n");
  answer_job(ports, "x", req, res);
  EXPECT_EQ(res.status, 503);
}

TEST_F(SurfaceBHandler, FieldsAreTheVerticalsOr404) {
  http::Response known;
  answer_fields(ports, "auto_insurance", known);
  EXPECT_EQ(known.status, 200);
  // Open to anyone: what any seller reads of the vertical, not how buyers buy it.
  const json whole = verticals.to_json(*verticals.find("auto_insurance"));
  EXPECT_EQ(surface_b_body_of(known), public_vertical(whole));
  EXPECT_FALSE(surface_b_body_of(known).contains("max_sales"));
  EXPECT_EQ(surface_b_body_of(known)["fields"], whole["fields"]);
  http::Response unknown;
  answer_fields(ports, "space_travel", unknown);
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(surface_b_body_of(unknown),
            (json{{"status", "not_found"}, {"message", "unknown vertical"}}));
}

TEST_F(SurfaceBHandler, FieldsPublishTheReofferPolicyInForceOr503) {
  VerticalReoffer set;
  set.vertical = "auto_insurance";
  set.policy.delays_s = {900, 7200};
  set.policy.window_s = 48 * 3600;
  set.set_at_ms = kSurfaceBNow;
  reoffers = {set};
  http::Response res_set;
  answer_fields(ports, "auto_insurance", res_set);
  EXPECT_EQ(res_set.status, 200);
  // The operator's policy, not the configured one, and not where it comes from.
  EXPECT_EQ(surface_b_body_of(res_set)["reoffer"], reoffer_policy_json(set.policy));
  EXPECT_FALSE(surface_b_body_of(res_set).contains("reoffer_source"));
  EXPECT_FALSE(surface_b_body_of(res_set).contains("configured_reoffer"));

  reoffers_down = true;
  http::Response down;
  answer_fields(ports, "auto_insurance", down);
  EXPECT_EQ(down.status, 503);
}

}  // namespace
}  // namespace leadflow::testing
