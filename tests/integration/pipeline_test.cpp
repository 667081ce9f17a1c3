// The whole pipeline in one process over real HTTPS on loopback: post a lead, see it sold.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "leadflow/domain/lead_codec.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// Polls GET /v1/leads/{id} until the lead leaves pending.
json wait_decided(ServiceFixture& svc, const std::string& id) {
  for (int i = 0; i < 400; ++i) {
    auto r = svc.get("/v1/leads/" + id, svc.operator_key());
    if (r && r->status == 200) {
      json j = body_of(r)["data"];
      if (j["status"] != "pending") return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return json();
}

class Pipeline : public ::testing::Test {
 protected:
  ServiceFixture svc;
};

TEST_F(Pipeline, SellsToTheHighestBidderAndRecordsEveryAttempt) {
  auto low = start_buyer("low", 10.00), high = start_buyer("high", 15.00),
       mid = start_buyer("mid", 12.00);
  svc.add_buyer(*low);
  const std::string high_id = svc.add_buyer(*high);
  svc.add_buyer(*mid);

  auto r = svc.post("/v1/leads", sample_lead(1), svc.operator_key());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const json b = body_of(r);
  EXPECT_EQ(b["success"], true);
  EXPECT_EQ(b["distribution"]["accepted"], true);
  EXPECT_EQ(b["distribution"]["buyer_id"], high_id);
  EXPECT_EQ(b["distribution"]["price"], 15.0);
  EXPECT_EQ(b["distribution"]["currency"], "USD");
  EXPECT_EQ(b["distribution"]["delivery_status"], "delivered");
  const std::string id = b["lead_id"];
  EXPECT_EQ(r->get_header_value("Location"), "/v1/leads/" + id);
  EXPECT_FALSE(r->get_header_value("X-Request-Id").empty());
  EXPECT_EQ(r->get_header_value("X-RateLimit-Limit"), "1000");  // the bootstrap key is enterprise

  auto detail = svc.get("/v1/leads/" + id, svc.operator_key());
  ASSERT_EQ(detail->status, 200);
  const json lead = body_of(detail)["data"];
  EXPECT_EQ(lead["email"], "ada1@example.com");
  EXPECT_EQ(lead["phone"], "+12022000001");
  EXPECT_EQ(lead["state"], "CA");
  EXPECT_EQ(lead["status"], "delivered");
  int pings = 0, posts = 0;
  for (const auto& a : lead["attempts"]) {
    if (a["kind"] == "ping") {
      ++pings;
      EXPECT_EQ(a["outcome"], "bid");
    } else {
      ++posts;
      EXPECT_EQ(a["outcome"], "accepted");
      EXPECT_EQ(a["buyer_id"], high_id);
    }
  }
  EXPECT_EQ(pings, 3);
  EXPECT_EQ(posts, 1);
  EXPECT_EQ(high->stats().accepted, 1u);
  EXPECT_EQ(low->stats().posts, 0u);
}

TEST_F(Pipeline, PingsCarryNoPersonalData) {
  auto sim = start_buyer("b", 9.00);
  svc.add_buyer(*sim);
  auto r = svc.post("/v1/leads", sample_lead(2), svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  const auto pings = sim->pings();
  ASSERT_EQ(pings.size(), 1u);
  const json ping = json::parse(pings[0].body);
  for (const char* field :
       {"first_name", "last_name", "email", "phone", "ip_address", "user_agent"})
    EXPECT_FALSE(ping.contains(field)) << field;
  for (const char* value : {"Ada", "Lovelace", "ada2@example.com", "2022000002", "203.0.113.9"})
    EXPECT_EQ(pings[0].body.find(value), std::string::npos) << value;
  EXPECT_EQ(sim->stats().pii_pings, 0u);
  const auto posts = sim->posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].header("Idempotency-Key"), body_of(r)["lead_id"]);
  EXPECT_NE(posts[0].body.find("ada2@example.com"), std::string::npos);
}

TEST_F(Pipeline, FallsBackToTheNextBidderWhenTheWinnerRejects) {
  auto first = start_buyer("first", 20.00), second = start_buyer("second", 11.00);
  svc.add_buyer(*first);
  const std::string second_id = svc.add_buyer(*second);
  first->set_reject_next(1, "over capacity");
  auto r = svc.post("/v1/leads", sample_lead(3), svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  const json b = body_of(r);
  EXPECT_EQ(b["distribution"]["buyer_id"], second_id);
  EXPECT_EQ(b["distribution"]["price"], 11.0);
  const json lead =
      body_of(svc.get("/v1/leads/" + std::string(b["lead_id"]), svc.operator_key()))["data"];
  bool saw_rejection = false;
  for (const auto& a : lead["attempts"])
    if (a["kind"] == "post" && a["outcome"] == "rejected") {
      saw_rejection = true;
      EXPECT_EQ(a["reason"], "over capacity");
    }
  EXPECT_TRUE(saw_rejection);
}

TEST_F(Pipeline, ASlowBuyerTimesOutAndTheOthersStillSell) {
  auto slow = start_buyer("slow", 50.00, 2000), quick = start_buyer("quick", 8.00);
  const std::string slow_id =
      svc.add_buyer(*slow, "auto_insurance", {{"delivery", {{"timeout_ms", 200}}}});
  const std::string quick_id = svc.add_buyer(*quick);
  const auto started = std::chrono::steady_clock::now();
  auto r = svc.post("/v1/leads", sample_lead(4), svc.operator_key());
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["buyer_id"], quick_id);
  EXPECT_LT(took, std::chrono::milliseconds(1900));  // did not wait for the slow buyer's answer
  const json lead = body_of(
      svc.get("/v1/leads/" + std::string(body_of(r)["lead_id"]), svc.operator_key()))["data"];
  bool saw_timeout = false;
  for (const auto& a : lead["attempts"])
    if (a["buyer_id"] == slow_id) saw_timeout = a["outcome"] == "timeout";
  EXPECT_TRUE(saw_timeout);
}

// A post that gets no answer may have been taken: the buyer is asked again with the same
// Idempotency-Key (and answers as it did the first time), and the next bidder is never offered
// the lead meanwhile.
TEST_F(Pipeline, APostWithoutAnAnswerIsAskedAgainNotOfferedToTheNextBidder) {
  BuyerSimOptions o;
  o.name = "late";
  o.hang_ms = 1500;
  auto late = std::make_unique<BuyerSimulator>(o);
  late->start();
  auto next = start_buyer("next", 9.00);
  // A fixed-price buyer is posted without a ping, so the one request that hangs is the post.
  const std::string late_id =
      svc.add_buyer(*late, "auto_insurance",
                    {{"delivery", {{"timeout_ms", 300}}},
                     {"pricing", {{"model", "fixed"}, {"price", 20.0}, {"min_bid", nullptr}}}});
  svc.add_buyer(*next);
  late->set_hang_next(1);
  auto r = svc.post("/v1/leads", sample_lead(40), svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["buyer_id"], late_id);
  EXPECT_EQ(body_of(r)["distribution"]["price"], 20.0);
  EXPECT_EQ(next->stats().posts, 0u) << "the lead was offered to a second buyer";
  EXPECT_EQ(late->stats().accepted, 1u);
  EXPECT_GE(late->stats().duplicate_posts, 1u);  // the repeat got the first answer back
  const json lead = body_of(
      svc.get("/v1/leads/" + std::string(body_of(r)["lead_id"]), svc.operator_key()))["data"];
  std::vector<std::string> outcomes;
  for (const auto& a : lead["attempts"])
    if (a["kind"] == "post") outcomes.push_back(a["outcome"]);
  ASSERT_GE(outcomes.size(), 2u);
  EXPECT_EQ(outcomes.front(), "timeout");
  EXPECT_EQ(outcomes.back(), "accepted");
}

// The in-process workers run niced (LEADFLOW_WORKER_NICE, 10 by default) and the front does
// not: with the cores saturated, acknowledging posts comes before auctions.
TEST_F(Pipeline, WorkerThreadsRunAtALowerCpuPriorityThanTheFront) {
  int niced = 0, normal = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the command (which may hold spaces) start after the last ')'; nice is the
    // 19th field of the file, the 17th after it.
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 0; i < 17 && rest >> field; ++i) {
    }
    (std::stoi(field) == 10 ? niced : normal)++;
  }
  EXPECT_GE(niced, 3) << "the consumer, auction and HTTP-client threads";
  EXPECT_GE(normal, 3) << "the test, the event loops and the queue writer";
  auto buyer = start_buyer("acme", 12.00);
  svc.add_buyer(*buyer);
  auto r = svc.post("/v1/leads", sample_lead(41), svc.operator_key());
  EXPECT_EQ(r->status, 201) << r->body;  // the niced workers still decide leads
}

TEST_F(Pipeline, AFailingBuyerIsPausedAndTheOthersKeepSelling) {
  auto broken = start_buyer("broken", 30.00), steady = start_buyer("steady", 8.00);
  const std::string broken_id = svc.add_buyer(*broken);
  const std::string steady_id = svc.add_buyer(*steady);
  broken->set_fail_next(1000, 503);
  for (int i = 0; i < 10; ++i) {
    auto r = svc.post("/v1/leads", sample_lead(300 + i), svc.operator_key());
    ASSERT_EQ(r->status, 201) << r->body;
    EXPECT_EQ(body_of(r)["distribution"]["buyer_id"], steady_id);
  }
  const auto pinged = broken->stats().pings;
  auto r = svc.post("/v1/leads", sample_lead(310), svc.operator_key());
  ASSERT_EQ(r->status, 201);
  EXPECT_EQ(broken->stats().pings, pinged);  // sat out this auction
  const json lead = body_of(
      svc.get("/v1/leads/" + std::string(body_of(r)["lead_id"]), svc.operator_key()))["data"];
  bool unhealthy = false;
  for (const auto& i : lead["ineligible_buyers"])
    unhealthy = unhealthy || (i["buyer_id"] == broken_id && i["reason"] == "unhealthy");
  EXPECT_TRUE(unhealthy) << lead.dump();
  auto m = svc.get("/metrics", svc.operator_key());
  EXPECT_NE(m->body.find("leadflow_buyer_pauses_total{buyer_id=\"" + broken_id + "\"} 1"),
            std::string::npos);
}

// max_concurrency is counted per worker process; /metrics shows what this process has in flight
// to each buyer beside the limit, so that summed over the workers the real total can be read.
TEST_F(Pipeline, MetricsShowABuyersRequestsInFlightBesideItsLimit) {
  auto slow = start_buyer("slow", 20.00, 1500);
  const std::string id = svc.add_buyer(
      *slow, "auto_insurance", {{"max_concurrency", 2}, {"delivery", {{"timeout_ms", 3000}}}});
  const std::string in_flight = "leadflow_buyer_in_flight{buyer_id=\"" + id + "\"} ";
  auto value_of = [&](const std::string& series) {
    auto m = svc.get("/metrics", svc.operator_key());
    const auto at = m && m->status == 200 ? m->body.find(series) : std::string::npos;
    return at == std::string::npos ? -1.0 : std::stod(m->body.substr(at + series.size()));
  };
  EXPECT_EQ(value_of(in_flight), 0);
  EXPECT_EQ(value_of("leadflow_buyer_max_concurrency{buyer_id=\"" + id + "\"} "), 2);
  for (int i = 0; i < 3; ++i) {
    auto r = svc.post("/v1/leads", sample_lead(600 + i), svc.operator_key(),
                      {{"Prefer", "respond-async"}});
    ASSERT_EQ(r->status, 202) << r->body;
  }
  // Three auctions at once: two hold the buyer's two slots for 1.5 s, the third sits it out.
  double most = 0;
  for (int i = 0; i < 100 && most < 2; ++i) {
    most = std::max(most, value_of(in_flight));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(most, 2);
  double now = -1;
  for (int i = 0; i < 200 && now != 0; ++i) {
    now = value_of(in_flight);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(now, 0) << "the slots did not come back with the answers";
}

// With several worker loops in one process, the records held are summed over the loops: each
// loop holds the leads of its own partitions, and the gauge once showed the last loop's alone.
TEST(PipelineLoops, LeadsInFlightAreSummedOverTheWorkerLoops) {
  ServiceOptions o;
  o.workers = 2;
  ServiceFixture svc(o);
  auto slow = start_buyer("slow", 20.00, 1500);
  svc.add_buyer(*slow, "auto_insurance", {{"delivery", {{"timeout_ms", 4000}}}});
  auto held = [&] {
    auto m = svc.get("/metrics", svc.operator_key());
    const std::string series = "\nleadflow_worker_leads_in_flight ";
    const auto at = m && m->status == 200 ? m->body.find(series) : std::string::npos;
    return at == std::string::npos ? -1.0 : std::stod(m->body.substr(at + series.size()));
  };
  EXPECT_EQ(held(), 0);
  constexpr int kLeads = 8;  // over the queue's partitions, so both loops hold some
  for (int i = 0; i < kLeads; ++i) {
    auto r = svc.post("/v1/leads", sample_lead(700 + i), svc.operator_key(),
                      {{"Prefer", "respond-async"}});
    ASSERT_EQ(r->status, 202) << r->body;
  }
  double most = 0;
  for (int i = 0; i < 100 && most < kLeads; ++i) {
    most = std::max(most, held());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(most, kLeads) << "every lead waits on the slow buyer at once";
  double now = -1;
  for (int i = 0; i < 300 && now != 0; ++i) {
    now = held();
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(now, 0);
}

TEST_F(Pipeline, RespondAsyncAnswers202AndTheLeadIsDecidedLater) {
  auto sim = start_buyer("b", 9.00, 100);
  svc.add_buyer(*sim);
  auto r = svc.post("/v1/leads", sample_lead(5), svc.operator_key(), {{"Prefer", "respond-async"}});
  ASSERT_EQ(r->status, 202) << r->body;
  const json b = body_of(r);
  EXPECT_EQ(b["distribution"]["delivery_status"], "pending");
  EXPECT_EQ(b["distribution"]["accepted"], false);
  const json decided = wait_decided(svc, b["lead_id"]);
  EXPECT_EQ(decided["status"], "delivered");
}

TEST_F(Pipeline, TheWaitBudgetRunsOutInto202) {
  auto sim = start_buyer("b", 9.00, 1500);
  svc.add_buyer(*sim, "auto_insurance", {{"delivery", {{"timeout_ms", 3000}}}});
  auto r = svc.post("/v1/leads", sample_lead(6), svc.operator_key(), {{"Prefer", "wait=1"}});
  ASSERT_EQ(r->status, 202) << r->body;
  EXPECT_EQ(wait_decided(svc, body_of(r)["lead_id"])["status"], "delivered");
}

TEST_F(Pipeline, NoBuyerMeansUnsold) {
  auto r = svc.post("/v1/leads", sample_lead(7, "solar"), svc.operator_key());
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["delivery_status"], "unsold");
  EXPECT_EQ(body_of(r)["distribution"]["accepted"], false);
}

TEST_F(Pipeline, TheSamePersonTwiceIsADuplicate) {
  auto sim = start_buyer("b", 9.00);
  svc.add_buyer(*sim);
  ASSERT_EQ(svc.post("/v1/leads", sample_lead(8), svc.operator_key())->status, 201);
  auto again = svc.post("/v1/leads", sample_lead(8), svc.operator_key());
  ASSERT_EQ(again->status, 201);
  EXPECT_EQ(body_of(again)["distribution"]["delivery_status"], "duplicate");
  EXPECT_EQ(sim->stats().posts, 1u);
}

TEST_F(Pipeline, IdempotencyKeyReplaysTheFirstAnswerAndNeverDistributesTwice) {
  auto sim = start_buyer("b", 9.00);
  svc.add_buyer(*sim);
  const httplib::Headers idem = {{"Idempotency-Key", "order-42"}};
  auto first = svc.post("/v1/leads", sample_lead(20), svc.operator_key(), idem);
  ASSERT_EQ(first->status, 201) << first->body;
  auto again = svc.post("/v1/leads", sample_lead(20), svc.operator_key(), idem);
  ASSERT_EQ(again->status, 201);
  EXPECT_EQ(again->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(again->body, first->body);
  EXPECT_EQ(sim->stats().posts, 1u);
  EXPECT_EQ(body_of(svc.get("/v1/leads", svc.operator_key()))["data"].size(), 1u);

  auto different = svc.post("/v1/leads", sample_lead(21), svc.operator_key(), idem);
  EXPECT_EQ(different->status, 422);
  auto bad = svc.post("/v1/leads", sample_lead(22), svc.operator_key(),
                      {{"Idempotency-Key", std::string(300, 'k')}});
  EXPECT_EQ(bad->status, 400);
}

TEST_F(Pipeline, IdempotencyKeyInFlightIs409) {
  auto sim = start_buyer("slow", 9.00, 1500);
  svc.add_buyer(*sim, "auto_insurance", {{"delivery", {{"timeout_ms", 3000}}}});
  const httplib::Headers idem = {{"Idempotency-Key", "order-43"}};
  std::thread first([&] { svc.post("/v1/leads", sample_lead(23), svc.operator_key(), idem); });
  ASSERT_TRUE(sim->wait_for_requests(1, std::chrono::seconds(10)));  // the first is in its auction
  auto second = svc.post("/v1/leads", sample_lead(23), svc.operator_key(), idem);
  first.join();
  EXPECT_EQ(second->status, 409);
}

TEST_F(Pipeline, ValidationListsEveryOffendingField) {
  json lead = sample_lead(9);
  lead.erase("first_name");
  lead["email"] = "not-an-email";
  lead["phone"] = "123";
  lead["vertical"] = "spaceships";
  lead["favourite_colour"] = "blue";
  auto r = svc.post("/v1/leads", lead, svc.operator_key());
  ASSERT_EQ(r->status, 400);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/problem+json");
  const json b = body_of(r);
  EXPECT_EQ(b["success"], false);
  EXPECT_EQ(b["status"], 400);
  std::set<std::string> fields;
  for (const auto& e : b["errors"]) fields.insert(e["field"]);
  for (const char* f : {"first_name", "email", "phone", "vertical", "favourite_colour"})
    EXPECT_TRUE(fields.count(f)) << f << " in " << r->body;
}

TEST_F(Pipeline, AuthenticationAndPermissionFailures) {
  auto missing = svc.post("/v1/leads", sample_lead(10), "");
  EXPECT_EQ(missing->status, 401);
  EXPECT_FALSE(missing->get_header_value("X-RateLimit-Limit").empty());
  EXPECT_EQ(svc.post("/v1/leads", sample_lead(10), "lfk_wrong")->status, 401);

  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"seller_id", seller}});
  EXPECT_EQ(svc.get("/v1/buyers", seller_key)->status, 403);  // buyers are operator-only
  const std::string read_only =
      svc.add_api_key({{"seller_id", seller}, {"scopes", {"leads:read"}}});
  EXPECT_EQ(svc.post("/v1/leads", sample_lead(10), read_only)->status, 403);

  // Revocation takes effect at once.
  auto keys = body_of(svc.get("/v1/api-keys", svc.operator_key()))["data"];
  std::string key_id;
  for (const auto& k : keys)
    if (k["seller_id"] == seller && k["scopes"].size() == 1) key_id = k["key_id"];
  ASSERT_FALSE(key_id.empty());
  EXPECT_EQ(svc.https()
                ->Delete(("/v1/api-keys/" + key_id).c_str(),
                         {{"Authorization", "Bearer " + svc.operator_key()}})
                ->status,
            200);
  EXPECT_EQ(svc.get("/v1/leads", read_only)->status, 401);
}

TEST_F(Pipeline, SellersSeeOnlyTheirOwnLeads) {
  const std::string a = svc.add_seller("A"), b = svc.add_seller("B");
  const std::string key_a = svc.add_api_key({{"seller_id", a}}),
                    key_b = svc.add_api_key({{"seller_id", b}});
  auto r = svc.post("/v1/leads", sample_lead(11), key_a, {{"Prefer", "respond-async"}});
  ASSERT_EQ(r->status, 202);
  const std::string id = body_of(r)["lead_id"];
  wait_decided(svc, id);
  EXPECT_EQ(svc.get("/v1/leads/" + id, key_a)->status, 200);
  EXPECT_EQ(svc.get("/v1/leads/" + id, key_b)->status, 404);
  EXPECT_EQ(body_of(svc.get("/v1/leads", key_a))["data"].size(), 1u);
  EXPECT_EQ(body_of(svc.get("/v1/leads", key_b))["data"].size(), 0u);
}

TEST_F(Pipeline, ContentTypeAndSizeLimits) {
  auto c = svc.https();
  auto wrong_type = c->Post("/v1/leads", {{"Authorization", "Bearer " + svc.operator_key()}},
                            sample_lead(12).dump(), "text/plain");
  EXPECT_EQ(wrong_type->status, 415);
  json big = sample_lead(12);
  big["custom_fields"]["notes"] = std::string(70 * 1024, 'x');
  auto too_big = svc.post("/v1/leads", big, svc.operator_key());
  ASSERT_TRUE(too_big);
  EXPECT_EQ(too_big->status, 413);
  auto not_json = c->Post("/v1/leads", {{"Authorization", "Bearer " + svc.operator_key()}},
                          "{\"first_name\":", "application/json");
  EXPECT_EQ(not_json->status, 400);
}

TEST_F(Pipeline, ThePerKeyMinuteLimitIsEnforced) {
  const std::string seller = svc.add_seller();
  const std::string key = svc.add_api_key({{"seller_id", seller}, {"plan", "standard"}});
  auto c = svc.https();
  httplib::Headers h = {{"Authorization", "Bearer " + key}};
  // The bucket refills one request every 0.6 s while this runs, so count what got through
  // before the first refusal and allow for the refill the elapsed time explains.
  const auto started = std::chrono::steady_clock::now();
  int allowed = 0;
  httplib::Headers refused;
  bool was_refused = false;
  for (int i = 0; i < 400; ++i) {
    auto r = c->Get("/v1/leads?limit=1", h);
    ASSERT_TRUE(r);
    if (r->status == 429) {
      refused = r->headers;
      was_refused = true;
      break;
    }
    ASSERT_EQ(r->status, 200);
    ++allowed;
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(was_refused);
  EXPECT_GE(allowed, 100);
  EXPECT_LE(allowed, 100 + static_cast<int>(elapsed_s / 0.6) + 1);
  auto header = [&](const char* name) {
    auto it = refused.find(name);
    return it == refused.end() ? std::string() : it->second;
  };
  EXPECT_EQ(header("X-RateLimit-Limit"), "100");
  EXPECT_EQ(header("X-RateLimit-Remaining"), "0");
  EXPECT_FALSE(header("Retry-After").empty());
  EXPECT_GT(std::stoll(header("X-RateLimit-Reset")), std::time(nullptr));
}

TEST_F(Pipeline, ListsLeadsWithFiltersAndCursor) {
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(svc.post("/v1/leads", sample_lead(100 + i, "solar"), svc.operator_key())->status,
              201);
  auto page1 = body_of(svc.get("/v1/leads?limit=2&vertical=solar", svc.operator_key()));
  ASSERT_EQ(page1["data"].size(), 2u);
  EXPECT_EQ(page1["has_more"], true);
  auto page2 = body_of(
      svc.get("/v1/leads?limit=2&vertical=solar&cursor=" + std::string(page1["next_cursor"]),
              svc.operator_key()));
  ASSERT_EQ(page2["data"].size(), 2u);
  EXPECT_GT(page1["data"][1]["lead_id"], page2["data"][0]["lead_id"]);  // newest first
  EXPECT_EQ(svc.get("/v1/leads?limit=500", svc.operator_key())->status, 400);
  EXPECT_EQ(svc.get("/v1/leads?status=sold", svc.operator_key())->status, 400);
  EXPECT_EQ(svc.get("/v1/leads?created_from=yesterday", svc.operator_key())->status, 400);
  EXPECT_EQ(svc.get("/v1/leads?colour=red", svc.operator_key())->status, 400);
  EXPECT_EQ(
      body_of(svc.get("/v1/leads?status=unsold&vertical=solar", svc.operator_key()))["data"].size(),
      5u);
}

// A bare date is a whole UTC day, both ends included: From today To today lists today's leads
// (it once read "created_to=<today>" as today's midnight and listed none). A full date-time
// keeps its exact instant, and the bound stays exclusive.
TEST_F(Pipeline, LeadsListDateRangeHoldsWholeDays) {
  const auto utc_day = [](std::int64_t shift_days) {
    const std::time_t t = std::time(nullptr) + shift_days * 86'400;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[11];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return std::string(buf);
  };
  const std::string today = utc_day(0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(svc.post("/v1/leads", sample_lead(200 + i, "solar"), svc.operator_key())->status,
              201);
  if (utc_day(0) != today) GTEST_SKIP() << "the UTC day changed while the test ran";
  const auto listed = [&](const std::string& q) {
    auto r = svc.get("/v1/leads?vertical=solar&limit=100&" + q, svc.operator_key());
    EXPECT_EQ(r->status, 200) << q << ": " << r->body;
    return body_of(r)["data"].size();
  };
  EXPECT_EQ(listed("created_from=" + today + "&created_to=" + today), 3u);
  EXPECT_EQ(listed("created_to=" + today), 3u);
  EXPECT_EQ(listed("created_from=" + today), 3u);
  EXPECT_EQ(listed("created_to=" + utc_day(-1)), 0u);
  EXPECT_EQ(listed("created_from=" + utc_day(1)), 0u);
  // An instant is exact: today's midnight as a date-time excludes everything after it.
  EXPECT_EQ(listed("created_to=" + today + "T00:00:00Z"), 0u);
  EXPECT_EQ(listed("created_from=" + today + "T00:00:00Z&created_to=" + utc_day(1) + "T00:00:00Z"),
            3u);
  EXPECT_EQ(svc.get("/v1/leads?created_to=2026-13-40", svc.operator_key())->status, 400);
}

TEST_F(Pipeline, BuyersCanBeCreatedListedAndUpdated) {
  auto sim = start_buyer("b", 9.00);
  const std::string id =
      svc.add_buyer(*sim, "auto_insurance",
                    {{"delivery", {{"headers", {{"X-Api-Key", "supersecretvalue1234"}}}}}});
  auto got = body_of(svc.get("/v1/buyers/" + id, svc.operator_key()))["data"];
  EXPECT_EQ(got["delivery"]["headers"]["X-Api-Key"], "****1234");  // masked when read back
  auto c = svc.https();
  auto put =
      c->Put(("/v1/buyers/" + id).c_str(), {{"Authorization", "Bearer " + svc.operator_key()}},
             R"({"status": "paused"})", "application/json");
  ASSERT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(body_of(put)["data"]["status"], "paused");
  EXPECT_EQ(body_of(put)["data"]["name"], "b");  // fields it did not name are kept
  auto list = body_of(svc.get("/v1/buyers?status=paused", svc.operator_key()));
  EXPECT_EQ(list["data"].size(), 1u);
  auto bad = svc.post(
      "/v1/buyers",
      {{"name", "x"},
       {"verticals", {"auto_insurance"}},
       {"delivery",
        {{"mode", "ping_post"}, {"ping_url", "ftp://x"}, {"post_url", "http://127.0.0.1:1/p"}}}},
      svc.operator_key());
  ASSERT_EQ(bad->status, 400);
  EXPECT_EQ(body_of(bad)["errors"][0]["field"], "delivery.ping_url");
  EXPECT_EQ(svc.get("/v1/buyers/by_nope", svc.operator_key())->status, 404);
}

TEST_F(Pipeline, HealthReadinessAndMetrics) {
  auto c = svc.https();
  EXPECT_EQ(c->Get("/healthz")->status, 200);
  EXPECT_EQ(c->Get("/readyz")->status, 200);
  svc.post("/v1/leads", sample_lead(13, "solar"), svc.operator_key());
  auto m = svc.get("/metrics", svc.operator_key());  // an operator key on the public listener
  ASSERT_EQ(m->status, 200);
  for (const char* name : {"leadflow_http_requests_total", "leadflow_http_request_seconds_bucket",
                           "leadflow_leads_received_total", "leadflow_leads_decided_total",
                           "leadflow_queue_produce_seconds"})
    EXPECT_NE(m->body.find(name), std::string::npos) << name;
  // Outcomes no lead has had yet have a series (0 in a process of their own), not "no data": a
  // rate over them is 0. The counters belong to the process, which other tests of this binary
  // may share (the sanitizer run starts each binary once), so only the series is asserted.
  for (const char* series :
       {"\nleadflow_leads_decided_total{status=\"delivered\"} ",
        "\nleadflow_leads_decided_total{status=\"failed\"} ",
        "\nleadflow_leads_received_total{result=\"rate_limited\",surface=\"campaign\"} ",
        "\nleadflow_leads_received_total{result=\"suppressed\",surface=\"api\"} "})
    EXPECT_NE(m->body.find(series), std::string::npos) << series;
  EXPECT_EQ(m->body.find("ada13@example.com"), std::string::npos);  // no PII in metrics
}

TEST_F(Pipeline, UnknownRoutesAnswerProblem404) {
  auto r = svc.get("/v1/nothing-here", svc.operator_key());
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body_of(r)["success"], false);
}

class PlainListener : public ::testing::Test {
 protected:
  ServiceFixture svc{ServiceOptions{.plain_http = true, .trusted_proxies = {"10.0.0.0/8"}}};
};

TEST_F(PlainListener, RefusesSurfaceAOverPlainHttp) {
  auto r = svc.plain()->Post("/v1/leads", {{"Authorization", "Bearer " + svc.operator_key()}},
                             sample_lead(14).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("HTTPS required"), std::string::npos);
  // A forwarded header from an untrusted address changes nothing.
  auto spoofed = svc.plain()->Get("/v1/leads", {{"Authorization", "Bearer " + svc.operator_key()},
                                                {"X-Forwarded-Proto", "https"}});
  EXPECT_EQ(spoofed->status, 403);
  EXPECT_EQ(svc.plain()->Get("/healthz")->status, 200);
}

}  // namespace
}  // namespace leadflow::testing
