// The live feed's fan-out without a server: a fake LeadChangesStore answers the poller's read,
// and each subscriber's stream is read as the event loop would take it. Who sees which lead and
// which fields, that a reader who never takes its bytes is dropped (and nobody else is), the
// cap, and a reconnect's resume.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/api/live_feed.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// The store as the poller reads it: the leads it holds now, as list_lead_changes would give them.
class FakeChanges final : public LeadChangesStore {
 public:
  std::vector<LeadRecord> leads;
  bool down = false;
  std::vector<std::string> last_watched;
  int reads = 0;
  bool healthy() override { return !down; }
  std::optional<std::vector<LeadRecord>> list_lead_changes(std::int64_t since,
                                                           std::span<const std::string> watched,
                                                           int limit) override {
    ++reads;
    if (down) return std::nullopt;
    last_watched.assign(watched.begin(), watched.end());
    std::vector<LeadRecord> out;
    for (const auto& r : leads)
      if (r.lead.received_at_ms >= since && static_cast<int>(out.size()) < limit) out.push_back(r);
    for (const auto& id : watched)
      for (const auto& r : leads)
        if (r.lead.id == id && r.distribution.status != DeliveryStatus::kPending) out.push_back(r);
    return out;
  }
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

LiveOptions options() {
  LiveOptions o;
  o.max_connections = 10;
  return o;
}

TEST(LiveFeed, EachReaderSeesItsOwnLeadsThroughTheVisibilityModel) {
  FakeChanges store;
  LiveFeed feed(store, kNow, options());
  const SellerLabels labels{"secret", nullptr};
  auto op = feed.subscribe(Viewer{}, labels, "");
  auto seller_a = feed.subscribe(Viewer::seller("sel_a"), labels, "");
  auto seller_b = feed.subscribe(Viewer::seller("sel_b"), labels, "");
  auto buyer = feed.subscribe(Viewer::buyer("buy_x"), labels, "");
  auto other_buyer = feed.subscribe(Viewer::buyer("buy_y"), labels, "");
  for (auto* b : {&op, &seller_a, &seller_b, &buyer, &other_buyer}) {
    std::string raw;
    EXPECT_TRUE(events_of(**b, &raw).empty());
    EXPECT_EQ(raw, "retry: 3000\n\n");
  }

  store.leads = {lead("ld_1", "sel_a")};
  ASSERT_TRUE(feed.poll());
  sell(store.leads[0], "buy_x", 1500, 1000);
  ASSERT_TRUE(feed.poll());
  EXPECT_EQ(store.last_watched, std::vector<std::string>{"ld_1"});
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

TEST(LiveFeed, AReaderThatDoesNotTakeItsBytesIsDroppedAndNobodyElse) {
  FakeChanges store;
  LiveOptions o = options();
  o.buffer_bytes = 4096;
  LiveFeed feed(store, kNow, o);
  auto stalled = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  auto reading = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  EXPECT_EQ(feed.connections(), 2u);
  int received = 0;
  for (int i = 0; i < 40; ++i) {
    store.leads.push_back(lead("ld_" + std::to_string(100 + i), "sel_a"));
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
  LiveOptions o = options();
  o.max_connections = 2;
  LiveFeed feed(store, kNow, o);
  auto one = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  auto two = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  ASSERT_TRUE(one && two);
  EXPECT_EQ(feed.subscribe(Viewer{}, {"s", nullptr}, ""), nullptr);
  one->detach();  // its connection went away
  feed.heartbeat();
  EXPECT_EQ(feed.connections(), 1u);
  EXPECT_NE(feed.subscribe(Viewer{}, {"s", nullptr}, ""), nullptr);
  std::string raw;
  events_of(*two, &raw);
  EXPECT_NE(raw.find(": keep-alive\n\n"), std::string::npos);
}

TEST(LiveFeed, AStreamEndsAfterItsMaximumAgeSoItsReaderIsAuthenticatedAgain) {
  FakeChanges store;
  LiveOptions o = options();
  o.max_age = std::chrono::minutes(5);
  LiveFeed feed(store, kNow, o);
  auto s = feed.subscribe(Viewer{}, {"s", nullptr}, "");
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
  LiveFeed feed(store, kNow, options());
  auto first = feed.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, "");
  store.leads = {lead("ld_1", "sel_a"), lead("ld_2", "sel_b"), lead("ld_3", "sel_a")};
  store.leads[2].lead.received_at_ms += 1;
  ASSERT_TRUE(feed.poll());
  std::string raw;
  ASSERT_EQ(events_of(*first, &raw).size(), 2u);
  // The id of the first event it got.
  const std::size_t at = raw.find("id: ") + 4;
  const std::string first_id = raw.substr(at, raw.find('\n', at) - at);
  auto again = feed.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, first_id);
  const auto missed = events_of(*again);
  ASSERT_EQ(missed.size(), 1u);  // ld_3 only: ld_2 is another seller's
  EXPECT_EQ(missed[0]["lead"]["lead_id"], "ld_3");
  // An id from another process (or none) resumes from now.
  EXPECT_TRUE(events_of(*feed.subscribe(Viewer::seller("sel_a"), {"s", nullptr}, "zz-1")).empty());
}

TEST(LiveFeed, MoreLeadsThanAPageAreReadOverTheNextPolls) {
  FakeChanges store;
  LiveOptions o = options();
  o.page = 2;
  LiveFeed feed(store, kNow, o);
  auto s = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  for (int i = 0; i < 5; ++i) {
    store.leads.push_back(lead("ld_" + std::to_string(i), "sel_a"));
    store.leads.back().lead.received_at_ms = kNow + i;
  }
  std::vector<std::string> got;
  for (int poll = 0; poll < 5; ++poll) {
    ASSERT_TRUE(feed.poll());
    for (const json& e : events_of(*s)) got.push_back(e["lead"]["lead_id"]);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ld_0", "ld_1", "ld_2", "ld_3", "ld_4"}));
}

TEST(LiveFeed, AStoreThatCannotAnswerSendsNothingAndIsCounted) {
  FakeChanges store;
  store.down = true;
  LiveFeed feed(store, kNow, options());
  auto s = feed.subscribe(Viewer{}, {"s", nullptr}, "");
  events_of(*s);
  EXPECT_FALSE(feed.poll());
  EXPECT_TRUE(events_of(*s).empty());
  EXPECT_FALSE(s->closed());
}

}  // namespace
}  // namespace leadflow

namespace leadflow {
namespace {

// Nobody listening for idle_after: the poller reads nothing (a worker draining a backlog does not
// pay for reads nobody looks at), and a stream opened later starts from then, not from before.
TEST(LiveFeed, WithNoStreamForAWhileTheStoreIsNotRead) {
  FakeChanges store;
  LiveOptions o = options();
  o.idle_after = std::chrono::milliseconds(0);
  // On the wall clock, which the poller goes back to when a stream opens.
  const std::int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  LiveFeed feed(store, wall - 120'000, o);
  store.leads = {lead("ld_1", "sel_a")};  // received a minute ago, while nobody listened
  store.leads[0].lead.received_at_ms = wall - 60'000;
  ASSERT_TRUE(feed.poll());
  ASSERT_TRUE(feed.poll());
  EXPECT_EQ(store.reads, 0);

  auto op = feed.subscribe(Viewer{}, SellerLabels{"secret", nullptr}, "");
  ASSERT_TRUE(feed.poll());
  EXPECT_EQ(store.reads, 1);
  // From now (less the overlap): the lead received a minute before is not sent.
  EXPECT_TRUE(events_of(*op).empty());
}

}  // namespace
}  // namespace leadflow
