// A re-offer's auction on simulated time (docs/reoffers.md): a real SQLite store behind FakeStore,
// buyers answering from a script. Only buyers of aged leads never posted the lead are asked, at
// their aged prices; the live outcome schedules the first re-offer; shares fill up to max_sales.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "core_samples.hpp"
#include "fake_http_client.hpp"
#include "fake_store.hpp"
#include "leadflow/auction/distributor.hpp"
#include "simulated_clock.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class AgedAuction : public ::testing::Test {
 protected:
  AgedAuction() {
    const std::string err = verticals_.load_json(json::parse(
        R"({"verticals": [{"name": "auto_insurance", "max_sales": 2, "consent_days": 2,
            "reoffer": {"delays_seconds": [900, 7200]}}]})"));
    EXPECT_EQ(err, "");
  }

  Distributor& distributor() {
    if (!distributor_)
      distributor_ = std::make_unique<Distributor>(store_, http_, buyers_, campaigns_, verticals_,
                                                   clock_, options_);
    return *distributor_;
  }

  Buyer add_buyer(const std::string& name, bool aged, Cents aged_price = 0) {
    Buyer b = sample_core_buyer(name);
    b.accepts_aged = aged;
    b.aged_price = aged_price;
    EXPECT_EQ(store_.insert_buyer(b), StoreStatus::kOk);
    return b;
  }

  Lead add_lead(int n) {
    Lead l = sample_core_lead(n, clock_.now_ms());
    const std::vector<Lead> one{l};
    EXPECT_EQ(store_.insert_leads(one).size(), 1u);
    return l;
  }

  Decision reoffer_and_wait(const LeadRecord& record, int round) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Decision> got;
    distributor().reoffer(record, round, [&](Decision d) {
      std::lock_guard lock(mu);
      got = std::move(d);
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 60s, [&] { return got.has_value(); }));
    return got ? std::move(*got) : Decision{};
  }

  /// Decides the lead live.
  Decision decide(const Lead& lead) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Decision> got;
    distributor().decide(lead, [&](Decision d) {
      std::lock_guard lock(mu);
      got = std::move(d);
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 60s, [&] { return got.has_value(); }));
    return got ? std::move(*got) : Decision{};
  }

  /// Decides the lead live (unsold, with its first re-offer scheduled) and leases that re-offer.
  LeadRecord unsold_and_due(const Lead& lead) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Decision> live;
    distributor().decide(lead, [&](Decision d) {
      std::lock_guard lock(mu);
      live = std::move(d);
      cv.notify_all();
    });
    {
      std::unique_lock lock(mu);
      EXPECT_TRUE(cv.wait_for(lock, 60s, [&] { return live.has_value(); }));
    }
    EXPECT_EQ(live->distribution.status, DeliveryStatus::kUnsold);
    EXPECT_EQ(live->reoffer_at_ms, lead.received_at_ms + 900'000);
    std::vector<OutcomeRecord> batch{{lead.id, live->distribution, live->reoffer_at_ms}};
    EXPECT_EQ(store_.record_outcomes(batch).front(), StoreStatus::kOk);
    clock_.advance(15min);
    EXPECT_EQ(store_.claim_reoffers(clock_.now_ms(), 10, clock_.now_ms() + 60'000)->size(), 1u);
    return *store_.get_lead(lead.id).value;
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

TEST_F(AgedAuction, OnlyBuyersOfAgedLeadsNeverPostedItAreAskedAtTheirAgedPrices) {
  const Buyer refuser = add_buyer("refuser", true, 300);  // posted live: never again
  const Buyer live_only = add_buyer("live", false);       // takes no aged lead
  const Buyer pinged = add_buyer("pinged", true);         // prices by its aged bid
  const Buyer fixed = add_buyer("fixed", true, 250);      // its aged price, no ping
  http_.answer(refuser.ping_url, FakeAnswer::bid(9.00));
  http_.answer(refuser.post_url, FakeAnswer::reject("not now"));
  http_.answer(live_only.ping_url, FakeAnswer::no_bid());
  FakeAnswer aged_bid;
  aged_bid.body = R"({"aged_bid": 1.75})";
  http_.answer(pinged.ping_url, aged_bid);
  http_.answer(pinged.post_url, FakeAnswer::accept("p-1"));
  http_.answer(fixed.ping_url, FakeAnswer::no_bid());
  http_.answer(fixed.post_url, FakeAnswer::accept("f-1"));
  const Lead lead = add_lead(1);
  const LeadRecord record = unsold_and_due(lead);
  const std::size_t live_pings_of_live_only = http_.count(live_only.ping_url);

  const Decision d = reoffer_and_wait(record, 1);

  ASSERT_EQ(d.kind, Decision::Kind::kDecided) << d.error;
  ASSERT_TRUE(d.reoffer.has_value());
  // max_sales 2: the two aged buyers' shares (2.50 + 1.75) beat either alone.
  ASSERT_EQ(d.reoffer->sales.size(), 2u);
  EXPECT_EQ(d.reoffer->sales[0].buyer_id, fixed.id);
  EXPECT_EQ(d.reoffer->sales[0].price, 250);
  EXPECT_EQ(d.reoffer->sales[1].buyer_id, pinged.id);
  EXPECT_EQ(d.reoffer->sales[1].price, 175);
  EXPECT_EQ(http_.count(refuser.post_url), 1u);  // its live post only
  EXPECT_EQ(http_.count(live_only.ping_url), live_pings_of_live_only);
  EXPECT_EQ(http_.count(fixed.ping_url), 1u);  // its live ping only: no aged ping
  const auto aged_pings = http_.requests_to(pinged.ping_url);
  ASSERT_EQ(aged_pings.size(), 2u);
  EXPECT_FALSE(json::parse(aged_pings[0].request.body).contains("aged"));
  EXPECT_EQ(json::parse(aged_pings[1].request.body)["aged"], true);
  for (const auto& a : d.reoffer->attempts) EXPECT_EQ(a.reoffer, 1) << a.buyer_id;
  // The seller's rule on the total: the sample seller has none, so nothing is paid.
  EXPECT_EQ(d.reoffer->sales[0].payout + d.reoffer->sales[1].payout, 0);
  EXPECT_EQ(d.reoffer->next_at_ms, 0);  // max_sales reached: no second re-offer
  EXPECT_EQ(d.reoffer->reason, "sold aged in re-offer 1");

  ASSERT_EQ(store_.record_reoffer(*d.reoffer), StoreStatus::kOk);
  const auto after = store_.get_lead(lead.id).value;
  EXPECT_EQ(after->distribution.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(after->distribution.price, 425);
}

TEST_F(AgedAuction, UnsoldItIsScheduledAgainAndPastTheConsentWindowOfferedToNobody) {
  const Buyer none = add_buyer("none", true);
  http_.answer(none.ping_url, FakeAnswer::no_bid());
  const Lead lead = add_lead(2);
  const LeadRecord record = unsold_and_due(lead);

  const Decision first = reoffer_and_wait(record, 1);
  ASSERT_TRUE(first.reoffer.has_value());
  EXPECT_TRUE(first.reoffer->sales.empty());
  EXPECT_EQ(first.reoffer->next_at_ms, lead.received_at_ms + 7'200'000);
  ASSERT_EQ(first.reoffer->attempts.size(), 1u);
  EXPECT_EQ(first.reoffer->attempts[0].reason, "no bid");

  // Two days on, the consent window is over: nobody is asked and nothing is scheduled.
  clock_.advance(48h);
  const std::size_t pings = http_.count(none.ping_url);
  const Decision late = reoffer_and_wait(record, 2);
  ASSERT_TRUE(late.reoffer.has_value());
  EXPECT_TRUE(late.reoffer->attempts.empty());
  EXPECT_EQ(late.reoffer->next_at_ms, 0);
  EXPECT_EQ(http_.count(none.ping_url), pings);
}

// The operator's policy of the vertical (in the store) replaces its configured one for the
// leads decided after the workers read it: at most 5 s after a change. A read that fails keeps
// the policies last read; with none ever read, the lead is deferred, never scheduled by the
// configured policy the operator may have replaced.
TEST_F(AgedAuction, AVerticalsPolicySetByTheOperatorIsFollowedAndAnUnreadableOneDefers) {
  const Buyer none = add_buyer("none", true);
  http_.answer(none.ping_url, FakeAnswer::no_bid());
  const Lead first = add_lead(11);
  store_.fail_next_vertical_reoffer_reads(1);
  const Decision deferred = decide(first);
  EXPECT_EQ(deferred.kind, Decision::Kind::kDeferred) << deferred.error;
  EXPECT_EQ(http_.requests().size(), 0u);

  VerticalReoffer set{"auto_insurance", {{60}, 0}, clock_.now_ms(), 0};
  ASSERT_EQ(store_.set_vertical_reoffer(set), StoreStatus::kOk);
  Decision d = decide(first);
  ASSERT_EQ(d.distribution.status, DeliveryStatus::kUnsold);
  EXPECT_EQ(d.reoffer_at_ms, first.received_at_ms + 60'000) << "the operator's, not 900 s";

  // Changed to none: within the 5 s the policy read stands; past them, a failed read keeps it.
  set.policy = {};
  set.set_at_ms = clock_.now_ms();
  ASSERT_EQ(store_.set_vertical_reoffer(set), StoreStatus::kOk);
  const Lead second = add_lead(12);
  EXPECT_EQ(decide(second).reoffer_at_ms, second.received_at_ms + 60'000);
  clock_.advance(6s);
  store_.fail_next_vertical_reoffer_reads(1);
  const Lead third = add_lead(13);
  d = decide(third);
  ASSERT_EQ(d.kind, Decision::Kind::kDecided) << d.error;
  EXPECT_EQ(d.reoffer_at_ms, third.received_at_ms + 60'000) << "the policy last read";
  const Lead fourth = add_lead(14);
  EXPECT_EQ(decide(fourth).reoffer_at_ms, 0) << "none: final";

  // Reset: the configured policy again.
  ASSERT_EQ(store_.reset_vertical_reoffer("auto_insurance", set.version), StoreStatus::kOk);
  clock_.advance(6s);
  const Lead fifth = add_lead(15);
  EXPECT_EQ(decide(fifth).reoffer_at_ms, fifth.received_at_ms + 900'000);
}

}  // namespace
}  // namespace leadflow::testing
