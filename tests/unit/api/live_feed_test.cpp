// The live feed's fan-out without a server: a fake LeadChangesStore answers the poller's read,
// and each subscriber's stream is read as the event loop would take it. Who sees which lead and
// which fields, that a reader who never takes its bytes is dropped (and nobody else is), the
// cap, and a reconnect's resume.
#include <gtest/gtest.h>

#include <charconv>
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/api/live_feed.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// The store as the poller reads it: a log of changes (a lead recorded, or decided), each given the
// next position when it is committed, and read as list_lead_changes does: each lead once, in its
// state now, by its last change.
class FakeChanges final : public LeadChangesStore {
 public:
  bool down = false;
  int reads = 0;
  bool healthy() override { return !down; }
  void commit(const LeadRecord& r) { log_.push_back(r); }
  std::optional<std::string> lead_changes_position() override {
    if (down) return std::nullopt;
    return std::to_string(log_.size());
  }
  Lookup<LeadChanges> list_lead_changes(std::string_view from, std::string_view to,
                                        int limit) override {
    ++reads;
    if (down) return {};
    std::size_t after = 0, upto = log_.size();
    if (!parse(from, after) || (!to.empty() && !parse(to, upto)))
      return {StoreStatus::kNotFound, std::nullopt};
    LeadChanges out;
    std::size_t at = after;
    for (std::size_t i = after; i < upto; ++i) {
      bool later = false;  // changed again since: read in its state now, or not at all
      for (std::size_t j = i + 1; j < log_.size(); ++j)
        later = later || log_[j].lead.id == log_[i].lead.id;
      if (later) continue;
      if (static_cast<int>(out.leads.size()) == limit) {
        out.more = true;
        break;
      }
      out.leads.push_back(log_[i]);
      at = i + 1;
    }
    out.position = std::to_string(out.more ? at : upto);
    return {StoreStatus::kOk, std::move(out)};
  }

 private:
  static bool parse(std::string_view s, std::size_t& v) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size();
  }
  std::vector<LeadRecord> log_;
};

constexpr std::int64_t kNow = 1'800'000'000'000;

LeadRecord lead(const std::string& id, const std::string& seller) {
  LeadRecord r;
  r.lead.id = id;
  r.lead.seller_id = seller;
  r.lead.campaign_id = "cmp_" + seller;
  r.lead.email = id + "@example.com";
  r.lead.first_name = "Ada";
  r.lead.vertical = "solar";
  r.lead.received_at_ms = kNow + 10;
  return r;
}

void sell(LeadRecord& r, const std::string& buyer, Cents price, Cents payout) {
  r.distribution.status = DeliveryStatus::kDelivered;
  r.distribution.buyer_id = buyer;
  r.distribution.price = price;
  r.distribution.payout = payout;
  r.distribution.decided_at_ms = kNow + 500;
  r.distribution.sales = {Sale{buyer, price, payout, "b-ref"}};
}

// Every event a stream holds now, as {kind, lead}; `raw` gets the bytes.
std::vector<json> events_of(http::StreamBody& body, std::string* raw = nullptr) {
  std::string bytes;
  body.take(bytes);
  if (raw) *raw = bytes;
  std::vector<json> out;
  std::size_t at = 0;
  while ((at = bytes.find("data: ", at)) != std::string::npos) {
    const std::size_t end = bytes.find('\n', at);
    out.push_back(json::parse(bytes.substr(at + 6, end - at - 6)));
    at = end;
  }
  return out;
}

LiveOptions live_options() {
  LiveOptions o;
  o.max_connections = 10;
  return o;
}

std::string first_id(const std::string& raw, const std::string& after = "") {
  const std::size_t from = after.empty() ? 0 : raw.find(after);
  const std::size_t at = raw.find("id: ", from) + 4;
  return raw.substr(at, raw.find('\n', at) - at);
}

std::vector<std::string> kinds_and_ids(const std::vector<json>& events) {
  std::vector<std::string> out;
  for (const json& e : events)
    out.push_back(e["kind"].get<std::string>() + " " + e["lead"]["lead_id"].get<std::string>());
  return out;
}

TEST(LiveFeed, EachReaderSeesItsOwnLeadsThroughTheVisibilityModel) {
  FakeChanges store;
  LiveFeed feed(store, live_options());
  const SellerLabels labels{"secret", nullptr};
  auto op = feed.subscribe(Viewer{}, labels, "").body;
  auto seller_a = feed.subscribe(Viewer::seller("sel_a"), labels, "").body;
  auto seller_b = feed.subscribe(Viewer::seller("sel_b"), labels, "").body;
  auto buyer = feed.subscribe(Viewer::buyer("buy_x"), labels, "").body;
  auto other_buyer = feed.subscribe(Viewer::buyer("buy_y"), labels, "").body;
  for (auto* b : {&op, &seller_a, &seller_b, &buyer, &other_buyer}) {
    std::string raw;
    EXPECT_TRUE(events_of(**b, &raw).empty());
    EXPECT_EQ(raw, "retry: 3000\n\n");
  }

  LeadRecord r = lead("ld_1", "sel_a");
  store.commit(r);
  ASSERT_TRUE(feed.poll());
  sell(r, "buy_x", 1500, 1000);
  store.commit(r);
  ASSERT_TRUE(feed.poll());
  ASSERT_TRUE(feed.poll());  // read again: nothing new, nothing sent twice

  const auto seen_by_op = events_of(*op);
  ASSERT_EQ(seen_by_op.size(), 2u);
  EXPECT_EQ(seen_by_op[0]["kind"], "received");
  EXPECT_EQ(seen_by_op[1]["kind"], "decided");
  EXPECT_EQ(seen_by_op[1]["lead"]["distribution"]["buyer_id"], "buy_x");
  EXPECT_EQ(seen_by_op[1]["lead"]["seller_id"], "sel_a");

  const auto seen_by_a = events_of(*seller_a);
  ASSERT_EQ(seen_by_a.size(), 2u);
  const json& a_dist = seen_by_a[1]["lead"]["distribution"];
  EXPECT_TRUE(a_dist["buyer_id"].is_null());  // withheld
  EXPECT_EQ(a_dist["price"], 10.0);           // its payout, never the buyer's price
  EXPECT_FALSE(seen_by_a[1].dump().find("buy_x") != std::string::npos);

  EXPECT_TRUE(events_of(*seller_b).empty());     // another seller's lead: nothing at all
  EXPECT_TRUE(events_of(*other_buyer).empty());  // not its purchase

  const auto seen_by_buyer = events_of(*buyer);
  ASSERT_EQ(seen_by_buyer.size(), 1u);  // only once it bought the lead
  EXPECT_EQ(seen_by_buyer[0]["kind"], "decided");
  EXPECT_EQ(seen_by_buyer[0]["lead"]["distribution"]["price"], 15.0);
  EXPECT_FALSE(seen_by_buyer[0]["lead"].contains("seller_id"));
  EXPECT_FALSE(seen_by_buyer[0].dump().find("sel_a") != std::string::npos);
  EXPECT_FALSE(seen_by_buyer[0]["lead"]["distribution"].contains("payout"));
}

// A backlog: leads received an hour ago, recorded and decided only now (workers stopped, the
// queue drained later). Each is sent, as received and then as decided, once: the feed follows
// what the store recorded, not when the front received it.
TEST(LiveFeed, ALeadRecordedLongAfterItWasReceivedIsSentReceivedThenDecided) {
  FakeChanges store;
  LiveFeed feed(store, live_options());
  auto op = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  LeadRecord slow = lead("ld_slow", "sel_a"), quick = lead("ld_quick", "sel_a");
  slow.lead.received_at_ms = kNow - 3'600'000;
  quick.lead.received_at_ms = kNow - 3'600'000;
  store.commit(slow);
  ASSERT_TRUE(feed.poll());
  // Recorded and decided between two reads: sent as recorded, then as decided.
  store.commit(quick);
  sell(quick, "buy_x", 1500, 1000);
  store.commit(quick);
  sell(slow, "buy_x", 1500, 1000);
  store.commit(slow);
  ASSERT_TRUE(feed.poll());
  ASSERT_TRUE(feed.poll());
  const auto got = events_of(*op);
  EXPECT_EQ(kinds_and_ids(got), (std::vector<std::string>{"received ld_slow", "received ld_quick",
                                                          "decided ld_quick", "decided ld_slow"}));
  EXPECT_EQ(got[1]["lead"]["status"], "pending");  // as it was recorded
}

TEST(LiveFeed, AReaderThatDoesNotTakeItsBytesIsDroppedAndNobodyElse) {
  FakeChanges store;
  LiveOptions o = live_options();
  o.buffer_bytes = 4096;
  LiveFeed feed(store, o);
  auto stalled = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  auto reading = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  EXPECT_EQ(feed.connections(), 2u);
  int received = 0;
  for (int i = 0; i < 40; ++i) {
    store.commit(lead("ld_" + std::to_string(100 + i), "sel_a"));
    ASSERT_TRUE(feed.poll());
    received += static_cast<int>(events_of(*reading).size());  // this one keeps up
  }
  EXPECT_EQ(received, 40);
  EXPECT_TRUE(stalled->closed());
  EXPECT_TRUE(stalled->overflowed());
  EXPECT_FALSE(reading->closed());
  EXPECT_EQ(feed.connections(), 1u);
}

TEST(LiveFeed, NoMoreStreamsThanTheCapAndRoomAgainWhenOneEnds) {
  FakeChanges store;
  LiveOptions o = live_options();
  o.max_connections = 2;
  LiveFeed feed(store, o);
  auto one = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  auto two = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  ASSERT_TRUE(one && two);
  const auto refused = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  EXPECT_EQ(refused.body, nullptr);
  EXPECT_EQ(refused.refused, LiveSubscription::Refused::kFull);
  one->detach();  // its connection went away
  feed.heartbeat();
  EXPECT_EQ(feed.connections(), 1u);
  EXPECT_NE(feed.subscribe(Viewer{}, {"s", nullptr}, "").body, nullptr);
  std::string raw;
  events_of(*two, &raw);
  EXPECT_NE(raw.find(": keep-alive\n\n"), std::string::npos);
}

TEST(LiveFeed, AStreamEndsAfterItsMaximumAgeSoItsReaderIsAuthenticatedAgain) {
  FakeChanges store;
  LiveOptions o = live_options();
  o.max_age = std::chrono::minutes(5);
  LiveFeed feed(store, o);
  auto s = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  std::string bytes;
  feed.heartbeat(std::chrono::steady_clock::now() + std::chrono::minutes(4));
  EXPECT_FALSE(s->take(bytes));  // still open
  feed.heartbeat(std::chrono::steady_clock::now() + std::chrono::minutes(5));
  EXPECT_TRUE(s->take(bytes));  // what is pending, then the end
  EXPECT_NE(bytes.find(": keep-alive"), std::string::npos);
  s->detach();  // the loop closes the connection
  feed.heartbeat();
  EXPECT_EQ(feed.connections(), 0u);
}

TEST(LiveFeed, AReconnectNamingItsLastEventGetsWhatItMissed) {
  FakeChanges store;
  LiveFeed feed(store, live_options());
  auto first = feed.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, "").body;
  for (const char* id : {"ld_1", "ld_2", "ld_3"})
    store.commit(lead(id, std::string(id) == "ld_2" ? "sel_b" : "sel_a"));
  ASSERT_TRUE(feed.poll());
  std::string raw;
  ASSERT_EQ(events_of(*first, &raw).size(), 2u);
  // From the events the process keeps.
  const int reads = store.reads;
  auto again = feed.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, first_id(raw)).body;
  const auto missed = events_of(*again);
  ASSERT_EQ(missed.size(), 1u);  // ld_3 only: ld_2 is another seller's
  EXPECT_EQ(missed[0]["lead"]["lead_id"], "ld_3");
  EXPECT_EQ(store.reads, reads) << "kept: the store is not read";
  // No id: from now.
  EXPECT_TRUE(events_of(*feed.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, "").body).empty());
}

// Behind a load balancer the reconnect reaches another process: its event id carries the store's
// position, so that process reads what the stream missed from the store, each lead once in its
// state now, then follows its own feed without a gap or a repeat.
TEST(LiveFeed, AReconnectToAnotherProcessResumesFromTheStore) {
  FakeChanges store;
  LiveFeed one(store, live_options()), two(store, live_options());
  auto first = one.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, "").body;
  auto watcher = two.subscribe(Viewer{}, {"s", nullptr}, "").body;  // `two` follows the store
  LeadRecord a = lead("ld_a", "sel_a"), b = lead("ld_b", "sel_a"), c = lead("ld_c", "sel_a");
  store.commit(a);
  ASSERT_TRUE(one.poll());
  ASSERT_TRUE(two.poll());
  std::string raw;
  ASSERT_EQ(events_of(*first, &raw).size(), 1u);
  const std::string last = first_id(raw);
  // Missed by the first stream (its process went away): b recorded, a decided...
  store.commit(b);
  sell(a, "buy_x", 1500, 1000);
  store.commit(a);
  ASSERT_TRUE(two.poll());
  // ...and c, recorded after `two` last read: sent by its next poll, not by the resume.
  store.commit(c);
  auto resumed = two.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, last);
  ASSERT_NE(resumed.body, nullptr);
  ASSERT_TRUE(two.poll());
  EXPECT_EQ(kinds_and_ids(events_of(*resumed.body)),
            (std::vector<std::string>{"received ld_b", "decided ld_a", "received ld_c"}));
  ASSERT_TRUE(two.poll());
  EXPECT_TRUE(events_of(*resumed.body).empty());
}

TEST(LiveFeed, AReconnectTooFarBehindOrNotOursResumesFromNowAndIsToldSo) {
  FakeChanges store;
  LiveOptions o = live_options();
  o.resume = 3;
  LiveFeed one(store, o), two(store, o);
  auto first = one.subscribe(Viewer{}, {"s", nullptr}, "").body;
  auto watcher = two.subscribe(Viewer{}, {"s", nullptr}, "").body;
  store.commit(lead("ld_0", "sel_a"));
  ASSERT_TRUE(one.poll());
  std::string raw;
  events_of(*first, &raw);
  const std::string last = first_id(raw);
  for (int i = 1; i <= 4; ++i) store.commit(lead("ld_" + std::to_string(i), "sel_a"));
  ASSERT_TRUE(two.poll());
  // Four leads changed since: more than `resume`.
  std::string reset;
  events_of(*two.subscribe(Viewer{}, {"s", nullptr}, last).body, &reset);
  EXPECT_EQ(reset.find("event: lead"), std::string::npos) << reset;
  EXPECT_NE(reset.find("event: reset\ndata: {\"reason\":\"too_far_behind\"}"), std::string::npos)
      << reset;
  // The reset's id is where the stream joined: a reconnect with it misses nothing after.
  store.commit(lead("ld_5", "sel_a"));
  auto after = two.subscribe(Viewer{}, {"s", nullptr}, first_id(reset)).body;
  ASSERT_TRUE(two.poll());
  EXPECT_EQ(kinds_and_ids(events_of(*after)), std::vector<std::string>{"received ld_5"});
  // Not an id of this feed, nor a position of this store.
  for (const char* bad : {"garbage", "abc-1", "abc-1/not-a-position"}) {
    std::string raw_bad;
    events_of(*two.subscribe(Viewer{}, {"s", nullptr}, bad).body, &raw_bad);
    EXPECT_NE(raw_bad.find("\"reason\":\"unknown_id\""), std::string::npos) << bad;
  }
  // A store that cannot answer: no stream (503), nothing half sent.
  store.down = true;
  const auto refused = two.subscribe(Viewer{}, {"s", nullptr}, last);
  EXPECT_EQ(refused.body, nullptr);
  EXPECT_EQ(refused.refused, LiveSubscription::Refused::kUnavailable);
  EXPECT_EQ(two.connections(), 6u);
}

TEST(LiveFeed, MoreLeadsThanAPageAreReadOverAFewPages) {
  FakeChanges store;
  LiveOptions o = live_options();
  o.page = 2;
  LiveFeed feed(store, o);
  auto s = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  std::vector<std::string> made;
  for (int i = 0; i < 21; ++i) {
    made.push_back("ld_" + std::to_string(100 + i));
    store.commit(lead(made.back(), "sel_a"));
  }
  std::vector<std::string> got;
  ASSERT_TRUE(feed.poll());  // 8 pages of 2
  for (const json& e : events_of(*s)) got.push_back(e["lead"]["lead_id"]);
  EXPECT_EQ(got.size(), 16u);
  ASSERT_TRUE(feed.poll());
  for (const json& e : events_of(*s)) got.push_back(e["lead"]["lead_id"]);
  EXPECT_EQ(got, made);
}

TEST(LiveFeed, AStoreThatCannotAnswerSendsNothingAndIsCounted) {
  FakeChanges store;
  LiveFeed feed(store, live_options());
  auto s = feed.subscribe(Viewer{}, {"s", nullptr}, "").body;
  store.down = true;
  events_of(*s);
  EXPECT_FALSE(feed.poll());
  EXPECT_TRUE(events_of(*s).empty());
  EXPECT_FALSE(s->closed());
  // Back: what changed meanwhile is sent.
  store.down = false;
  store.commit(lead("ld_1", "sel_a"));
  ASSERT_TRUE(feed.poll());
  EXPECT_EQ(events_of(*s).size(), 1u);
}

// Nobody listening for idle_after: the poller reads nothing (a worker draining a backlog does not
// pay for reads nobody looks at), and a stream opened later starts from the store's position
// then, not from before.
TEST(LiveFeed, WithNoStreamForAWhileTheStoreIsNotRead) {
  FakeChanges store;
  LiveOptions o = live_options();
  o.idle_after = std::chrono::milliseconds(0);
  LiveFeed feed(store, o);
  store.commit(lead("ld_1", "sel_a"));  // while nobody listened
  ASSERT_TRUE(feed.poll());
  ASSERT_TRUE(feed.poll());
  EXPECT_EQ(store.reads, 0);

  auto op = feed.subscribe(Viewer{}, SellerLabels{"secret", nullptr}, "").body;
  store.commit(lead("ld_2", "sel_a"));
  ASSERT_TRUE(feed.poll());
  EXPECT_EQ(store.reads, 1);
  EXPECT_EQ(kinds_and_ids(events_of(*op)), std::vector<std::string>{"received ld_2"});
}

}  // namespace
}  // namespace leadflow
