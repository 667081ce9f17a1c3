// The re-offer rules on plain values: when an unsold lead is offered again, to whom, at what
// price, and when never again.
#include <gtest/gtest.h>

#include "leadflow/auction/reoffer.hpp"

#include <nlohmann/json.hpp>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/verticals.hpp"

namespace leadflow::testing {
namespace {

constexpr std::int64_t kReceived = 1'800'000'000'000;
constexpr std::int64_t kReofferDay = 86'400'000;

Vertical with_policy(std::vector<std::int64_t> delays_s, std::int64_t window_s = 0,
                     int max_sales = 1) {
  Vertical v;
  v.name = "solar";
  v.max_sales = max_sales;
  v.reoffer.delays_s = std::move(delays_s);
  v.reoffer.window_s = window_s;
  return v;
}

TEST(Reoffer, EachDelayCountsFromTheReceiptInTurnThenNone) {
  const Vertical v = with_policy({900, 7200, 86'400});
  reoffer::LeadSoFar lead{kReceived, 0, 0, false};
  EXPECT_EQ(reoffer::next_offer_at(v, lead), kReceived + 900'000);
  lead.offers_made = 1;
  EXPECT_EQ(reoffer::next_offer_at(v, lead), kReceived + 7'200'000);
  lead.offers_made = 2;
  EXPECT_EQ(reoffer::next_offer_at(v, lead), kReceived + kReofferDay);
  lead.offers_made = 3;
  EXPECT_EQ(reoffer::next_offer_at(v, lead), std::nullopt);
}

TEST(Reoffer, AVerticalWithoutPolicyNeverOffersAgain) {
  EXPECT_EQ(reoffer::next_offer_at(Vertical{}, {kReceived, 0, 0, false}), std::nullopt);
}

// A campaign's own policy replaces its vertical's, one of no re-offer too; a campaign without one,
// and a lead of no campaign, follow the vertical's. The vertical keeps the consent window and
// max_sales.
TEST(Reoffer, ACampaignsOwnPolicyReplacesItsVerticals) {
  Vertical v = with_policy({900});
  v.consent_days = 1;
  Campaign c;
  EXPECT_EQ(&reoffer_policy_of(v, &c, nullptr), &v.reoffer);
  EXPECT_EQ(&reoffer_policy_of(v, nullptr, nullptr), &v.reoffer);
  const reoffer::LeadSoFar fresh{kReceived, 0, 0, false};
  EXPECT_EQ(reoffer::next_offer_at(v, reoffer_policy_of(v, &c, nullptr), fresh),
            kReceived + 900'000);

  c.reoffer = ReofferPolicy{{60, 2 * kReofferDay / 1000}, 0};
  EXPECT_EQ(reoffer::next_offer_at(v, reoffer_policy_of(v, &c, nullptr), fresh),
            kReceived + 60'000);
  // Its second delay is past the vertical's one-day consent window.
  EXPECT_EQ(reoffer::next_offer_at(v, reoffer_policy_of(v, &c, nullptr), {kReceived, 1, 0, false}),
            std::nullopt);
  c.reoffer = ReofferPolicy{};  // none: an unsold lead is final, whatever the vertical's
  EXPECT_EQ(reoffer::next_offer_at(v, reoffer_policy_of(v, &c, nullptr), fresh), std::nullopt);
  // And the reverse: a vertical with no policy, a campaign with its own.
  c.reoffer = ReofferPolicy{{120}, 0};
  EXPECT_EQ(reoffer::next_offer_at(Vertical{}, reoffer_policy_of(Vertical{}, &c, nullptr), fresh),
            kReceived + 120'000);
}

// The operator's policy of a vertical replaces its configured one (none too), for the leads of
// no campaign and of a campaign without its own; a campaign's own still wins over it.
TEST(Reoffer, AVerticalsPolicySetByTheOperatorReplacesItsConfiguredOne) {
  const Vertical v = with_policy({900});
  const ReofferPolicy set{{60}, 0}, none{};
  Campaign c;
  const reoffer::LeadSoFar fresh{kReceived, 0, 0, false};
  EXPECT_EQ(&reoffer_policy_of(v, nullptr, &set), &set);
  EXPECT_EQ(&reoffer_policy_of(v, &c, &set), &set);
  EXPECT_EQ(reoffer::next_offer_at(v, reoffer_policy_of(v, &c, &set), fresh), kReceived + 60'000);
  EXPECT_EQ(reoffer::next_offer_at(v, reoffer_policy_of(v, nullptr, &none), fresh), std::nullopt);
  EXPECT_EQ(reoffer::next_offer_at(Vertical{}, reoffer_policy_of(Vertical{}, nullptr, &set), fresh),
            kReceived + 60'000)
      << "a vertical configured with none, given one by the operator";
  c.reoffer = ReofferPolicy{{120}, 0};
  EXPECT_EQ(&reoffer_policy_of(v, &c, &set), &*c.reoffer);
}

// A campaign's policy is read as a vertical's is, and may be none; a vertical's may not.
TEST(Reoffer, APolicyIsCheckedTheSameWayForAVerticalAndACampaign) {
  ReofferPolicy p;
  using nlohmann::json;
  EXPECT_EQ(read_reoffer_policy(json::parse(R"({"delays_seconds": [60, 3600], "window_hours": 2})"),
                                p, "reoffer", true),
            "");
  EXPECT_EQ(p.delays_s, (std::vector<std::int64_t>{60, 3600}));
  EXPECT_EQ(p.window_s, 7200);
  EXPECT_EQ(reoffer_policy_json(p),
            json::parse(R"({"delays_seconds": [60, 3600], "window_hours": 2})"));
  EXPECT_EQ(read_reoffer_policy(json::parse(R"({"delays_seconds": []})"), p, "reoffer", true), "");
  EXPECT_TRUE(p.delays_s.empty());
  EXPECT_EQ(reoffer_policy_json(p), json::parse(R"({"delays_seconds": []})"));
  EXPECT_NE(read_reoffer_policy(json::parse(R"({"delays_seconds": []})"), p, "v.reoffer", false),
            "");
  for (const char* bad : {R"({"delays_seconds": [3600, 60]})", R"({"delays_seconds": [0]})",
                          R"({"delays_seconds": [60], "window_hours": 0})",
                          R"({"delays_seconds": [], "window_hours": 2})", R"({"delays": [60]})",
                          R"({"delays_seconds": "60"})", R"([60])"}) {
    const std::string error = read_reoffer_policy(json::parse(bad), p, "reoffer", true);
    EXPECT_EQ(error.rfind("reoffer", 0), 0u) << bad << ": " << error;
  }
  EXPECT_EQ(
      read_reoffer_policy(json::parse(R"({"delays_seconds": [3600, 60]})"), p, "reoffer", true),
      "reoffer.delays_seconds: must increase");
}

TEST(Reoffer, TheOperatorsWindowAndTheConsentWindowBoundTheOffers) {
  // A 2-hour window: the 1-day delay is past it.
  const Vertical windowed = with_policy({900, 86'400}, 7200);
  EXPECT_EQ(reoffer::next_offer_at(windowed, {kReceived, 1, 0, false}), std::nullopt);
  // Consent of 2 days: an offer due exactly at its end is past it, one a second before is not.
  Vertical consent = with_policy({kReofferDay / 1000 * 2 - 1, kReofferDay / 1000 * 2});
  consent.consent_days = 2;
  EXPECT_EQ(reoffer::next_offer_at(consent, {kReceived, 0, 0, false}),
            kReceived + 2 * kReofferDay - 1000);
  EXPECT_EQ(reoffer::next_offer_at(consent, {kReceived, 1, 0, false}), std::nullopt);
  EXPECT_TRUE(reoffer::within_consent(consent, kReceived, kReceived + 2 * kReofferDay - 1));
  EXPECT_FALSE(reoffer::within_consent(consent, kReceived, kReceived + 2 * kReofferDay));
  // The default consent window is 30 days.
  const Vertical month = with_policy({29 * 86'400, 30 * 86'400});
  EXPECT_TRUE(reoffer::next_offer_at(month, {kReceived, 0, 0, false}).has_value());
  EXPECT_EQ(reoffer::next_offer_at(month, {kReceived, 1, 0, false}), std::nullopt);
}

TEST(Reoffer, NeverOnceSoldExclusivelyAndSharedUpToMaxSalesInAll) {
  const Vertical exclusive = with_policy({900, 1800});
  EXPECT_EQ(reoffer::next_offer_at(exclusive, {kReceived, 1, 1, true}), std::nullopt);
  const Vertical shared = with_policy({900, 1800, 3600}, 0, 3);
  EXPECT_EQ(reoffer::next_offer_at(shared, {kReceived, 1, 2, false}), kReceived + 1'800'000);
  EXPECT_EQ(reoffer::room_left(shared, 2, false), 1);
  EXPECT_EQ(reoffer::next_offer_at(shared, {kReceived, 2, 3, false}), std::nullopt);
  EXPECT_EQ(reoffer::room_left(shared, 3, false), 0);
  EXPECT_EQ(reoffer::room_left(shared, 1, true), 0);
}

TEST(Reoffer, OnlyBuyersOfAgedLeadsNeverPostedThisLead) {
  Buyer b;
  b.id = "b1";
  EXPECT_FALSE(reoffer::may_offer(b, {}, {}));  // does not take aged leads
  b.accepts_aged = true;
  EXPECT_TRUE(reoffer::may_offer(b, {}, {}));
  Attempt ping;
  ping.buyer_id = "b1";
  ping.kind = AttemptKind::kPing;
  EXPECT_TRUE(reoffer::may_offer(b, {ping}, {}));  // pinged only: never had the lead
  Attempt post = ping;
  post.kind = AttemptKind::kPost;
  post.outcome = AttemptOutcome::kRejected;
  EXPECT_FALSE(reoffer::may_offer(b, {post}, {}));
  EXPECT_FALSE(reoffer::may_offer(b, {}, {Sale{"b1", 500, 0, ""}}));
}

TEST(Reoffer, TheAgedPriceIsTheBuyersOrItsAgedBid) {
  Buyer b;
  b.accepts_aged = true;
  b.min_bid = 300;
  EXPECT_EQ(reoffer::aged_offer(b, std::nullopt), std::nullopt);
  EXPECT_EQ(reoffer::aged_offer(b, 250), std::nullopt);  // under its floor
  EXPECT_EQ(reoffer::aged_offer(b, 400), 400);
  b.aged_price = 350;
  EXPECT_TRUE(reoffer::priced_without_ping(b));
  EXPECT_EQ(reoffer::aged_offer(b, 900), 350);
}

}  // namespace
}  // namespace leadflow::testing
