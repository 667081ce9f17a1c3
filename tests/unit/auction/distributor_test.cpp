// The auction on simulated time: a real SQLite store behind FakeStore, buyers answering from a
// script through FakeHttpClient, no network and no real waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core_samples.hpp"
#include "fake_http_client.hpp"
#include "fake_store.hpp"
#include "leadflow/auction/distributor.hpp"
#include "leadflow/auction/event_loop.hpp"
#include "leadflow/auction/worker_metrics.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/domain/verticals.hpp"
#include "simulated_clock.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class DistributorTest : public ::testing::Test {
 protected:
  Distributor& distributor() {
    if (!distributor_)
      distributor_ = std::make_unique<Distributor>(store_, http_, buyers_, campaigns_, verticals_,
                                                   clock_, options_);
    return *distributor_;
  }

  Buyer add_buyer(const std::string& name, void (*tweak)(Buyer&) = nullptr) {
    Buyer b = sample_core_buyer(name);
    if (tweak) tweak(b);
    EXPECT_EQ(store_.insert_buyer(b), StoreStatus::kOk);
    return b;
  }

  Lead add_lead(int n, const std::string& source = "google") {
    Lead l = sample_core_lead(n, clock_.now_ms());
    l.source = source;
    const std::vector<Lead> one{l};
    EXPECT_EQ(store_.insert_leads(one).size(), 1u);
    return l;
  }

  /// Decides `leads` in auctions that all start at the same instant of simulated time (the
  /// store holds their first calls until every one has begun), and returns their decisions in
  /// the order of `leads`.
  std::vector<Decision> decide_at_once(const std::vector<Lead>& leads) {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<Decision>> decisions(leads.size());
    std::size_t done = 0;
    distributor();
    store_.hold_calls();
    for (std::size_t i = 0; i < leads.size(); ++i) {
      distributor().decide(leads[i], [&, i](Decision d) {
        std::lock_guard lock(mu);
        decisions[i] = std::move(d);
        ++done;
        cv.notify_all();
      });
    }
    store_.release_calls();
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 60s, [&] { return done == leads.size(); }));
    std::vector<Decision> out;
    for (auto& d : decisions) out.push_back(d ? std::move(*d) : Decision{});
    return out;
  }

  /// The reason `buyer_id` took no part in `d`, "" if it is not listed.
  static std::string ineligible_reason(const Distribution& d, const std::string& buyer_id) {
    for (const auto& i : d.ineligible)
      if (i.buyer_id == buyer_id) return i.reason;
    return "";
  }

  static std::vector<Attempt> attempts_of(const Distribution& d, AttemptKind kind) {
    std::vector<Attempt> out;
    for (const auto& a : d.attempts)
      if (a.kind == kind) out.push_back(a);
    return out;
  }

  SimulatedClock clock_;
  FakeStore store_{clock_};
  FakeHttpClient http_{clock_};
  VerticalRegistry verticals_ = VerticalRegistry::defaults();
  BuyerDirectory buyers_{store_, clock_};
  CampaignDirectory campaigns_{store_, clock_};
  DistributorOptions options_;
  std::unique_ptr<Distributor> distributor_;
};

TEST_F(DistributorTest, PingsEveryoneAtOnceWithoutPiiAndSellsToTheHighestBid) {
  const Buyer low = add_buyer("low"), high = add_buyer("high"), mid = add_buyer("mid");
  http_.answer(low.ping_url, FakeAnswer::bid(10.00, 40ms));
  http_.answer(high.ping_url, FakeAnswer::bid(15.00, 120ms));
  http_.answer(mid.ping_url, FakeAnswer::bid(12.00, 80ms));
  http_.answer(high.post_url, FakeAnswer::accept("high-991", 50ms));
  const Lead lead = add_lead(1);

  const Distribution d = distributor().decide_and_wait(lead);

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, high.id);
  EXPECT_EQ(d.price, 1500);
  EXPECT_EQ(d.buyer_lead_id, "high-991");
  const auto pings = attempts_of(d, AttemptKind::kPing);
  ASSERT_EQ(pings.size(), 3u);
  for (const auto& a : pings) EXPECT_EQ(a.outcome, AttemptOutcome::kBid) << a.buyer_id;
  const auto posts = attempts_of(d, AttemptKind::kPost);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].outcome, AttemptOutcome::kAccepted);
  EXPECT_EQ(posts[0].duration_ms, 50);
  // The pings ran at once: the slowest (120 ms) and then the post (50 ms).
  EXPECT_EQ(clock_.elapsed(), 170ms);
  EXPECT_EQ(http_.count(low.post_url) + http_.count(mid.post_url), 0u);
  for (const auto& sent : http_.requests()) {
    if (sent.request.url.ends_with("/ping")) {
      EXPECT_EQ(sent.request.body.find(lead.email), std::string::npos);
      EXPECT_EQ(sent.request.body.find(lead.phone), std::string::npos);
      EXPECT_EQ(sent.at, 0ms);
    }
  }
  const auto post = http_.requests_to(high.post_url);
  ASSERT_EQ(post.size(), 1u);
  EXPECT_EQ(post[0].header("Idempotency-Key"), lead.id);
  EXPECT_EQ(json::parse(post[0].request.body)["email"], lead.email);
  EXPECT_EQ(json::parse(post[0].request.body)["price"], 15.0);
}

TEST_F(DistributorTest, ATestLeadIsDecidedTestWithoutAskingAnyBuyer) {
  const Buyer b = add_buyer("keen");
  http_.answer(b.ping_url, FakeAnswer::bid(20.00, 10ms));
  http_.answer(b.post_url, FakeAnswer::accept("keen-1", 10ms));
  Lead lead = add_lead(7);
  lead.test = true;

  const Distribution d = distributor().decide_and_wait(lead);

  EXPECT_EQ(d.status, DeliveryStatus::kTest);
  EXPECT_TRUE(d.attempts.empty());
  EXPECT_TRUE(d.ineligible.empty());
  EXPECT_TRUE(http_.requests().empty());
  // No post intent: nothing reserved against the buyer's caps or budgets.
  EXPECT_EQ(store_.get_post_intent(lead.id).status, StoreStatus::kNotFound);
}

TEST_F(DistributorTest, FallsDownTheRankingWhenPostsAreRefused) {
  const Buyer first = add_buyer("first"), second = add_buyer("second"), third = add_buyer("third");
  http_.answer(first.ping_url, FakeAnswer::bid(20.00));
  http_.answer(second.ping_url, FakeAnswer::bid(15.00));
  http_.answer(third.ping_url, FakeAnswer::bid(11.00));
  http_.answer(first.post_url, FakeAnswer::reject("over capacity"));
  http_.answer(second.post_url, FakeAnswer::http_error(503));
  http_.answer(third.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(2));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, third.id);
  EXPECT_EQ(d.price, 1100);
  const auto posts = attempts_of(d, AttemptKind::kPost);
  ASSERT_EQ(posts.size(), 3u);
  EXPECT_EQ(posts[0].buyer_id, first.id);
  EXPECT_EQ(posts[0].outcome, AttemptOutcome::kRejected);
  EXPECT_EQ(posts[0].reason, "over capacity");
  EXPECT_EQ(posts[1].buyer_id, second.id);
  EXPECT_EQ(posts[1].outcome, AttemptOutcome::kError);
  EXPECT_EQ(posts[1].http_status, 503);
  EXPECT_EQ(posts[2].outcome, AttemptOutcome::kAccepted);
  // Each buyer is posted once: a refusal is an answer, not a reason to ask again.
  EXPECT_EQ(http_.count(first.post_url), 1u);
  EXPECT_EQ(http_.count(second.post_url), 1u);
}

TEST_F(DistributorTest, EveryPostRefusedIsUnsold) {
  const Buyer only = add_buyer("only");
  http_.answer(only.ping_url, FakeAnswer::bid(9.00));
  http_.answer(only.post_url, FakeAnswer::reject("not today"));
  const Distribution d = distributor().decide_and_wait(add_lead(3));
  EXPECT_EQ(d.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(d.reason, "every post was rejected");
}

// A fixed-price buyer is posted without a ping, so the one request that hangs is the post.
void fixed_at_20(Buyer& b) {
  b.pricing = PricingModel::kFixed;
  b.price = 2000;
}

TEST_F(DistributorTest, AnUnansweredPostIsAskedAgainWithTheSameKeyNotOfferedToTheNextBidder) {
  const Buyer late = add_buyer("late", fixed_at_20), next = add_buyer("next");
  http_.answer(next.ping_url, FakeAnswer::bid(9.00));
  http_.answer(next.post_url, FakeAnswer::accept());
  http_.answer_next(late.post_url, FakeAnswer::no_answer());
  http_.answer(late.post_url, FakeAnswer::accept("late-1"));
  const Lead lead = add_lead(4);

  const Distribution d = distributor().decide_and_wait(lead);

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, late.id);
  EXPECT_EQ(d.price, 2000);
  EXPECT_EQ(http_.count(next.post_url), 0u) << "the lead was offered to a second buyer";
  const auto posts = http_.requests_to(late.post_url);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].header("Idempotency-Key"), lead.id);
  EXPECT_EQ(posts[1].header("Idempotency-Key"), lead.id);
  EXPECT_EQ(posts[1].request.body, posts[0].request.body);
  // Asked again once its timeout (1 s) and the pause between re-asks (200 ms) had passed.
  EXPECT_EQ(posts[1].at - posts[0].at, 1200ms);
  const auto attempts = attempts_of(d, AttemptKind::kPost);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].outcome, AttemptOutcome::kTimeout);
  EXPECT_EQ(attempts[1].outcome, AttemptOutcome::kAccepted);
}

TEST_F(DistributorTest, APostNeverAnsweredStopsTheAuctionAndTheRetryAsksThatBuyerFirst) {
  const Buyer late = add_buyer("late", fixed_at_20), next = add_buyer("next");
  http_.answer(next.ping_url, FakeAnswer::bid(9.00));
  http_.answer(next.post_url, FakeAnswer::accept());
  http_.answer(late.post_url, FakeAnswer::no_answer());
  const Lead lead = add_lead(5);
  auto& metrics = worker_metrics();
  const double unknown_before = metrics.post_outcome_unknown.Value();
  const double recoveries_before = metrics.recoveries.Value();

  EXPECT_THROW(distributor().decide_and_wait(lead), std::runtime_error);

  EXPECT_EQ(metrics.post_outcome_unknown.Value(), unknown_before + 1);
  EXPECT_EQ(http_.count(next.post_url), 0u) << "the lead was offered to a second buyer";
  // Posts start every 1.2 s (1 s timeout + 200 ms pause) while another fits before the 10 s
  // deadline: at 0, 1.2, ... 9.6 s; the last times out at 10.6 s.
  EXPECT_EQ(http_.count(late.post_url), 9u);
  for (const auto& p : http_.requests_to(late.post_url))
    EXPECT_EQ(p.header("Idempotency-Key"), lead.id);
  EXPECT_EQ(clock_.elapsed(), 10600ms);
  const auto intent = store_.get_post_intent(lead.id).value;
  ASSERT_TRUE(intent);
  EXPECT_EQ(intent->buyer_id, late.id);

  // The lead comes back from the retry topic: the buyer that may hold it is asked first.
  http_.answer(late.post_url, FakeAnswer::accept("late-2"));
  const std::size_t sent_before = http_.requests().size();
  const Distribution d = distributor().decide_and_wait(lead);
  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, late.id);
  EXPECT_EQ(metrics.recoveries.Value(), recoveries_before + 1);
  const auto sent = http_.requests();
  ASSERT_EQ(sent.size(), sent_before + 1) << "nobody else was pinged or posted";
  EXPECT_EQ(sent.back().request.url, late.post_url);
  EXPECT_EQ(sent.back().header("Idempotency-Key"), lead.id);
}

TEST_F(DistributorTest, AFailedAuctionKeepsItsPostsForTheOperatorWhoMustSettleIt) {
  const Buyer late = add_buyer("late", fixed_at_20);
  http_.answer(late.post_url, FakeAnswer::no_answer());
  const Lead lead = add_lead(6);
  const std::int64_t started = clock_.now_ms();

  const auto decisions = decide_at_once({lead});
  ASSERT_EQ(decisions.size(), 1u);
  ASSERT_EQ(decisions[0].kind, Decision::Kind::kFailed);
  // Every post made before the deadline, when, to whom and at what price.
  const auto posts = attempts_of(decisions[0].distribution, AttemptKind::kPost);
  ASSERT_EQ(posts.size(), 9u);
  for (std::size_t i = 0; i < posts.size(); ++i) {
    EXPECT_EQ(posts[i].buyer_id, late.id);
    EXPECT_EQ(posts[i].bid, Cents{2000});
    EXPECT_EQ(posts[i].outcome, AttemptOutcome::kTimeout);
    EXPECT_EQ(posts[i].started_at_ms, started + static_cast<std::int64_t>(i) * 1200);
  }
}

TEST_F(DistributorTest, ALeadRedeliveredMidPostIsRepostedToTheBuyerOfItsIntent) {
  const Buyer holder = add_buyer("holder"), other = add_buyer("other");
  http_.answer(holder.post_url, FakeAnswer::accept("held"));
  http_.answer(other.ping_url, FakeAnswer::bid(30.00));
  const Lead lead = add_lead(6);
  // A worker recorded the intent and died before it knew the answer.
  ASSERT_EQ(
      store_.record_post_intent({lead.id, holder.id, 1700, "pg_before_crash", clock_.now_ms()}, {}),
      StoreStatus::kOk);

  const Distribution d = distributor().decide_and_wait(lead);

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, holder.id);
  EXPECT_EQ(d.price, 1700);
  ASSERT_EQ(http_.requests().size(), 1u);  // no ping: the lead may already be sold
  const json body = json::parse(http_.requests()[0].request.body);
  EXPECT_EQ(body["ping_id"], "pg_before_crash");
  EXPECT_EQ(body["price"], 17.0);
}

TEST_F(DistributorTest, ALeadWhoseIntentTheStoreCannotReadIsDeferredNotOfferedToAnother) {
  const Buyer holder = add_buyer("holder"), other = add_buyer("other");
  http_.answer(holder.post_url, FakeAnswer::accept("held"));
  http_.answer(other.ping_url, FakeAnswer::bid(30.00));
  http_.answer(other.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(16);
  ASSERT_EQ(
      store_.record_post_intent({lead.id, holder.id, 1700, "pg_before_crash", clock_.now_ms()}, {}),
      StoreStatus::kOk);
  // Redelivered while the store cannot say whether the lead has an intent: "no intent" would
  // offer it to the best bidder although `holder` may already have it.
  store_.fail_next_lookups(1);

  EXPECT_THROW(distributor().decide_and_wait(lead), AuctionDeferred);
  EXPECT_EQ(http_.requests().size(), 0u) << "a buyer was asked before the intent could be read";

  // Once the store answers, the buyer of the intent is asked first, as after any crash.
  const Distribution d = distributor().decide_and_wait(lead);
  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, holder.id);
  EXPECT_EQ(http_.count(other.post_url), 0u);
}

void capped(Buyer& b) { b.caps = {{"daily", 100}}; }

TEST_F(DistributorTest, ABuyerWhoseCapReservationIsRefusedIsSkippedWithoutAPost) {
  const Buyer full = add_buyer("full", capped), open = add_buyer("open");
  http_.answer(full.ping_url, FakeAnswer::bid(25.00));
  http_.answer(full.post_url, FakeAnswer::accept());
  http_.answer(open.ping_url, FakeAnswer::bid(10.00));
  http_.answer(open.post_url, FakeAnswer::accept());
  store_.refuse_reservations(full.id);  // another worker took the last slot after the cap check

  const Distribution d = distributor().decide_and_wait(add_lead(7));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, open.id);
  EXPECT_EQ(http_.count(full.post_url), 0u);
  const auto posts = attempts_of(d, AttemptKind::kPost);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].buyer_id, full.id);
  EXPECT_EQ(posts[0].outcome, AttemptOutcome::kSkipped);
  EXPECT_EQ(posts[0].reason, "cap reached");
  EXPECT_EQ(store_.post_intents_written(), 1);  // only the sale's
}

void daily_budget_of_20(Buyer& b) { b.caps = {{"daily_budget_cents", 2000}}; }

// A daily budget of 20.00 counts the prices of the buyer's sales since its local midnight: the
// post intent reserves the price with the store, a bid past what is left goes to the next bidder,
// a bid that fits exactly sells, and a spent budget keeps the buyer out of the next auctions
// (without a ping) until the next day.
TEST_F(DistributorTest, ADailyBudgetIsSpentToTheCentAndThenTheBuyerSitsOutUntilTomorrow) {
  const Buyer budgeted = add_buyer("budgeted", daily_budget_of_20), open = add_buyer("open");
  http_.answer(budgeted.post_url, FakeAnswer::accept());
  http_.answer(open.ping_url, FakeAnswer::bid(1.00));
  http_.answer(open.post_url, FakeAnswer::accept());
  auto decide_and_record = [&](int n) {
    const Lead lead = add_lead(n);
    Distribution d = distributor().decide_and_wait(lead);
    const std::vector<OutcomeRecord> outcome{{lead.id, d}};
    EXPECT_EQ(store_.record_outcomes(outcome), std::vector<StoreStatus>{StoreStatus::kOk});
    return d;
  };

  http_.answer(budgeted.ping_url, FakeAnswer::bid(15.00));
  const Distribution first = decide_and_record(1);
  EXPECT_EQ(first.buyer_id, budgeted.id);  // 15.00 of 20.00 spent

  const Distribution second = decide_and_record(2);  // 15.00 more would pass the budget
  EXPECT_EQ(second.buyer_id, open.id);
  const auto posts = attempts_of(second, AttemptKind::kPost);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].buyer_id, budgeted.id);
  EXPECT_EQ(posts[0].outcome, AttemptOutcome::kSkipped);
  EXPECT_EQ(posts[0].reason, "budget reached");

  http_.answer(budgeted.ping_url, FakeAnswer::bid(5.00));
  const Distribution third = decide_and_record(3);  // exactly the 5.00 left
  EXPECT_EQ(third.buyer_id, budgeted.id);
  EXPECT_EQ(third.price, 500);

  const std::size_t pings_before = http_.count(budgeted.ping_url);
  const Distribution fourth = decide_and_record(4);
  EXPECT_EQ(fourth.buyer_id, open.id);
  EXPECT_EQ(ineligible_reason(fourth, budgeted.id), "budget:daily");
  EXPECT_EQ(http_.count(budgeted.ping_url), pings_before) << "a spent budget is not pinged";

  clock_.advance(24h);
  const Distribution next_day = decide_and_record(5);
  EXPECT_EQ(next_day.buyer_id, budgeted.id);
}

void hourly_cap_of_one_on_lord_howe(Buyer& b) {
  b.caps = {{"hourly", 1}};
  // Open all day, every day, in the stored form (seven days, each with its ranges).
  json hours = json::object();
  for (const char* day : {"mon", "tue", "wed", "thu", "fri", "sat", "sun"})
    hours[day] = json::array({json::array({"00:00", "24:00"})});
  b.schedule = {{"timezone", "Australia/Lord_Howe"}, {"hours", hours}};
}

// An hourly cap counts in the buyer's local hours, each at one offset. On 2026-04-05 Lord Howe
// falls back from 02:00 +11:00 to 01:30 +10:30: the repeated half hour (15:00-15:30 UTC) is an
// hour of its own, so a buyer capped at one sale an hour that bought at 01:40 +11:00 buys again at
// 01:40 +10:30, not again in that half hour, and again from 02:00 +10:30.
TEST_F(DistributorTest, AnHourlyCapCountsTheHalfHourLordHoweRepeatsAsAnHourOfItsOwn) {
  const Buyer capped = add_buyer("capped", hourly_cap_of_one_on_lord_howe);
  const Buyer open = add_buyer("open");
  http_.answer(capped.ping_url, FakeAnswer::bid(15.00));
  http_.answer(capped.post_url, FakeAnswer::accept());
  http_.answer(open.ping_url, FakeAnswer::bid(1.00));
  http_.answer(open.post_url, FakeAnswer::accept());
  auto decide_and_record = [&](int n) {
    const Lead lead = add_lead(n);
    Distribution d = distributor().decide_and_wait(lead);
    const std::vector<OutcomeRecord> outcome{{lead.id, d}};
    EXPECT_EQ(store_.record_outcomes(outcome), std::vector<StoreStatus>{StoreStatus::kOk});
    return d;
  };
  const auto at = [&](const char* utc) {
    clock_.advance(std::chrono::milliseconds(*parse_rfc3339_ms(utc) - clock_.now_ms()));
  };

  at("2026-04-04T14:40:00Z");  // 01:40 +11:00
  EXPECT_EQ(decide_and_record(1).buyer_id, capped.id);
  at("2026-04-04T14:50:00Z");  // 01:50 +11:00: same hour, capped
  const Distribution same_hour = decide_and_record(2);
  EXPECT_EQ(same_hour.buyer_id, open.id);
  EXPECT_EQ(ineligible_reason(same_hour, capped.id), "cap:hourly");
  at("2026-04-04T15:10:00Z");  // 01:40 +10:30: the repeated half hour, a new hour
  EXPECT_EQ(decide_and_record(3).buyer_id, capped.id);
  at("2026-04-04T15:20:00Z");  // 01:50 +10:30
  const Distribution repeated = decide_and_record(4);
  EXPECT_EQ(repeated.buyer_id, open.id);
  EXPECT_EQ(ineligible_reason(repeated, capped.id), "cap:hourly");
  at("2026-04-04T15:35:00Z");  // 02:05 +10:30
  EXPECT_EQ(decide_and_record(5).buyer_id, capped.id);
}

TEST_F(DistributorTest, APostIntentTheStoreCouldNotTakeIsTriedAgainAndTheBestBidStillWins) {
  const Buyer first = add_buyer("first"), second = add_buyer("second");
  http_.answer(first.ping_url, FakeAnswer::bid(25.00));
  http_.answer(first.post_url, FakeAnswer::accept());
  http_.answer(second.ping_url, FakeAnswer::bid(10.00));
  http_.answer(second.post_url, FakeAnswer::accept());
  store_.fail_next_post_intents(2);  // the store cannot answer for a moment

  const Distribution d = distributor().decide_and_wait(add_lead(8));

  // Our store's hiccup is not the buyer's refusal: the intent is written again after a pause
  // (200 ms, twice), and only then is the best bidder posted.
  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, first.id);
  EXPECT_EQ(http_.count(second.post_url), 0u);
  const auto posts = http_.requests_to(first.post_url);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].at, 400ms);
  EXPECT_EQ(store_.post_intents_written(), 1);
}

TEST_F(DistributorTest, AStoreThatCannotTakeAnyPostIntentNeverDecidesTheLead) {
  const Buyer first = add_buyer("first"), second = add_buyer("second");
  http_.answer(first.ping_url, FakeAnswer::bid(25.00));
  http_.answer(first.post_url, FakeAnswer::accept());
  http_.answer(second.ping_url, FakeAnswer::bid(10.00));
  http_.answer(second.post_url, FakeAnswer::accept());
  store_.fail_next_post_intents(1'000'000);  // down for the whole auction
  const Lead lead = add_lead(13);

  // Without a durable intent a crash could sell the lead twice, so nobody is posted; and since
  // no buyer refused it, it is not unsold either: it goes back for a later attempt.
  EXPECT_THROW(distributor().decide_and_wait(lead), AuctionDeferred);
  EXPECT_EQ(http_.count(first.post_url) + http_.count(second.post_url), 0u);
  EXPECT_EQ(store_.post_intents_written(), 0);
}

void slow_timeout(Buyer& b) { b.timeout_ms = 3000; }

TEST_F(DistributorTest, TheAuctionDeadlineEndsWaitingForPingsAndSkipsThePosts) {
  options_.auction_timeout = 1s;
  const Buyer slow = add_buyer("slow", slow_timeout), quick = add_buyer("quick");
  http_.answer(slow.ping_url, FakeAnswer::bid(50.00, 2s));
  http_.answer(quick.ping_url, FakeAnswer::bid(8.00, 10ms));
  http_.answer(quick.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(9));

  EXPECT_EQ(clock_.elapsed(), 1s);
  EXPECT_EQ(d.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(http_.count(quick.post_url), 0u);
  bool slow_timed_out = false, quick_skipped = false;
  for (const auto& a : d.attempts) {
    if (a.buyer_id == slow.id && a.kind == AttemptKind::kPing)
      slow_timed_out = a.outcome == AttemptOutcome::kTimeout && a.reason == "auction deadline";
    if (a.buyer_id == quick.id && a.kind == AttemptKind::kPost)
      quick_skipped = a.outcome == AttemptOutcome::kSkipped && a.reason == "auction deadline";
  }
  EXPECT_TRUE(slow_timed_out);
  EXPECT_TRUE(quick_skipped);
}

void short_timeout(Buyer& b) { b.timeout_ms = 200; }

TEST_F(DistributorTest, ASlowBuyerTimesOutOnItsOwnTimeoutAndTheOthersStillSell) {
  const Buyer slow = add_buyer("slow", short_timeout), quick = add_buyer("quick");
  http_.answer(slow.ping_url, FakeAnswer::bid(50.00, 2s));
  http_.answer(quick.ping_url, FakeAnswer::bid(8.00));
  http_.answer(quick.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(10));

  EXPECT_EQ(d.buyer_id, quick.id);
  EXPECT_EQ(clock_.elapsed(), 200ms);  // did not wait for the slow buyer's answer
  const auto pings = attempts_of(d, AttemptKind::kPing);
  bool slow_timed_out = false;
  for (const auto& a : pings)
    if (a.buyer_id == slow.id)
      slow_timed_out = a.outcome == AttemptOutcome::kTimeout && a.duration_ms == 200;
  EXPECT_TRUE(slow_timed_out);
}

TEST_F(DistributorTest, AFailingBuyerSitsOutForTheCoolDownThenComesBack) {
  const Buyer broken = add_buyer("broken"), steady = add_buyer("steady");
  http_.answer(broken.ping_url, FakeAnswer::http_error(503));
  http_.answer(steady.ping_url, FakeAnswer::bid(8.00));
  http_.answer(steady.post_url, FakeAnswer::accept());
  auto& pauses = worker_metrics().buyer_pauses.Add({{"buyer_id", broken.id}});
  const double paused_before = pauses.Value();

  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(distributor().decide_and_wait(add_lead(100 + i)).buyer_id, steady.id);
  EXPECT_EQ(pauses.Value(), paused_before + 1);  // 10 known, all failed

  const Distribution d = distributor().decide_and_wait(add_lead(110));
  EXPECT_EQ(http_.count(broken.ping_url), 10u);  // sat this one out
  bool unhealthy = false;
  for (const auto& i : d.ineligible)
    unhealthy = unhealthy || (i.buyer_id == broken.id && i.reason == "unhealthy");
  EXPECT_TRUE(unhealthy);

  clock_.advance(30s);
  distributor().decide_and_wait(add_lead(111));
  EXPECT_EQ(http_.count(broken.ping_url), 11u);  // back after the cool-down
}

TEST_F(DistributorTest, ARequestOurClientNeverSentDoesNotCountAgainstTheBuyer) {
  const Buyer queued = add_buyer("queued"), steady = add_buyer("steady");
  http_.answer(queued.ping_url, FakeAnswer::not_sent(100ms));
  http_.answer(steady.ping_url, FakeAnswer::bid(8.00));
  http_.answer(steady.post_url, FakeAnswer::accept());
  auto& pauses = worker_metrics().buyer_pauses.Add({{"buyer_id", queued.id}});
  const double paused_before = pauses.Value();

  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(distributor().decide_and_wait(add_lead(200 + i)).buyer_id, steady.id);

  // Twelve pings that never left our process: the buyer did nothing, so it is never paused.
  EXPECT_EQ(pauses.Value(), paused_before);
  EXPECT_EQ(http_.count(queued.ping_url), 12u);
}

// Buyers the store could not list are not "no buyer": a worker that never read them defers the
// lead instead of recording it unsold; one that read them keeps those until a list succeeds.
TEST_F(DistributorTest, BuyersTheStoreCannotListAreNotNoBuyer) {
  const Buyer a = add_buyer("a");
  http_.answer(a.ping_url, FakeAnswer::bid(8.00));
  http_.answer(a.post_url, FakeAnswer::accept());
  store_.fail_next_buyer_lists(1);
  const Lead first = add_lead(310);
  EXPECT_THROW(distributor().decide_and_wait(first), AuctionDeferred);
  EXPECT_EQ(http_.requests().size(), 0u);

  // Read once, the buyers stay while a later list fails (a new buyer moved the version).
  EXPECT_EQ(distributor().decide_and_wait(first).status, DeliveryStatus::kDelivered);
  add_buyer("b");
  clock_.advance(std::chrono::seconds(1));  // past the directory's refresh
  store_.fail_next_buyer_lists(1);
  const auto kept = buyers_.snapshot();
  ASSERT_NE(kept, nullptr);
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ(kept->front().id, a.id);
  clock_.advance(std::chrono::seconds(1));
  EXPECT_EQ(buyers_.snapshot()->size(), 2u);  // the version is asked again, and listed whole
}

// A payout rule the store cannot read is not the default rule: the lead is deferred (nobody
// asked, nothing written) rather than sold with a guessed seller payout; a rule read before is
// used however old it is.
TEST_F(DistributorTest, ASellerRuleTheStoreCannotReadDefersTheLead) {
  Seller s;
  s.id = "sl_test";
  s.name = "Fixed Seller";
  s.created_at_ms = clock_.now_ms();
  s.payout_fixed = true;
  s.payout_value = 300;  // $3.00 a lead, not the default 70%
  ASSERT_EQ(store_.insert_seller(s), StoreStatus::kOk);
  const Buyer a = add_buyer("a");
  http_.answer(a.ping_url, FakeAnswer::bid(8.00));
  http_.answer(a.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(320);

  store_.fail_next_account_reads(1);
  EXPECT_THROW(distributor().decide_and_wait(lead), AuctionDeferred);
  EXPECT_EQ(http_.requests().size(), 0u);
  EXPECT_EQ(store_.post_intents_written(), 0);
  EXPECT_EQ(store_.get_lead(lead.id).value->distribution.status, DeliveryStatus::kPending);

  const Distribution sold = distributor().decide_and_wait(lead);
  ASSERT_EQ(sold.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(sold.price, 800);
  EXPECT_EQ(sold.payout, 300);

  // Past the directory's 5 s: a read that fails now gets the rule last read.
  clock_.advance(std::chrono::seconds(10));
  store_.fail_next_account_reads(1);
  const Distribution next = distributor().decide_and_wait(add_lead(321));
  ASSERT_EQ(next.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(next.payout, 300);
}

TEST_F(DistributorTest, ACampaignRuleTheStoreCannotReadDefersTheLead) {
  Campaign c;
  c.id = "cp_fixed";
  c.seller_id = "sl_test";
  c.name = "fixed";
  c.vertical = "auto_insurance";
  c.key_hash = "hash-of-cp-fixed";
  c.key_hint = "lfc_fixd";
  c.created_at_ms = clock_.now_ms();
  c.payout_fixed = true;
  c.payout_value = 250;
  Seller s;
  s.id = "sl_test";
  s.name = "Seller";
  ASSERT_EQ(store_.insert_seller(s), StoreStatus::kOk);
  ASSERT_EQ(store_.insert_campaign(c), StoreStatus::kOk);
  const Buyer a = add_buyer("a");
  http_.answer(a.ping_url, FakeAnswer::bid(8.00));
  http_.answer(a.post_url, FakeAnswer::accept());
  Lead lead = sample_core_lead(330, clock_.now_ms());
  lead.campaign_id = c.id;
  lead.surface = Surface::kCampaign;
  ASSERT_EQ(store_.insert_leads(std::vector<Lead>{lead}).size(), 1u);

  store_.fail_next_account_reads(1);
  EXPECT_THROW(distributor().decide_and_wait(lead), AuctionDeferred);
  EXPECT_EQ(http_.requests().size(), 0u);
  EXPECT_EQ(store_.post_intents_written(), 0);
  EXPECT_EQ(store_.get_lead(lead.id).value->distribution.status, DeliveryStatus::kPending);

  const Distribution sold = distributor().decide_and_wait(lead);
  ASSERT_EQ(sold.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(sold.payout, 250);
}

// Our own failure never decides a lead: when every request that could have sold it never left
// this process, the lead is deferred (delivered again later), not recorded unsold.
TEST_F(DistributorTest, ALeadNobodyCouldBeAskedAboutIsDeferredNotUnsold) {
  const Buyer a = add_buyer("a"), b = add_buyer("b");
  http_.answer(a.ping_url, FakeAnswer::not_sent());
  http_.answer(b.ping_url, FakeAnswer::not_sent());
  const Lead lead = add_lead(300);
  EXPECT_THROW(distributor().decide_and_wait(lead), AuctionDeferred);

  // Once the requests go out, the same lead sells.
  http_.answer(a.ping_url, FakeAnswer::bid(8.00));
  http_.answer(a.post_url, FakeAnswer::accept());
  http_.answer(b.ping_url, FakeAnswer::no_bid());
  EXPECT_EQ(distributor().decide_and_wait(lead).status, DeliveryStatus::kDelivered);
}

TEST_F(DistributorTest, TheSamePersonAgainIsADuplicateAndNobodyIsAsked) {
  const Buyer b = add_buyer("b");
  http_.answer(b.ping_url, FakeAnswer::bid(8.00));
  http_.answer(b.post_url, FakeAnswer::accept());
  const Lead first = add_lead(12);
  ASSERT_EQ(distributor().decide_and_wait(first).status, DeliveryStatus::kDelivered);
  Lead again = sample_core_lead(12, clock_.now_ms());
  const std::vector<Lead> one{again};
  ASSERT_EQ(store_.insert_leads(one).size(), 1u);
  const std::size_t sent = http_.requests().size();

  const Distribution d = distributor().decide_and_wait(again);

  EXPECT_EQ(d.status, DeliveryStatus::kDuplicate);
  EXPECT_EQ(d.reason, "duplicate of " + first.id);
  EXPECT_EQ(http_.requests().size(), sent);
}

TEST_F(DistributorTest, RunsManyAuctionsAtOnceOnOneLoop) {
  const Buyer slow = add_buyer("slow"), slower = add_buyer("slower");
  http_.answer(slow.ping_url, FakeAnswer::bid(9.00, 300ms));
  http_.answer(slower.ping_url, FakeAnswer::bid(11.00, 500ms));
  http_.answer(slower.post_url, FakeAnswer::accept("s-1", 500ms));
  std::vector<Lead> leads;
  for (int i = 0; i < 300; ++i) leads.push_back(add_lead(1000 + i));

  std::mutex mu;
  std::condition_variable cv;
  std::vector<Decision> decisions;
  for (const Lead& l : leads) {
    distributor().decide(l, [&](Decision d) {
      std::lock_guard lock(mu);
      decisions.push_back(std::move(d));
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 60s, [&] { return decisions.size() == leads.size(); }));

  for (const Decision& d : decisions) {
    ASSERT_EQ(d.kind, Decision::Kind::kDecided) << d.error;
    EXPECT_EQ(d.distribution.status, DeliveryStatus::kDelivered);
    EXPECT_EQ(d.distribution.buyer_id, slower.id);
  }
  EXPECT_EQ(http_.count(slower.post_url), leads.size());
  // One auction takes 1 s (a 500 ms ping, then a 500 ms post); 300 of them one after the other
  // would take 300 s. They overlap: the whole run takes little more than one auction.
  EXPECT_GE(clock_.elapsed(), 1s);
  EXPECT_LT(clock_.elapsed(), 3s);
}

}  // namespace
}  // namespace leadflow::testing

namespace leadflow::testing {
namespace {

// ------------------------------------------------------------------------------------------------
// The ping tree: tier 1 first, the next tier only when a tier does not sell, one deadline.
// ------------------------------------------------------------------------------------------------

void tier_2(Buyer& b) { b.tier = 2; }
void tier_3(Buyer& b) { b.tier = 3; }

std::vector<std::pair<std::string, int>> tiers_of(const Distribution& d) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& a : d.attempts)
    out.emplace_back(std::string(to_string(a.kind)) + ":" + a.buyer_id, a.tier);
  return out;
}

TEST_F(DistributorTest, TierTwoIsNotPingedWhenTierOneSells) {
  const Buyer first = add_buyer("first"), also = add_buyer("also");
  const Buyer lower = add_buyer("lower", tier_2);
  http_.answer(first.ping_url, FakeAnswer::bid(12.00, 50ms));
  http_.answer(also.ping_url, FakeAnswer::bid(9.00, 80ms));
  http_.answer(first.post_url, FakeAnswer::accept());
  http_.answer(lower.ping_url, FakeAnswer::bid(40.00));  // more, but asked only if tier 1 fails
  http_.answer(lower.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(300));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, first.id);
  EXPECT_EQ(d.price, 1200);
  EXPECT_EQ(http_.count(lower.ping_url), 0u);
  EXPECT_EQ(ineligible_reason(d, lower.id), "");  // eligible, just not needed
  ASSERT_EQ(d.attempts.size(), 3u);
  for (const auto& a : d.attempts) EXPECT_EQ(a.tier, 1) << a.buyer_id;
  // Inside a tier, the ping/post auction is as before: both at once, the best bid posted.
  EXPECT_EQ(clock_.elapsed(), 80ms);
}

TEST_F(DistributorTest, TierTwoIsAskedAndSellsWhenTierOneDoesNotBid) {
  const Buyer upper = add_buyer("upper"), lower = add_buyer("lower", tier_2);
  http_.answer(upper.ping_url, FakeAnswer::no_bid(100ms));
  http_.answer(lower.ping_url, FakeAnswer::bid(7.00, 30ms));
  http_.answer(lower.post_url, FakeAnswer::accept("low-1", 20ms));

  const Distribution d = distributor().decide_and_wait(add_lead(301));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, lower.id);
  EXPECT_EQ(d.price, 700);
  const auto pings = http_.requests_to(lower.ping_url);
  ASSERT_EQ(pings.size(), 1u);
  EXPECT_EQ(pings[0].at, 100ms);  // once tier 1 had answered
  EXPECT_EQ(clock_.elapsed(), 150ms);
  const std::vector<std::pair<std::string, int>> expected = {
      {"ping:" + upper.id, 1}, {"ping:" + lower.id, 2}, {"post:" + lower.id, 2}};
  EXPECT_EQ(tiers_of(d), expected);
  EXPECT_EQ(d.attempts[0].outcome, AttemptOutcome::kNoBid);
}

void min_bid_10(Buyer& b) { b.min_bid = 1000; }

TEST_F(DistributorTest, TierTwoIsAskedWhenTierOneBidsUnderItsMinBid) {
  const Buyer upper = add_buyer("upper", min_bid_10), lower = add_buyer("lower", tier_2);
  http_.answer(upper.ping_url, FakeAnswer::bid(8.00));
  http_.answer(upper.post_url, FakeAnswer::accept());
  http_.answer(lower.ping_url, FakeAnswer::bid(5.00));
  http_.answer(lower.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(302));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, lower.id);
  EXPECT_EQ(d.price, 500);
  EXPECT_EQ(http_.count(upper.post_url), 0u);
  ASSERT_FALSE(d.attempts.empty());
  EXPECT_EQ(d.attempts[0].buyer_id, upper.id);
  EXPECT_EQ(d.attempts[0].reason, "below min_bid");
  EXPECT_EQ(d.attempts[0].tier, 1);
}

TEST_F(DistributorTest, TierTwoIsAskedWhenEveryPostOfTierOneIsRefused) {
  const Buyer best = add_buyer("best"), next = add_buyer("next");
  const Buyer lower = add_buyer("lower", tier_2);
  http_.answer(best.ping_url, FakeAnswer::bid(20.00));
  http_.answer(best.post_url, FakeAnswer::reject("not this one", 100ms));
  http_.answer(next.ping_url, FakeAnswer::bid(15.00));
  http_.answer(next.post_url, FakeAnswer::http_error(503, 100ms));
  http_.answer(lower.ping_url, FakeAnswer::bid(30.00));
  http_.answer(lower.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(303));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, lower.id);
  EXPECT_EQ(d.price, 3000);
  const auto posts = attempts_of(d, AttemptKind::kPost);
  ASSERT_EQ(posts.size(), 3u);
  EXPECT_EQ(posts[0].buyer_id, best.id);
  EXPECT_EQ(posts[1].buyer_id, next.id);
  EXPECT_EQ(posts[2].buyer_id, lower.id);
  EXPECT_EQ(posts[2].tier, 2);
  // The lower tier's ping went out only once tier 1's last post was refused (100 ms each).
  const auto ping = http_.requests_to(lower.ping_url);
  ASSERT_EQ(ping.size(), 1u);
  EXPECT_EQ(ping[0].at, 200ms);
}

TEST_F(DistributorTest, TierTwoIsAskedWhenTierOneTimesOut) {
  const Buyer upper = add_buyer("upper"), lower = add_buyer("lower", tier_2);
  http_.answer(upper.ping_url, FakeAnswer::no_answer());  // times out after its 1 s
  http_.answer(lower.ping_url, FakeAnswer::bid(6.00));
  http_.answer(lower.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(304));

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, lower.id);
  ASSERT_EQ(http_.requests_to(lower.ping_url).size(), 1u);
  EXPECT_EQ(http_.requests_to(lower.ping_url)[0].at, 1s);
  ASSERT_FALSE(d.attempts.empty());
  EXPECT_EQ(d.attempts[0].outcome, AttemptOutcome::kTimeout);
  EXPECT_EQ(d.attempts[0].tier, 1);
}

void slow_3s(Buyer& b) {
  b.tier = 2;
  b.timeout_ms = 3000;
}

TEST_F(DistributorTest, OneDeadlineCoversEveryTier) {
  options_.auction_timeout = 2500ms;
  const Buyer upper = add_buyer("upper"), middle = add_buyer("middle", slow_3s);
  const Buyer bottom = add_buyer("bottom", tier_3);
  http_.answer(upper.ping_url, FakeAnswer::no_answer());   // 0 to 1 s
  http_.answer(middle.ping_url, FakeAnswer::no_answer());  // 1 s to its 3 s timeout, cut at 2.5 s
  http_.answer(bottom.ping_url, FakeAnswer::bid(50.00));
  http_.answer(bottom.post_url, FakeAnswer::accept());

  const Distribution d = distributor().decide_and_wait(add_lead(305));

  EXPECT_EQ(d.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(clock_.elapsed(), 2500ms);
  // Tier 2 had only what tier 1 left of the auction's 2.5 s, not its own 3 s.
  const auto middle_pings = attempts_of(d, AttemptKind::kPing);
  ASSERT_EQ(middle_pings.size(), 2u);
  EXPECT_EQ(middle_pings[1].buyer_id, middle.id);
  EXPECT_EQ(middle_pings[1].outcome, AttemptOutcome::kTimeout);
  EXPECT_EQ(middle_pings[1].reason, "auction deadline");
  EXPECT_EQ(middle_pings[1].tier, 2);
  // No time was left for tier 3: never pinged, and the lead says why.
  EXPECT_EQ(http_.count(bottom.ping_url), 0u);
  EXPECT_EQ(ineligible_reason(d, bottom.id), "auction_deadline");
}

// A loaded worker: the lead's own store reads wait behind thousands of other auctions' for longer
// than an auction's deadline. That wait is ours, not the buyers': the deadline counts from when
// the auction is ready to ask its first buyer, so the lead is still sold, not decided unsold.
TEST_F(DistributorTest, TimeTheLeadWaitedForOurStoreIsNotTheBuyersTime) {
  options_.auction_timeout = 1s;
  const Buyer buyer = add_buyer("patient");
  http_.answer(buyer.ping_url, FakeAnswer::bid(20.00, 100ms));
  http_.answer(buyer.post_url, FakeAnswer::accept("patient-1", 50ms));
  const Lead lead = add_lead(306);
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Decision> decision;
  distributor();
  store_.hold_calls();
  distributor().decide(lead, [&](Decision d) {
    std::lock_guard lock(mu);
    decision = std::move(d);
    cv.notify_all();
  });
  for (int i = 0; i < 10'000 && store_.held_calls() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // real time: the loop's thread
  ASSERT_GT(store_.held_calls(), 0);
  clock_.advance(5s);  // five deadlines pass while the auction's first read waits
  store_.release_calls();
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 60s, [&] { return decision.has_value(); }));
  ASSERT_EQ(decision->kind, Decision::Kind::kDecided) << decision->error;
  const Distribution& d = decision->distribution;
  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, buyer.id);
  EXPECT_EQ(ineligible_reason(d, buyer.id), "");
  ASSERT_EQ(http_.requests_to(buyer.ping_url).size(), 1u);
  EXPECT_EQ(http_.requests_to(buyer.ping_url)[0].at, 5s);
  EXPECT_EQ(clock_.elapsed(), 5s + 150ms);
}

// The worker holds new auctions back while the auctions' store work waits for a thread: the
// distributor says how long the oldest has waited, on its clock.
TEST_F(DistributorTest, SaysHowLongItsStoreWorkHasWaitedForAThread) {
  options_.store_threads = 1;
  add_buyer("any");
  const Lead first = add_lead(307), second = add_lead(308);
  std::atomic<int> decided{0};
  EXPECT_EQ(distributor().own_backlog(), 0ms);
  store_.hold_calls();
  // Both auctions ask for their store reads now: one takes the one thread (held by the store),
  // the other waits for it.
  distributor().decide(first, [&](Decision) { ++decided; });
  distributor().decide(second, [&](Decision) { ++decided; });
  clock_.advance(2s);
  EXPECT_EQ(distributor().own_backlog(), 2000ms);
  store_.release_calls();
  for (int i = 0; i < 10'000 && decided.load() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(decided.load(), 2);
  EXPECT_EQ(distributor().own_backlog(), 0ms);
}

// Thousands of auctions taken in at once join the store's queue before any of them has waited:
// the pool expects a queue that just formed to wait as long as its tasks will take to run.
TEST(BlockingPoolTest, ExpectsAQueueThatJustFormedToWaitAsLongAsItsTasksTake) {
  BlockingPool pool(1);
  std::atomic<int> ran{0};
  for (int i = 0; i < 8; ++i)
    pool.run([&] {
      std::this_thread::sleep_for(20ms);
      ++ran;
    });
  for (int i = 0; i < 10'000 && ran.load() < 8; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(ran.load(), 8);
  EXPECT_EQ(pool.expected_wait(), 0ns);  // none waits

  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  pool.run([&] {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return go; });
  });
  for (int i = 0; i < 50; ++i) pool.run([&] { ++ran; });
  // 50 tasks waiting at 20 ms each, as far as the pool has learnt (at least 13 ms after 8).
  EXPECT_GE(pool.expected_wait(), 500ms);
  {
    std::lock_guard lock(mu);
    go = true;
  }
  cv.notify_all();
  for (int i = 0; i < 10'000 && ran.load() < 58; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(ran.load(), 58);
  EXPECT_EQ(pool.expected_wait(), 0ns);
}

// A loop that ran late finds a buyer's answer posted and the auction's timer due at once: the
// answer, which reached the loop first, runs first, so our lateness never cuts it.
TEST(EventLoopTest, WhatWasPostedBeforeATimerWasDueRunsBeforeIt) {
  SimulatedClock clock;
  EventLoop loop(clock, 1);
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false, go = false;
  std::vector<std::string> ran;
  loop.post([&] {
    loop.at(clock.steady_now() + 100ms, [&] {
      std::lock_guard lock(mu);
      ran.push_back("timer");
    });
    std::unique_lock lock(mu);
    armed = true;
    cv.notify_all();
    cv.wait(lock, [&] { return go; });  // the loop is busy: late for what comes next
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return armed; });
  }
  loop.post([&] {
    std::lock_guard lock(mu);
    ran.push_back("answer");
  });
  clock.advance(200ms);  // the timer is due while the answer waits for the loop
  {
    std::lock_guard lock(mu);
    go = true;
  }
  cv.notify_all();
  for (int i = 0; i < 10'000; ++i) {
    {
      std::lock_guard lock(mu);
      if (ran.size() == 2) break;
    }
    std::this_thread::sleep_for(1ms);
  }
  std::lock_guard lock(mu);
  EXPECT_EQ(ran, (std::vector<std::string>{"answer", "timer"}));
}

// A ping that waited in our client's queue for a connection, and never went out: all of its
// time was ours, not the buyer's. The next answer, with no wait of ours, clears it.
TEST_F(DistributorTest, CountsTheTimeARequestWaitedForAConnectionAsItsOwn) {
  const Buyer buyer = add_buyer("queued");
  http_.answer(buyer.ping_url, FakeAnswer::not_sent(900ms));  // within its 1 s timeout
  EXPECT_THROW(distributor().decide_and_wait(add_lead(309)), AuctionDeferred);
  EXPECT_EQ(distributor().own_backlog(), 900ms);

  http_.answer(buyer.ping_url, FakeAnswer::no_bid(100ms));
  EXPECT_EQ(distributor().decide_and_wait(add_lead(310)).status, DeliveryStatus::kUnsold);
  EXPECT_EQ(distributor().own_backlog(), 0ms);
}

// A ping still in our client's queue well past its 1 s timeout never reached the buyer in the
// buyer's time (our client answers a ping sent at once within its timeout): it is no timeout of
// the buyer's, and the auction does not wait out its deadline for it. Nobody else bought the
// lead, so it goes back for a later attempt instead of being decided unsold.
TEST_F(DistributorTest, APingHeldUpInOurQueueDelaysTheLead) {
  options_.auction_timeout = 3s;
  const Buyer held = add_buyer("held"), declines = add_buyer("declines");
  http_.answer(held.ping_url, FakeAnswer::not_sent(30s));  // our queue gives up after 30 s
  http_.answer(declines.ping_url, FakeAnswer::no_bid(10ms));

  EXPECT_THROW(distributor().decide_and_wait(add_lead(311)), AuctionDeferred);
  EXPECT_EQ(clock_.elapsed(), 1250ms);          // the timeout and 250 ms for our client to say so
  EXPECT_EQ(distributor().times_behind(), 1u);  // the worker lets fewer auctions run at once
}

// A ping that timed out while this process was starved of CPU may have had its answer on the
// way: nothing certain about the buyer, so the lead nobody bought is delayed, not unsold.
TEST_F(DistributorTest, APingTimedOutWhileThisProcessStalledDelaysTheLead) {
  const Buyer buyer = add_buyer("starved");
  FakeAnswer stalled = FakeAnswer::no_answer();
  stalled.stalled = true;
  http_.answer(buyer.ping_url, stalled);
  EXPECT_THROW(distributor().decide_and_wait(add_lead(314)), AuctionDeferred);
  EXPECT_EQ(distributor().times_behind(), 1u);

  http_.answer(buyer.ping_url, FakeAnswer::no_answer());  // a timeout of the buyer's own
  EXPECT_EQ(distributor().decide_and_wait(add_lead(315)).status, DeliveryStatus::kUnsold);
  EXPECT_EQ(distributor().times_behind(), 1u);
}

// A ping that waited 1 s in our queue and then took its buyer 800 ms, within the buyer's 1 s:
// the auction stops waiting for it 1.25 s after asking (the timeout and our client's margin)
// and sells to the buyer that answered; the late ping is recorded as skipped for our reason,
// not as the buyer's timeout.
TEST_F(DistributorTest, APingSentLateByOurQueueIsNotTheBuyersTimeout) {
  options_.auction_timeout = 3s;
  const Buyer held = add_buyer("held"), buys = add_buyer("buys");
  FakeAnswer late = FakeAnswer::bid(20.00, 800ms);
  late.queued = 1s;
  http_.answer(held.ping_url, late);
  http_.answer(buys.ping_url, FakeAnswer::bid(9.00, 10ms));
  http_.answer(buys.post_url, FakeAnswer::accept());
  auto& held_up = worker_metrics().buyer_requests.Add(
      {{"buyer_id", held.id}, {"kind", "ping"}, {"result", "held_up"}});
  const double held_up_before = held_up.Value();

  const Distribution d = distributor().decide_and_wait(add_lead(312));
  EXPECT_EQ(held_up.Value(), held_up_before + 1);
  EXPECT_EQ(distributor().times_behind(), 1u);

  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, buys.id);
  EXPECT_EQ(clock_.elapsed(), 1250ms);  // the post answered at once
  const auto pings = attempts_of(d, AttemptKind::kPing);
  ASSERT_EQ(pings.size(), 2u);
  const Attempt& cut = pings[0].buyer_id == held.id ? pings[0] : pings[1];
  EXPECT_EQ(cut.outcome, AttemptOutcome::kSkipped);
  EXPECT_EQ(cut.reason, "held up in this worker");
}

// The worker holds new auctions back while requests wait in our client's queue: the distributor
// reads that queue's oldest as it waits, not only from answers that waited in it.
TEST_F(DistributorTest, SaysHowLongARequestHasWaitedInItsClientsQueue) {
  distributor();
  EXPECT_EQ(distributor().own_backlog(), 0ms);
  HttpRequest queued;
  queued.url = "http://buyer.test/ping";
  http_.answer(queued.url, FakeAnswer::not_sent(30s));
  auto answer = http_.send(queued);
  clock_.advance(700ms);
  EXPECT_EQ(distributor().own_backlog(), 700ms);
  clock_.advance(30s);
  EXPECT_TRUE(answer.get().not_sent);
  EXPECT_EQ(distributor().own_backlog(), 0ms);
}

// A post that never reached the buyer (refused at connect) cannot have been taken: the next
// bidder is asked at once, instead of the lead failing at the deadline as an unknown outcome.
TEST_F(DistributorTest, APostRefusedAtConnectGoesToTheNextBidder) {
  const Buyer down = add_buyer("down", fixed_at_20), next = add_buyer("next");
  http_.answer(down.post_url, FakeAnswer::refused());
  http_.answer(next.ping_url, FakeAnswer::bid(9.00));
  http_.answer(next.post_url, FakeAnswer::accept());
  auto& metrics = worker_metrics();
  const double unknown_before = metrics.post_outcome_unknown.Value();
  const Distribution d = distributor().decide_and_wait(add_lead(308));
  EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d.buyer_id, next.id);
  EXPECT_EQ(http_.count(down.post_url), 1u);
  EXPECT_EQ(metrics.post_outcome_unknown.Value(), unknown_before);
  EXPECT_LT(clock_.elapsed(), 1s);
}

TEST_F(DistributorTest, AnUnansweredPostInTierOneIsNeverFollowedByTierTwo) {
  const Buyer upper = add_buyer("upper", fixed_at_20), lower = add_buyer("lower", tier_2);
  http_.answer(upper.post_url, FakeAnswer::no_answer());
  http_.answer(lower.ping_url, FakeAnswer::bid(30.00));
  http_.answer(lower.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(306);

  // The buyer may have taken the lead and only its answer is missing: the auction fails (the
  // lead goes to the retry topic with its intent) rather than offering it to a lower tier.
  EXPECT_THROW(distributor().decide_and_wait(lead), std::runtime_error);

  EXPECT_EQ(http_.count(lower.ping_url), 0u);
  EXPECT_EQ(http_.count(lower.post_url), 0u);
  EXPECT_EQ(http_.count(upper.post_url), 9u);  // asked again until the deadline, as in one tier
  const auto intent = store_.get_post_intent(lead.id).value;
  ASSERT_TRUE(intent);
  EXPECT_EQ(intent->buyer_id, upper.id);
}

TEST_F(DistributorTest, AttemptsKeepTheirTierInTheStoreAndTheLeadView) {
  const Buyer upper = add_buyer("upper"), lower = add_buyer("lower", tier_2);
  http_.answer(upper.ping_url, FakeAnswer::no_bid());
  http_.answer(lower.ping_url, FakeAnswer::bid(7.00));
  http_.answer(lower.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(307);
  const Distribution d = distributor().decide_and_wait(lead);
  const std::vector<OutcomeRecord> outcome{{lead.id, d}};
  ASSERT_EQ(store_.record_outcomes(outcome), std::vector<StoreStatus>{StoreStatus::kOk});

  const auto stored = store_.get_lead(lead.id).value;
  ASSERT_TRUE(stored);
  EXPECT_EQ(tiers_of(stored->distribution), tiers_of(d));
  const json view = lead_record_to_json(*stored, /*with_attempts=*/true);
  ASSERT_EQ(view["attempts"].size(), 3u);
  EXPECT_EQ(view["attempts"][0]["tier"], 1);
  EXPECT_EQ(view["attempts"][1]["tier"], 2);
  EXPECT_EQ(view["attempts"][2]["tier"], 2);
}

// ------------------------------------------------------------------------------------------------
// Buyer capacity: max_concurrency pings and posts in flight from this process.
// ------------------------------------------------------------------------------------------------

void two_at_once(Buyer& b) { b.max_concurrency = 2; }

TEST_F(DistributorTest, ABuyerAtItsMaxConcurrencySitsOutWithoutCountingAsAFailure) {
  const Buyer limited = add_buyer("limited", two_at_once), steady = add_buyer("steady");
  http_.answer(limited.ping_url, FakeAnswer::bid(20.00, 300ms));
  http_.answer(limited.post_url, FakeAnswer::accept());
  http_.answer(steady.ping_url, FakeAnswer::bid(10.00));
  http_.answer(steady.post_url, FakeAnswer::accept());
  auto& at_capacity = worker_metrics().buyer_at_capacity.Add({{"buyer_id", limited.id}});
  auto& pauses = worker_metrics().buyer_pauses.Add({{"buyer_id", limited.id}});
  std::vector<Lead> leads;
  for (int i = 0; i < 14; ++i) leads.push_back(add_lead(400 + i));

  const auto decisions = decide_at_once(leads);

  // Two auctions got the buyer's two slots; the other twelve found it at capacity.
  EXPECT_EQ(http_.count(limited.ping_url), 2u);
  int sat_out = 0, sold_to_limited = 0;
  for (const Decision& decision : decisions) {
    ASSERT_EQ(decision.kind, Decision::Kind::kDecided) << decision.error;
    const Distribution& d = decision.distribution;
    EXPECT_EQ(d.status, DeliveryStatus::kDelivered);
    if (d.buyer_id == limited.id) ++sold_to_limited;
    if (ineligible_reason(d, limited.id) == "at_capacity") {
      ++sat_out;
      EXPECT_EQ(d.buyer_id, steady.id);
      for (const auto& a : d.attempts) EXPECT_NE(a.buyer_id, limited.id);  // never asked
    }
  }
  EXPECT_EQ(sat_out, 12);
  EXPECT_EQ(sold_to_limited, 2);
  EXPECT_EQ(at_capacity.Value(), 12);

  // Twelve exclusions would pause a buyer if they counted as failures (10 known, half failed);
  // they do not, and the slots came back with the answers: the next auction asks it again.
  const Distribution next = distributor().decide_and_wait(add_lead(420));
  EXPECT_EQ(http_.count(limited.ping_url), 3u);
  EXPECT_EQ(next.buyer_id, limited.id);
  EXPECT_EQ(ineligible_reason(next, limited.id), "");
  EXPECT_EQ(pauses.Value(), 0);
}

void one_at_a_time_tier_2(Buyer& b) {
  b.max_concurrency = 1;
  b.tier = 2;
  b.timeout_ms = 3000;
}
void google_only(Buyer& b) { b.sources = {"google"}; }
void google_only_tier_2(Buyer& b) {
  b.sources = {"google"};
  b.tier = 2;
}
void bing_only(Buyer& b) { b.sources = {"bing"}; }

TEST_F(DistributorTest, APostToABidderGoesOutEvenWhenTheBuyerIsAtCapacity) {
  // Two auctions at once. A (google): tier 1 `first_a` passes; tier 2 is `limited` and `rich`,
  // whose post is refused at 600 ms, so A then posts `limited`. B (bing): tier 1 `first_b`
  // passes at 200 ms; tier 2 is `limited` alone, pinged at 200 ms (A's ping to it was answered
  // at 100 ms, so its one slot was free) and answering at 2.2 s.
  const Buyer first_a = add_buyer("first-a", google_only),
              first_b = add_buyer("first-b", bing_only);
  const Buyer limited = add_buyer("limited", one_at_a_time_tier_2);
  const Buyer rich = add_buyer("rich", google_only_tier_2);
  http_.answer(first_a.ping_url, FakeAnswer::no_bid());
  http_.answer(first_b.ping_url, FakeAnswer::no_bid(200ms));
  http_.answer_next(limited.ping_url, FakeAnswer::bid(20.00, 100ms));
  http_.answer(limited.ping_url, FakeAnswer::bid(20.00, 2000ms));
  http_.answer(limited.post_url, FakeAnswer::accept("lim", 10ms));
  http_.answer(rich.ping_url, FakeAnswer::bid(30.00, 50ms));
  http_.answer(rich.post_url, FakeAnswer::reject("full", 500ms));
  auto& at_capacity = worker_metrics().buyer_at_capacity.Add({{"buyer_id", limited.id}});
  const std::vector<Lead> leads = {add_lead(500, "google"), add_lead(501, "bing")};

  const auto decisions = decide_at_once(leads);

  ASSERT_EQ(decisions.size(), 2u);
  for (const Decision& decision : decisions) {
    ASSERT_EQ(decision.kind, Decision::Kind::kDecided) << decision.error;
    EXPECT_EQ(decision.distribution.buyer_id, limited.id);
    EXPECT_EQ(ineligible_reason(decision.distribution, limited.id), "");
  }
  const auto pings = http_.requests_to(limited.ping_url);
  ASSERT_EQ(pings.size(), 2u);
  EXPECT_EQ(pings[0].at, 0ms);
  EXPECT_EQ(pings[1].at, 200ms);  // B's, out until 2.2 s
  const auto posts = http_.requests_to(limited.post_url);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].at, 600ms);  // A's post, while B's ping held the buyer's only slot
  EXPECT_EQ(posts[1].at, 2200ms);
  EXPECT_EQ(at_capacity.Value(), 0);
}

}  // namespace
}  // namespace leadflow::testing

// --- shared sales -----------------------------------------------------------------------------

namespace leadflow::testing {
namespace {

class SharedSaleTest : public DistributorTest {
 protected:
  void SetUp() override {
    // auto_insurance leads may be sold to up to `max_sales` buyers; the seller earns 70%.
    ASSERT_EQ(verticals_.load_json(
                  json::parse(R"({"verticals": [{"name": "auto_insurance", "max_sales": 3}]})")),
              "");
    Seller s;
    s.id = "sl_test";
    s.name = "Test Seller";
    s.created_at_ms = clock_.now_ms();
    ASSERT_EQ(store_.insert_seller(s), StoreStatus::kOk);
  }

  std::vector<std::string> keys_posted(const Buyer& b) {
    std::vector<std::string> out;
    for (const auto& p : http_.requests_to(b.post_url)) out.push_back(p.header("Idempotency-Key"));
    return out;
  }
};

TEST_F(SharedSaleTest, SellsToTheBestSharesWhenTogetherTheyPayMoreThanTheBestBidAlone) {
  const Buyer a = add_buyer("a"), b = add_buyer("b"), c = add_buyer("c"), d = add_buyer("d");
  http_.answer(a.ping_url, FakeAnswer::bids(20.00, 9.01, 30ms));
  http_.answer(b.ping_url, FakeAnswer::bids(15.00, 8.00, 10ms));
  http_.answer(c.ping_url, FakeAnswer::bids(0, 7.00, 20ms));  // buys shares only
  http_.answer(d.ping_url, FakeAnswer::bids(5.00, 1.00));
  for (const Buyer* x : {&a, &b, &c, &d})
    http_.answer(x->post_url, FakeAnswer::accept(x->name + "-ref", 40ms));
  const Lead lead = add_lead(40);

  const Distribution out = distributor().decide_and_wait(lead);

  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  ASSERT_EQ(out.sales.size(), 3u);  // 9.01 + 8.00 + 7.00 = 24.01 > 20.00 alone
  EXPECT_EQ(out.sales[0].buyer_id, a.id);
  EXPECT_EQ(out.sales[0].price, 901);
  EXPECT_EQ(out.sales[0].buyer_lead_id, "a-ref");
  EXPECT_EQ(out.sales[1].buyer_id, b.id);
  EXPECT_EQ(out.sales[2].buyer_id, c.id);
  EXPECT_EQ(out.buyer_id, a.id);
  EXPECT_EQ(out.price, 2401);
  // The seller's rule on the total (70% of 24.01, rounded), spread over the sales to the cent.
  EXPECT_EQ(out.payout, 1681);
  EXPECT_EQ(out.sales[0].payout + out.sales[1].payout + out.sales[2].payout, 1681);
  EXPECT_EQ(http_.count(d.post_url), 0u);
  // The three posts left together, each with its own key and its own price.
  EXPECT_EQ(clock_.elapsed(), 70ms);
  EXPECT_EQ(keys_posted(a), std::vector<std::string>{lead.id + ":" + a.id});
  EXPECT_EQ(keys_posted(c), std::vector<std::string>{lead.id + ":" + c.id});
  EXPECT_EQ(json::parse(http_.requests_to(b.post_url)[0].request.body)["price"], 8.0);

  // Recorded, every sale enters the ledger and the lead adds up.
  std::vector<OutcomeRecord> batch{{lead.id, out}};
  ASSERT_EQ(store_.record_outcomes(batch)[0], StoreStatus::kOk);
  LedgerQuery q;
  q.lead_id = lead.id;
  const auto entries = store_.list_ledger(q);
  ASSERT_TRUE(entries && entries->size() == 3u);
  Cents revenue = 0, payout = 0;
  for (const auto& e : *entries) {
    revenue += e.revenue;
    payout += e.payout;
  }
  EXPECT_EQ(revenue, 2401);
  EXPECT_EQ(payout, 1681);
}

TEST_F(SharedSaleTest, SellsExclusivelyWhenTheBestBidAlonePaysMore) {
  const Buyer a = add_buyer("a"), b = add_buyer("b");
  http_.answer(a.ping_url, FakeAnswer::bids(30.00, 9.00));
  http_.answer(b.ping_url, FakeAnswer::bids(15.00, 8.00));
  http_.answer(a.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(41);

  const Distribution out = distributor().decide_and_wait(lead);

  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  ASSERT_EQ(out.sales.size(), 1u);
  EXPECT_EQ(out.buyer_id, a.id);
  EXPECT_EQ(out.price, 3000);
  EXPECT_EQ(keys_posted(a), std::vector<std::string>{lead.id});  // an exclusive post's key
  EXPECT_EQ(http_.count(b.post_url), 0u);
}

TEST_F(SharedSaleTest, ARefusedShareMakesRoomForTheNextBidderAndNoBuyerIsPostedTwice) {
  ASSERT_EQ(verticals_.load_json(
                json::parse(R"({"verticals": [{"name": "auto_insurance", "max_sales": 2}]})")),
            "");
  const Buyer a = add_buyer("a"), b = add_buyer("b"), c = add_buyer("c");
  http_.answer(a.ping_url, FakeAnswer::bids(20.00, 12.00));
  http_.answer(b.ping_url, FakeAnswer::bids(15.00, 11.00));
  http_.answer(c.ping_url, FakeAnswer::bids(10.00, 10.00));
  http_.answer(a.post_url, FakeAnswer::reject("not today", 10ms));
  http_.answer(b.post_url, FakeAnswer::accept("b-ref", 50ms));
  http_.answer(c.post_url, FakeAnswer::accept("c-ref", 10ms));
  const Lead lead = add_lead(42);

  const Distribution out = distributor().decide_and_wait(lead);

  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  ASSERT_EQ(out.sales.size(), 2u);
  EXPECT_EQ(out.sales[0].buyer_id, b.id);  // 11.00
  EXPECT_EQ(out.sales[1].buyer_id, c.id);  // 10.00, posted when a refused
  EXPECT_EQ(out.price, 2100);
  EXPECT_EQ(http_.count(a.post_url), 1u);  // refused its share: not offered the lead alone
  EXPECT_EQ(clock_.elapsed(), 50ms);       // c's post ran beside b's
}

TEST_F(SharedSaleTest, WhenNoShareSellsTheLeadIsOfferedAloneToTheBuyersNotYetPosted) {
  const Buyer a = add_buyer("a"), b = add_buyer("b"), solo = add_buyer("solo");
  http_.answer(a.ping_url, FakeAnswer::bids(0, 9.00));
  http_.answer(b.ping_url, FakeAnswer::bids(0, 8.00));
  http_.answer(solo.ping_url, FakeAnswer::bids(12.00, 0));
  http_.answer(a.post_url, FakeAnswer::reject("full"));
  http_.answer(b.post_url, FakeAnswer::reject("full"));
  http_.answer(solo.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(43);

  const Distribution out = distributor().decide_and_wait(lead);

  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(out.buyer_id, solo.id);
  EXPECT_EQ(out.price, 1200);
  EXPECT_EQ(keys_posted(solo), std::vector<std::string>{lead.id});
  // The refused shares' intents gave way to the exclusive post's.
  const auto intents = store_.get_post_intents(lead.id);
  ASSERT_TRUE(intents && intents->size() == 1u);
  EXPECT_EQ(intents->front().buyer_id, solo.id);
  EXPECT_FALSE(intents->front().shared);
}

TEST_F(SharedSaleTest, AnExclusiveVerticalIgnoresSharedBids) {
  ASSERT_EQ(verticals_.load_json(
                json::parse(R"({"verticals": [{"name": "auto_insurance", "max_sales": 1}]})")),
            "");
  const Buyer a = add_buyer("a", [](Buyer& x) { x.shared_price = 900; });
  http_.answer(a.ping_url, FakeAnswer::bids(0, 25.00));
  const Lead lead = add_lead(44);

  const Distribution out = distributor().decide_and_wait(lead);

  EXPECT_EQ(out.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(http_.count(a.post_url), 0u);
}

TEST_F(SharedSaleTest, FixedPriceBuyersBuySharesAtTheirSharedPrice) {
  const auto fixed = [](Buyer& x) {
    x.pricing = PricingModel::kFixed;
    x.price = 1500;
    x.shared_price = 800;
  };
  const Buyer a = add_buyer("a", fixed), b = add_buyer("b", fixed);
  http_.answer(a.post_url, FakeAnswer::accept());
  http_.answer(b.post_url, FakeAnswer::accept());
  const Lead lead = add_lead(45);

  const Distribution out = distributor().decide_and_wait(lead);

  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  ASSERT_EQ(out.sales.size(), 2u);  // 8.00 + 8.00 > 15.00
  EXPECT_EQ(out.price, 1600);
  EXPECT_EQ(http_.count(a.ping_url), 0u);
}

TEST_F(SharedSaleTest, ARedeliveredSharedLeadIsRepostedToEveryBuyerOfItsIntentsAndNoOneElse) {
  const Buyer a = add_buyer("a"), b = add_buyer("b"), other = add_buyer("other");
  http_.answer(a.post_url, FakeAnswer::accept("a-again"));
  http_.answer(b.post_url, FakeAnswer::accept("b-again"));
  http_.answer(other.ping_url, FakeAnswer::bids(50.00, 20.00));
  const Lead lead = add_lead(46);
  // A worker posted two shares and died before it knew the answers.
  for (const Buyer* x : {&a, &b})
    ASSERT_EQ(store_.record_post_intent(
                  {lead.id, x->id, 900, "pg_" + x->name, clock_.now_ms(), /*shared=*/true}, {}),
              StoreStatus::kOk);

  const Distribution out = distributor().decide_and_wait(lead);

  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  ASSERT_EQ(out.sales.size(), 2u);
  EXPECT_EQ(out.price, 1800);
  EXPECT_EQ(http_.requests().size(), 2u);  // no ping, no third share: it may be sold already
  EXPECT_EQ(keys_posted(a), std::vector<std::string>{lead.id + ":" + a.id});
  EXPECT_EQ(keys_posted(b), std::vector<std::string>{lead.id + ":" + b.id});
}

TEST_F(SharedSaleTest, AShareWhoseOutcomeStaysUnknownFailsTheAuctionAndKeepsEveryIntent) {
  options_.auction_timeout = 3s;
  const Buyer a = add_buyer("a"), b = add_buyer("b");
  http_.answer(a.ping_url, FakeAnswer::bids(0, 9.00));
  http_.answer(b.ping_url, FakeAnswer::bids(0, 8.00));
  http_.answer(a.post_url, FakeAnswer::accept());
  http_.answer(b.post_url, FakeAnswer::no_answer());
  const Lead lead = add_lead(47);

  EXPECT_THROW(distributor().decide_and_wait(lead), std::runtime_error);
  const auto intents = store_.get_post_intents(lead.id);
  ASSERT_TRUE(intents && intents->size() == 2u);  // the next attempt asks both again

  http_.answer(b.post_url, FakeAnswer::accept("late"));
  const Distribution out = distributor().decide_and_wait(lead);
  ASSERT_EQ(out.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(out.sales.size(), 2u);
  EXPECT_EQ(http_.count(a.ping_url), 1u);  // pinged by the first attempt only
}

}  // namespace
}  // namespace leadflow::testing
