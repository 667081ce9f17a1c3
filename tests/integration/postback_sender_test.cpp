// The postback sender over real HTTPS on loopback, against endpoints that verify the signature as
// a seller's receiver would, on a real SQLite store: signed events delivered once, a failing
// endpoint retried on the schedule, a hanging one holding nobody else up, every event delivered
// once the endpoints recover, old delivered events pruned, private addresses refused at the
// connection, and a rotated secret's overlap: both secrets sign, then the new one alone.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/counter.h>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/postback_sender/postback_sender.hpp"
#include "leadflow/postbacks/rules.hpp"
#include "leadflow/postbacks/signature.hpp"
#include "leadflow/store/store.hpp"
#include "postback_receiver.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;
using Mode = PostbackReceiver::Mode;

class PostbackSenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    store_ = open_migrated_store("sqlite:" + dir_.path() + "/leadflow.db", error);
    ASSERT_NE(store_, nullptr) << error;
    receiver_ = std::make_unique<PostbackReceiver>(dir_.path());
  }

  /// An endpoint of `seller_id` at the receiver's `path`, answering as `mode`.
  PostbackEndpoint endpoint(const std::string& seller_id, const std::string& path, Mode mode) {
    PostbackEndpoint e;
    e.id = new_id(postbacks::kEndpointPrefix);
    e.seller_id = seller_id;
    e.url = receiver_->url(path);
    const postbacks::EventKind all[] = {postbacks::EventKind::kSold, postbacks::EventKind::kUnsold};
    e.events = postbacks::events_text(all);
    e.secret = postbacks::new_endpoint_secret();
    e.created_at_ms = e.updated_at_ms = clock_.now_ms();
    EXPECT_EQ(store_->insert_postback_endpoint(e), StoreStatus::kOk);
    receiver_->set(path, e.secret, mode);
    return e;
  }

  /// `n` leads of `seller_id` decided now: sold (to a buyer whose identity must not travel)
  /// and unsold, alternately. Their ids.
  std::vector<std::string> decide(const std::string& seller_id, int n) {
    std::vector<Lead> leads;
    std::vector<OutcomeRecord> outcomes;
    for (int i = 0; i < n; ++i) {
      Lead l;
      l.id = new_id(kLeadPrefix);
      l.seller_id = seller_id;
      l.api_key_id = "key_test";
      l.email = "p" + std::to_string(i) + "@example.com";
      l.vertical = "auto_insurance";
      l.received_at_ms = clock_.now_ms();
      leads.push_back(l);
      Distribution d;
      d.decided_at_ms = clock_.now_ms();
      if (i % 2 == 0) {
        d.status = DeliveryStatus::kDelivered;
        d.buyer_id = "by_secret_buyer";
        d.price = 2500;
        d.payout = 1800;
        d.sales = {Sale{"by_secret_buyer", 2500, 1800, "BUYER-REF-1"}};
      } else {
        d.status = DeliveryStatus::kUnsold;
        d.reason = "no bid from by_secret_buyer";
      }
      outcomes.push_back({l.id, d});
    }
    for (const auto& r : store_->insert_leads(leads)) EXPECT_TRUE(r.inserted);
    for (StoreStatus s : store_->record_outcomes(outcomes)) EXPECT_EQ(s, StoreStatus::kOk);
    std::vector<std::string> ids;
    for (const Lead& l : leads) ids.push_back(l.id);
    return ids;
  }

  std::unique_ptr<HttpClient> client(bool allow_private = true) {
    CurlClientOptions co;
    co.allow_private_addresses = allow_private;
    co.ca_file = receiver_->cert_file();  // the receiver's certificate, verified
    co.http2 = false;
    return make_curl_client(co);
  }

  std::map<std::string, PostbackDelivery> rows(const std::string& endpoint_id) {
    std::map<std::string, PostbackDelivery> out;
    const auto all = store_->list_postback_deliveries(endpoint_id, "", 1000);
    EXPECT_TRUE(all.has_value());
    for (const auto& d : all.value_or(std::vector<PostbackDelivery>{})) out[d.facts.event_id] = d;
    return out;
  }

  /// Drives the sender by hand until nothing is in flight.
  static void settle(PostbackSender& sender) {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (sender.in_flight() > 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(5ms);
    sender.flush();
  }

  /// Claims of 16, two requests to an endpoint at once, a claim a second unless a backlog
  /// asks sooner: small enough to watch a failing endpoint's events one by one.
  static PostbackSenderOptions small_options() {
    PostbackSenderOptions o;
    o.max_in_flight = 8;
    o.max_in_flight_per_endpoint = 2;
    o.poll = std::chrono::seconds(1);
    o.backlog_gap = std::chrono::milliseconds(10);
    return o;
  }

  /// Drives the sender by hand, 10 ms of its time a step, until it finds an endpoint failing.
  void until_failing(PostbackSender& sender) {
    for (int step = 0; step < 50 && sender.failing_endpoints() == 0; ++step) {
      sender.run_once();
      settle(sender);
      clock_.advance(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(sender.failing_endpoints(), 1);
  }

  /// Drives the sender by hand, 100 ms of its time a step, until the outbox is empty or `steps`
  /// steps have passed.
  void until_drained(PostbackSender& sender, int steps) {
    for (int step = 0; step < steps && store_->postback_backlog()->pending > 0; ++step) {
      sender.run_once();
      settle(sender);
      clock_.advance(100ms);
    }
  }

  TempDir dir_;
  // The sender's time, started at the real time: the receiver checks the signature's
  // timestamp against its own clock.
  ManualClock clock_{std::chrono::system_clock::now()};
  std::unique_ptr<Store> store_;
  std::unique_ptr<PostbackReceiver> receiver_;
};

// Each answered 2xx event id, counted.
std::map<std::string, int> delivered_ids(const std::vector<PostbackReceiver::Received>& all,
                                         const std::string& path) {
  std::map<std::string, int> out;
  for (const auto& r : all)
    if (r.path == path && r.answered == 200) ++out[r.event_id];
  return out;
}

TEST_F(PostbackSenderTest, SignedEventsCarryOnlyWhatTheSellerMaySeeAndAreDeliveredOnce) {
  const PostbackEndpoint e = endpoint("sl_one", "/one", Mode::kOk);
  const auto leads = decide("sl_one", 4);
  decide("sl_nobody", 3);  // a seller with no endpoint: nothing written, nothing sent
  auto http = client();
  PostbackSender sender(*store_, *http, clock_);
  EXPECT_EQ(sender.run_once(), 4);
  settle(sender);
  clock_.advance(1s);  // the next round asks the outbox again
  EXPECT_EQ(sender.run_once(), 0) << "delivered events are not sent again";

  const auto got = receiver_->received();
  ASSERT_EQ(got.size(), 4u);
  std::set<std::string> lead_ids;
  for (const auto& r : got) {
    EXPECT_TRUE(r.signature_ok) << r.body.dump();
    EXPECT_EQ(r.answered, 200);
    EXPECT_EQ(r.body["id"], r.event_id);
    const auto& data = r.body["data"];
    lead_ids.insert(data["lead_id"].get<std::string>());
    const std::string text = r.body.dump();
    // Never the buyer, its reference, its price or the margin, in any field (the amounts as
    // values: a timestamp's "…:47:07.0…" is no margin).
    for (const char* hidden : {"by_secret_buyer", "BUYER-REF-1", ":25.0", ":7.0", "buyer_id",
                               "buyer_lead_id", "price", "margin", "bid"})
      EXPECT_EQ(text.find(hidden), std::string::npos) << hidden << " in " << text;
    if (r.body["type"] == "lead.sold") {
      EXPECT_EQ(data["payout"], 18.0);
      EXPECT_EQ(data["status"], "delivered");
    } else {
      EXPECT_EQ(r.body["type"], "lead.unsold");
      EXPECT_FALSE(data.contains("payout"));
      EXPECT_TRUE(data["reason"].is_string());
    }
  }
  EXPECT_EQ(lead_ids, std::set<std::string>(leads.begin(), leads.end()));
  for (const auto& [id, d] : rows(e.id)) {
    EXPECT_EQ(d.state, PostbackState::kDelivered) << id;
    EXPECT_EQ(d.attempts, 1);
    EXPECT_EQ(d.last_status, 200);
    const auto attempts = store_->list_postback_attempts(e.id, id);
    ASSERT_TRUE(attempts && attempts->size() == 1u);
    EXPECT_GT(attempts->front().latency_us, 0);
  }
}

TEST_F(PostbackSenderTest, AFailingEndpointIsRetriedOnTheScheduleUntilItTakesTheEvent) {
  const PostbackEndpoint e = endpoint("sl_retry", "/retry", Mode::kFail);
  decide("sl_retry", 1);
  auto http = client();
  PostbackSender sender(*store_, *http, clock_);
  const std::int64_t t0 = clock_.now_ms();
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  auto row = rows(e.id).begin()->second;
  EXPECT_EQ(row.state, PostbackState::kPending);
  EXPECT_EQ(row.attempts, 1);
  EXPECT_EQ(row.last_status, 503);
  EXPECT_EQ(row.next_at_ms, t0 + 30'000) << "30 s after the first failure";
  clock_.advance(1s);  // the next round asks the outbox again
  EXPECT_EQ(sender.run_once(), 0) << "not due yet";

  clock_.advance(29s);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  row = rows(e.id).begin()->second;
  EXPECT_EQ(row.attempts, 2);
  EXPECT_EQ(row.next_at_ms, t0 + 30'000 + 60'000) << "then a minute";

  receiver_->set("/retry", e.secret, Mode::kOk);
  clock_.advance(60s);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  row = rows(e.id).begin()->second;
  EXPECT_EQ(row.state, PostbackState::kDelivered);
  EXPECT_EQ(row.attempts, 3);
  const auto got = receiver_->received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].event_id, got[2].event_id) << "one event id through its retries";
  EXPECT_EQ(got[0].body, got[2].body) << "the same body through its retries";

  // A day later it would have expired; a replay sends it again all the same.
  ASSERT_EQ(store_->replay_postback(e.id, row.facts.event_id, clock_.now_ms()), StoreStatus::kOk);
  clock_.advance(1s);  // the sender's next round: it asks the outbox at most once a poll
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  EXPECT_EQ(delivered_ids(receiver_->received(), "/retry")[row.facts.event_id], 2);
}

TEST_F(PostbackSenderTest, AnEventIsGivenUpAfterADayOfFailures) {
  const PostbackEndpoint e = endpoint("sl_gone", "/gone", Mode::kFail);
  decide("sl_gone", 1);
  auto http = client();
  PostbackSender sender(*store_, *http, clock_);
  int attempts = 0;
  for (; attempts < 100; ++attempts) {
    if (sender.run_once() == 0) break;
    settle(sender);
    clock_.advance(1h);  // past every delay of the schedule
  }
  const auto row = rows(e.id).begin()->second;
  EXPECT_EQ(row.state, PostbackState::kExpired);
  EXPECT_EQ(row.attempts, attempts);
  EXPECT_GE(attempts, 20);
  EXPECT_LE(attempts, 26) << "an hour apart at most, for 24 hours";
}

// A third of the endpoints hang: the others' events go out at once, the hanging ones hold only
// their own slots, and once they recover every event is delivered, each once.
TEST_F(PostbackSenderTest, HangingEndpointsHoldNobodyUpAndGetEverythingOnceTheyRecover) {
  std::vector<PostbackEndpoint> endpoints;
  for (int i = 0; i < 6; ++i) {
    const std::string path = "/e" + std::to_string(i);
    endpoints.push_back(
        endpoint("sl_" + std::to_string(i), path, i % 3 == 0 ? Mode::kHang : Mode::kOk));
  }
  for (int i = 0; i < 6; ++i) decide("sl_" + std::to_string(i), 20);
  auto http = client();
  PostbackSenderOptions o;
  o.max_in_flight = 24;
  o.max_in_flight_per_endpoint = 3;
  o.timeout = 500ms;
  o.poll = 20ms;
  o.busy_retry = 100ms;
  PostbackSender sender(*store_, *http, clock_, o);
  // The sender's time runs ten times as fast as the real one, so its retries come in seconds;
  // the requests' own timeouts run on real time.
  std::atomic<bool> ticking{true};
  std::thread ticker([&] {
    while (ticking) {
      std::this_thread::sleep_for(10ms);
      clock_.advance(100ms);
    }
  });
  sender.start();

  const auto healthy_done = [&](const std::vector<PostbackReceiver::Received>& all) {
    for (int i = 0; i < 6; ++i)
      if (i % 3 != 0 && delivered_ids(all, "/e" + std::to_string(i)).size() < 20) return false;
    return true;
  };
  const auto started = std::chrono::steady_clock::now();
  const bool healthy = receiver_->wait_for(healthy_done, 20s);
  // The healthy endpoints' 80 events did not wait for the hanging ones' timeouts (their 40
  // events, three at a time each, would take 7 rounds of 500 ms).
  const auto healthy_took = std::chrono::steady_clock::now() - started;

  for (int i = 0; i < 6; i += 3)
    receiver_->set("/e" + std::to_string(i), endpoints[static_cast<std::size_t>(i)].secret,
                   Mode::kOk);
  const auto all_done = [&](const std::vector<PostbackReceiver::Received>& all) {
    for (int i = 0; i < 6; ++i)
      if (delivered_ids(all, "/e" + std::to_string(i)).size() < 20) return false;
    return true;
  };
  const bool recovered = receiver_->wait_for(all_done, 30s);
  ticking = false;
  ticker.join();
  ASSERT_TRUE(healthy);
  EXPECT_LT(healthy_took, 3s);
  ASSERT_TRUE(recovered);
  sender.stop();
  for (int i = 0; i < 6; ++i)
    for (const auto& [id, n] : delivered_ids(receiver_->received(), "/e" + std::to_string(i)))
      EXPECT_EQ(n, 1) << "event " << id << " taken twice";
  EXPECT_EQ(store_->postback_backlog()->pending, 0);
  for (const auto& r : receiver_->received()) EXPECT_TRUE(r.signature_ok);
}

// A backlog is claimed as fast as the endpoint takes it: the next claim comes as soon as what
// the sender held is half sent (at most every backlog_gap), not a poll later, each claim one
// transaction of many rows. Driven by hand on the sender's own time: within one poll, every
// event of the backlog is sent, where a claim a poll would have sent one batch.
TEST_F(PostbackSenderTest, ABacklogIsClaimedAsTheEndpointTakesItNotAPollAtATime) {
  const PostbackEndpoint e = endpoint("sl_busy", "/busy", Mode::kOk);
  for (int i = 0; i < 5; ++i) decide("sl_busy", 80);  // 400 events
  auto http = client();
  PostbackSenderOptions o;
  o.max_in_flight = 8;  // a claim asks for 16
  o.poll = 1s;
  o.backlog_gap = 10ms;
  PostbackSender sender(*store_, *http, clock_, o);
  int sent = 0;
  for (int step = 0; step < 90 && sent < 400; ++step) {  // 0.9 s of the sender's time
    sent += sender.run_once();
    settle(sender);
    clock_.advance(10ms);
  }
  EXPECT_EQ(sent, 400);
  EXPECT_EQ(delivered_ids(receiver_->received(), "/busy").size(), 400u);
  clock_.advance(1s);
  sender.run_once();  // the last attempts recorded
  settle(sender);
  EXPECT_EQ(store_->postback_backlog()->pending, 0);
}

// A failing endpoint's events go back for failing_retry once its last attempts failed, so the
// sender holds no more of them than it has slots (a hanging endpoint would hold them for half a
// lease): claims again as soon as that is sent, and they carry the healthy endpoints' events.
TEST_F(PostbackSenderTest, AFailingEndpointsEventsGoBackAndLeaveTheClaimsToTheOthers) {
  const PostbackEndpoint down = endpoint("sl_down", "/down", Mode::kFail);
  const PostbackEndpoint up = endpoint("sl_up", "/up", Mode::kOk);
  decide("sl_down", 100);
  decide("sl_up", 40);  // due after every one of the failing endpoint's
  auto http = client();
  PostbackSenderOptions o;
  o.max_in_flight = 8;  // a claim asks for 16
  o.max_in_flight_per_endpoint = 2;
  o.poll = 1s;
  o.backlog_gap = 10ms;
  o.failing_retry = 10s;
  PostbackSender sender(*store_, *http, clock_, o);
  // The first claims are the failing endpoint's events; its attempts fail, it is failing, its
  // events go back but for a slot's worth, and within a poll the healthy endpoint's are sent.
  int up_sent = 0;
  for (int step = 0; step < 90 && up_sent < 40; ++step) {
    sender.run_once();
    settle(sender);
    clock_.advance(10ms);
    up_sent = static_cast<int>(delivered_ids(receiver_->received(), "/up").size());
  }
  EXPECT_EQ(sender.failing_endpoints(), 1);
  EXPECT_EQ(up_sent, 40);
  // Nothing of the failing endpoint is lost: its events are all still to deliver.
  clock_.advance(1s);
  sender.run_once();
  settle(sender);
  EXPECT_EQ(store_->postback_backlog()->pending, 100);
  for (const auto& [id, d] : rows(up.id)) EXPECT_EQ(d.state, PostbackState::kDelivered) << id;
  for (const auto& [id, d] : rows(down.id)) EXPECT_EQ(d.state, PostbackState::kPending) << id;
}

// The longer an endpoint fails, the longer its events go back for: over a long outage its
// backlog is claimed a few times, not once every failing_retry (each claim and each return a
// write of every row it takes).
TEST_F(PostbackSenderTest, AFailingEndpointsEventsGoBackForAsLongAsItHasBeenFailing) {
  const PostbackEndpoint down = endpoint("sl_long_down", "/long-down", Mode::kFail);
  decide("sl_long_down", 100);
  auto http = client();
  PostbackSenderOptions o = small_options();
  o.failing_retry = 10s;
  o.failing_retry_max = 5min;
  PostbackSender sender(*store_, *http, clock_, o);
  until_failing(sender);
  // How far ahead each event never tried is due, of those not due now: held by the sender (its
  // lease, from a claim of the last second) or sent back.
  const auto ahead = [&] {
    const std::int64_t now = clock_.now_ms();
    std::vector<std::int64_t> out;
    for (const auto& [id, d] : rows(down.id))
      if (d.attempts == 0 && d.next_at_ms > now) out.push_back(d.next_at_ms - now);
    return out;
  };
  const auto leased = [&](std::int64_t ms) {
    return ms > o.lease.count() - 1000 && ms <= o.lease.count();
  };
  sender.run_once();  // failing since now: what it cannot hold goes back for failing_retry
  int back = 0;
  for (std::int64_t ms : ahead()) {
    EXPECT_TRUE(ms <= 10'000 || leased(ms)) << ms;
    back += ms <= 10'000;
  }
  EXPECT_GT(back, 0);

  // Still failing: the next claim's events go back for 100 s (but for the one that may try it
  // again within failing_retry: AFailingEndpointIsTriedAgainSoonThoughItsEventsWaitLong).
  clock_.advance(100s);
  sender.run_once();
  back = 0;
  for (std::int64_t ms : ahead()) {
    EXPECT_TRUE(ms >= 90'000 || ms == 10'000 || leased(ms)) << ms;
    back += ms >= 90'000;
  }
  EXPECT_GT(back, 0) << "back for as long as it has failed";
  settle(sender);

  clock_.advance(1h);  // capped at failing_retry_max
  sender.run_once();
  back = 0;
  for (std::int64_t ms : ahead()) {
    EXPECT_TRUE(ms == 300'000 || ms == 10'000 || leased(ms)) << ms;
    back += ms == 300'000;
  }
  EXPECT_GT(back, 0);
  settle(sender);
  EXPECT_EQ(store_->postback_backlog()->pending, 100) << "none lost";
}

// Once a failing endpoint answers again, everything it had put back is due at once: one event at
// a time goes back for failing_retry only and finds out, and the rest follow it rather than wait
// for as long as they were put back for.
TEST_F(PostbackSenderTest, AFailingEndpointsEventsAreAllDueOnceItAnswersAgain) {
  const PostbackEndpoint down = endpoint("sl_back", "/back", Mode::kFail);
  decide("sl_back", 20);
  auto http = client();
  PostbackSenderOptions o = small_options();
  o.lease = 10s;
  o.failing_retry = 1s;
  o.failing_retry_max = 1min;
  PostbackSender sender(*store_, *http, clock_, o);
  // Failing for 40 s of the sender's time (its signatures stay within the receiver's
  // tolerance): every event tried or put back, some for far longer than a lease.
  until_failing(sender);
  for (int second = 0; second < 40; ++second) {
    sender.run_once();
    settle(sender);
    clock_.advance(1s);
  }
  int far = 0;
  for (const auto& [id, d] : rows(down.id)) far += d.next_at_ms > clock_.now_ms() + 31'000;
  EXPECT_GT(far, 0) << "some put back for longer than the 30 s below";
  EXPECT_EQ(store_->postback_backlog()->pending, 20) << "none lost";

  receiver_->set("/back", down.secret, Mode::kOk);
  // Those due within the lease and its margin (15 s) of the first success come due on their
  // own; the rest at once.
  until_drained(sender, 300);
  EXPECT_EQ(store_->postback_backlog()->pending, 0);
  EXPECT_EQ(delivered_ids(receiver_->received(), "/back").size(), 20u);
  EXPECT_EQ(sender.failing_endpoints(), 0);
}

// A failing endpoint is tried again within failing_retry though none of its events would come
// due for long: its failed attempt is due again then, not at its schedule's next step.
TEST_F(PostbackSenderTest, AFailingEndpointIsTriedAgainSoonThoughItsEventsWaitLong) {
  const PostbackEndpoint down = endpoint("sl_probe", "/probe", Mode::kFail);
  decide("sl_probe", 1);
  auto http = client();
  PostbackSenderOptions o = small_options();
  o.failing_retry = 10s;
  PostbackSender sender(*store_, *http, clock_, o);
  // Its one event, tried at each step of its schedule (30 s, then 1, 2, 4 minutes apart) until
  // five failures in a row make the endpoint failing.
  for (int attempt = 0; attempt < 10; ++attempt) {
    ASSERT_EQ(sender.run_once(), 1);
    settle(sender);
    if (sender.failing_endpoints() == 1) break;
    clock_.advance(
        std::chrono::milliseconds(rows(down.id).begin()->second.next_at_ms - clock_.now_ms()));
  }
  ASSERT_EQ(sender.failing_endpoints(), 1);
  const PostbackDelivery row = rows(down.id).begin()->second;
  EXPECT_EQ(row.attempts, 5);
  EXPECT_EQ(row.next_at_ms, clock_.now_ms() + 10'000) << "not 8 minutes later";
}

// The events of an endpoint the sender knows to be failing, fanned out after it knew, are
// never claimed while it fails: they wait in the outbox, due when the sender would have sent
// them back to, and the claims go to the other endpoints' events (a hanging endpoint costs
// the store its events' rows, not a claim and a return of each).
TEST_F(PostbackSenderTest, AFailingEndpointsNewEventsWaitInTheOutboxUnclaimed) {
  auto fake = std::make_unique<FakeStore>(clock_);
  FakeStore& counted = *fake;
  store_ = std::move(fake);
  const PostbackEndpoint down = endpoint("sl_held", "/held", Mode::kFail);
  const PostbackEndpoint up = endpoint("sl_held_up", "/held-up", Mode::kOk);
  decide("sl_held", 10);
  auto http = client();
  PostbackSenderOptions o = small_options();
  o.failing_retry = 30s;
  PostbackSender sender(*store_, *http, clock_, o);
  until_failing(sender);
  std::set<std::string> before;
  for (const auto& [id, d] : rows(down.id)) before.insert(id);

  const std::int64_t decided_at = clock_.now_ms();
  decide("sl_held", 30);
  decide("sl_held_up", 30);
  // Eight seconds of the sender's time: within the 30 s it would send the failing endpoint's
  // events back for, and long enough for every event to be fanned out (16 a claim, a claim a
  // second).
  for (int step = 0; step < 800; ++step) {
    sender.run_once();
    settle(sender);
    clock_.advance(10ms);
  }
  EXPECT_EQ(delivered_ids(receiver_->received(), "/held-up").size(), 30u);
  for (const auto& [id, d] : rows(up.id)) EXPECT_EQ(d.state, PostbackState::kDelivered) << id;
  int held = 0;
  for (const auto& [id, d] : rows(down.id)) {
    if (before.contains(id)) continue;
    ++held;
    EXPECT_EQ(counted.postback_claims(down.id, id), 0) << id;
    EXPECT_EQ(d.attempts, 0) << id;
    EXPECT_GE(d.next_at_ms, decided_at + 30'000) << id;
    EXPECT_LE(d.next_at_ms, clock_.now_ms() + 30'000) << id;
  }
  EXPECT_EQ(held, 30);
  EXPECT_EQ(store_->postback_backlog()->pending, 40) << "none lost";
}

// An endpoint switched off keeps the events of its time on, and has them back for as long as it
// has been off (not claimed and sent back every paused_retry); switched on again, they are all
// due at once, not when they were put back for.
TEST_F(PostbackSenderTest, ASwitchedOffEndpointsEventsWaitWhileItIsOffAndGoOnceItIsOn) {
  PostbackEndpoint e = endpoint("sl_off", "/off", Mode::kOk);
  decide("sl_off", 20);
  auto http = client();
  PostbackSenderOptions o = small_options();
  o.lease = 10s;
  o.paused_retry = 1s;
  o.failing_retry_max = 1min;
  PostbackSender sender(*store_, *http, clock_, o);
  const auto save = [&](bool active) {
    const postbacks::Spell spell =
        postbacks::switched({e.on_since_ms, e.off_since_ms}, e.active, active, clock_.now_ms());
    e.active = active;
    e.on_since_ms = spell.on_since_ms;
    e.off_since_ms = spell.off_since_ms;
    e.updated_at_ms = clock_.now_ms();
    e.version = 0;
    ASSERT_EQ(store_->update_postback_endpoint(e, true), StoreStatus::kOk);
  };
  clock_.advance(1s);
  save(false);
  clock_.advance(20s);  // off for 20 s: what a claim gives it goes back for 20 s
  for (int step = 0; step < 5; ++step) {
    EXPECT_EQ(sender.run_once(), 0);
    clock_.advance(10ms);
  }
  for (const auto& [id, d] : rows(e.id)) {
    EXPECT_EQ(d.attempts, 0) << id;
    EXPECT_GE(d.next_at_ms, clock_.now_ms() + 19'000) << id;
  }
  EXPECT_EQ(store_->postback_backlog()->pending, 20);

  save(true);  // due at once: in a few steps, not in 20 s
  until_drained(sender, 50);
  EXPECT_EQ(store_->postback_backlog()->pending, 0);
  EXPECT_EQ(delivered_ids(receiver_->received(), "/off").size(), 20u);
}

// An endpoint at its limit of events waiting in the sender (a slow one, or one hanging before
// its attempts time out) has the next ones it is given back for as long as the oldest it holds
// has waited: not claimed and sent back every busy_retry while it holds the sender's slots.
TEST_F(PostbackSenderTest, AnEndpointAtItsLimitHasItsEventsBackForAsLongAsItsOldestWaited) {
  const PostbackEndpoint slow = endpoint("sl_slow", "/slow", Mode::kHang);
  decide("sl_slow", 40);
  auto http = client();
  PostbackSenderOptions o;
  o.max_in_flight = 8;  // a claim asks for 16
  o.max_in_flight_per_endpoint = 2;
  o.max_waiting_per_endpoint = 4;
  o.timeout = 2s;  // of real time: the steps below take milliseconds
  o.poll = 1s;
  o.busy_retry = 1s;
  PostbackSender sender(*store_, *http, clock_, o);
  // A claim of 16: four held (two of them sent), the other twelve back for busy_retry.
  ASSERT_EQ(sender.run_once(), 2);
  const std::int64_t first = clock_.now_ms();
  int back = 0;
  for (const auto& [id, d] : rows(slow.id))
    if (d.next_at_ms > first && d.next_at_ms <= first + 1000) ++back;
  EXPECT_EQ(back, 12);

  clock_.advance(20s);  // the oldest it holds have waited 20 s: the next ones go back for 20 s
  EXPECT_EQ(sender.run_once(), 0);
  const std::int64_t now = clock_.now_ms();
  back = 0;
  for (const auto& [id, d] : rows(slow.id)) {
    // Due, or held under a lease of either claim.
    if (d.next_at_ms <= now || d.next_at_ms == first + o.lease.count() ||
        d.next_at_ms == now + o.lease.count())
      continue;
    EXPECT_EQ(d.next_at_ms, now + 20'000) << id;
    ++back;
  }
  EXPECT_EQ(back, 12);  // of the 14 claimed, two more held
  settle(sender);
  EXPECT_EQ(store_->postback_backlog()->pending, 40) << "none lost";
}

// The sender prunes the outbox on its own schedule: delivered and given-up events past the
// retention go, with their attempts, and are counted; none goes before.
TEST_F(PostbackSenderTest, DeliveredAndExpiredEventsArePrunedAfterTheRetentionAndCounted) {
  const PostbackEndpoint ok = endpoint("sl_prune", "/prune", Mode::kOk);
  const PostbackEndpoint failing = endpoint("sl_prune_fail", "/prune-fail", Mode::kFail);
  decide("sl_prune", 3);
  decide("sl_prune_fail", 1);
  auto http = client();
  PostbackSenderOptions o;
  o.retention_days = 2;
  o.prune_every = std::chrono::hours(1);
  PostbackSender sender(*store_, *http, clock_, o);
  const double pruned_before = postback_metrics().pruned.Value();
  ASSERT_EQ(sender.run_once(), 4);
  settle(sender);

  // The failing one's next attempt, past its 24 hours: given up.
  clock_.advance(std::chrono::hours(47));
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  EXPECT_EQ(rows(ok.id).size(), 3u) << "not yet two days old";
  ASSERT_EQ(rows(failing.id).size(), 1u);
  EXPECT_EQ(rows(failing.id).begin()->second.state, PostbackState::kExpired);
  EXPECT_EQ(postback_metrics().pruned.Value(), pruned_before);

  clock_.advance(std::chrono::hours(2));
  EXPECT_EQ(sender.run_once(), 0);
  EXPECT_TRUE(rows(ok.id).empty());
  EXPECT_TRUE(rows(failing.id).empty());
  EXPECT_EQ(postback_metrics().pruned.Value(), pruned_before + 4);
  EXPECT_TRUE(store_->recent_postback_attempts(ok.id, 10)->empty()) << "their attempts went too";
  EXPECT_TRUE(store_->recent_postback_attempts(failing.id, 10)->empty());
}

TEST_F(PostbackSenderTest, PrivateAddressesAreRefusedAtTheConnection) {
  const PostbackEndpoint e = endpoint("sl_private", "/private", Mode::kOk);
  decide("sl_private", 1);
  auto http = client(/*allow_private=*/false);
  PostbackSender sender(*store_, *http, clock_);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  const auto row = rows(e.id).begin()->second;
  EXPECT_EQ(row.state, PostbackState::kPending);
  EXPECT_EQ(row.last_status, 0);
  EXPECT_FALSE(row.last_error.empty());
  EXPECT_TRUE(receiver_->received().empty()) << "the loopback endpoint was never reached";
}

// How many v1 signatures a header carries.
int signatures_in(const std::string& header) {
  int n = 0;
  for (auto at = header.find("v1="); at != std::string::npos; at = header.find("v1=", at + 3)) ++n;
  return n;
}

// A rotation with a minute of overlap, on the sender's clock: an event, its retry and its replay
// within the minute are signed with both secrets (a receiver holding either accepts them); after
// it, with the new one alone. A second rotation ending the old secret at once is seen within the
// sender's refresh of its endpoints.
TEST_F(PostbackSenderTest, ARotatedSecretSignsBesideTheNewOneUntilItsOverlapEnds) {
  const PostbackEndpoint e = endpoint("sl_rot", "/rot", Mode::kFail);
  const std::string old_secret = e.secret, new_secret = postbacks::new_endpoint_secret();
  const std::int64_t t0 = clock_.now_ms();
  const auto rotated = store_->rotate_postback_secret(
      {e.id, new_secret, t0, postbacks::previous_secret_expiry(t0, 60), ""});
  ASSERT_EQ(rotated.status, StoreStatus::kOk);
  receiver_->set("/rot", new_secret, Mode::kFail);  // the receiver holds the new one already
  decide("sl_rot", 1);
  auto http = client();
  PostbackSender sender(*store_, *http, clock_);
  const auto now_s = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const auto last = [&] { return receiver_->received().back(); };

  // The first attempt (answered 503) and its retry 30 s later, both within the minute.
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  clock_.advance(30s);
  receiver_->set("/rot", new_secret, Mode::kOk);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  auto got = receiver_->received();
  ASSERT_EQ(got.size(), 2u);
  for (const auto& r : got) {
    EXPECT_EQ(signatures_in(r.signature), 2) << r.signature;
    EXPECT_TRUE(r.signature_ok) << "verified with the new secret";
    EXPECT_TRUE(postbacks::verify(r.signature, old_secret, r.raw_body, now_s()))
        << "and with the old one";
    EXPECT_FALSE(postbacks::verify(r.signature, "pbs_neither", r.raw_body, now_s()));
  }
  EXPECT_EQ(got[1].answered, 200);
  const std::string event_id = got[1].event_id;

  // A receiver still holding the old secret takes the replay within the overlap too.
  receiver_->set("/rot", old_secret, Mode::kOk);
  ASSERT_EQ(store_->replay_postback(e.id, event_id, clock_.now_ms()), StoreStatus::kOk);
  clock_.advance(1s);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  EXPECT_EQ(signatures_in(last().signature), 2);
  EXPECT_TRUE(last().signature_ok) << "verified with the old secret";
  EXPECT_EQ(last().answered, 200);

  // Past the minute: the new secret alone; the old one is refused.
  clock_.advance(30s);  // t0 + 61 s
  ASSERT_EQ(store_->replay_postback(e.id, event_id, clock_.now_ms()), StoreStatus::kOk);
  clock_.advance(1s);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  EXPECT_EQ(signatures_in(last().signature), 1) << last().signature;
  EXPECT_FALSE(last().signature_ok) << "the old secret no longer signs";
  EXPECT_EQ(last().answered, 401);
  receiver_->set("/rot", new_secret, Mode::kOk);
  ASSERT_EQ(store_->replay_postback(e.id, event_id, clock_.now_ms()), StoreStatus::kOk);
  clock_.advance(1s);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  EXPECT_EQ(signatures_in(last().signature), 1);
  EXPECT_TRUE(last().signature_ok);

  // Rotated again with no overlap: once the sender reads its endpoints again (every 2 s), the
  // newest secret alone signs.
  const std::string newest = postbacks::new_endpoint_secret();
  ASSERT_EQ(store_->rotate_postback_secret({e.id, newest, clock_.now_ms(), 0, ""}).status,
            StoreStatus::kOk);
  receiver_->set("/rot", newest, Mode::kOk);
  clock_.advance(3s);
  ASSERT_EQ(store_->replay_postback(e.id, event_id, clock_.now_ms()), StoreStatus::kOk);
  clock_.advance(1s);
  ASSERT_EQ(sender.run_once(), 1);
  settle(sender);
  EXPECT_EQ(signatures_in(last().signature), 1);
  EXPECT_TRUE(last().signature_ok);
  EXPECT_EQ(last().answered, 200);
}

// Receivers close keep-alive connections they find idle (Node's default is 5 s), with TLS's
// close_notify. After a quiet spell the next events must go at once, on new connections, not fail
// with "Send failure: Broken pipe" and wait out a retry: libcurl took such a connection for a live
// one, and events after a quiet spell waited 30 s or more (found by scaleout_postbacks_test).
TEST_F(PostbackSenderTest, EventsAfterAQuietSpellGoAtOnceThoughTheReceiverClosedItsConnections) {
  receiver_ = std::make_unique<PostbackReceiver>(dir_.path(), 500ms);
  const PostbackEndpoint e = endpoint("sl_quiet", "/quiet", Mode::kSlow);
  decide("sl_quiet", 40);  // several connections at once: each request takes 300 ms
  auto http = client();
  PostbackSender sender(*store_, *http, clock_);
  for (int round = 0; round < 20 && sender.run_once() > 0; ++round) {
    settle(sender);
    clock_.advance(1s);
  }
  settle(sender);
  for (int spell = 0; spell < 2; ++spell) {
    std::this_thread::sleep_for(1500ms);  // the receiver closes every connection
    decide("sl_quiet", 8);
    clock_.advance(1s);
    sender.run_once();
    settle(sender);
  }
  int delivered = 0;
  for (const auto& [id, d] : rows(e.id)) {
    EXPECT_EQ(d.state, PostbackState::kDelivered) << id << ": " << d.last_error;
    EXPECT_EQ(d.attempts, 1) << id << ": " << d.last_error;
    delivered += d.state == PostbackState::kDelivered;
  }
  EXPECT_EQ(delivered, 56);
}

}  // namespace
}  // namespace leadflow::testing
