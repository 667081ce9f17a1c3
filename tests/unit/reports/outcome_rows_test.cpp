// What a decided lead adds to the performance and unsold rollups and their tiers, on plain
// values: the rules both stores write inside the outcome's transaction.
#include "leadflow/reports/outcome_rows.hpp"

#include <gtest/gtest.h>

#include "leadflow/reports/tiers.hpp"

namespace leadflow::reports {
namespace {

constexpr std::int64_t kAt = 1'775'311'200'000 + 7 * 60'000;  // 7 minutes into a quarter hour
constexpr std::int64_t kBucket = kAt - 7 * 60'000;

const LeadKeys kLead{kAt, "s1", "c1", "auto", "web"};

Attempt outcome_attempt(const char* buyer, AttemptKind kind, AttemptOutcome outcome, int ms = 40,
                        const char* reason = "") {
  Attempt a;
  a.buyer_id = buyer;
  a.kind = kind;
  a.outcome = outcome;
  a.duration_ms = ms;
  a.reason = reason;
  return a;
}

Distribution decided(DeliveryStatus status, std::vector<Attempt> attempts) {
  Distribution d;
  d.status = status;
  d.attempts = std::move(attempts);
  return d;
}

std::int64_t unsold_count(const UnsoldDeltas& d, const std::string& buyer,
                          const std::string& reason) {
  const auto it = d.find({kBucket, "s1", "c1", buyer, "auto", "web", reason});
  return it == d.end() ? 0 : it->second;
}

TEST(OutcomeRows, ASoldLeadCountsByStatusAndEachBuyerByItsAttempts) {
  PerformanceDeltas d;
  add_outcome(d, kLead,
              decided(DeliveryStatus::kDelivered,
                      {outcome_attempt("b1", AttemptKind::kPing, AttemptOutcome::kBid, 40),
                       outcome_attempt("b1", AttemptKind::kPost, AttemptOutcome::kAccepted, 120),
                       outcome_attempt("b2", AttemptKind::kPing, AttemptOutcome::kTimeout, 1000),
                       outcome_attempt("b3", AttemptKind::kPing, AttemptOutcome::kSkipped)}));
  const PerformanceFigures& lead = d.at(performance_key(kLead, ""));
  EXPECT_EQ(std::get<0>(performance_key(kLead, "")), kBucket);
  EXPECT_EQ(lead[kLeads], 1);
  EXPECT_EQ(lead[kSold], 1);
  const PerformanceFigures& b1 = d.at(performance_key(kLead, "b1"));
  EXPECT_EQ(b1[kPings], 1);
  EXPECT_EQ(b1[kBids], 1);
  EXPECT_EQ(b1[kPosts], 1);
  EXPECT_EQ(b1[kAccepted], 1);
  EXPECT_EQ(b1[kResponses], 2);
  EXPECT_EQ(b1[kResponseMs], 160);
  EXPECT_EQ(b1[kLatency0 + latency_bucket(40)], 1);
  EXPECT_EQ(b1[kLatency0 + latency_bucket(120)], 1);
  // A timeout is counted, but its wait is no response time.
  const PerformanceFigures& b2 = d.at(performance_key(kLead, "b2"));
  EXPECT_EQ(b2[kTimeouts], 1);
  EXPECT_EQ(b2[kResponses], 0);
  // A ping never sent counts nothing (its row stays, all zeros, and adds nothing to the tiers).
  const PerformanceFigures& b3 = d.at(performance_key(kLead, "b3"));
  EXPECT_EQ(b3, PerformanceFigures{});
  const PerformanceTierDeltas tiers = performance_tiers(d);
  for (const auto& [key, figures] : tiers) EXPECT_NE(std::get<3>(key.second), "b3");
}

TEST(OutcomeRows, ATestLeadAddsNothingToAnyRollup) {
  PerformanceDeltas performance;
  UnsoldDeltas unsold;
  Distribution d = decided(DeliveryStatus::kTest, {});
  d.reason = "test";
  add_outcome(performance, kLead, d);
  add_unsold(unsold, kLead, d);
  EXPECT_TRUE(performance.empty());
  EXPECT_TRUE(unsold.empty());
}

TEST(OutcomeRows, TiersSumRowsPerGrainAndKeepOnlyTheirKeys) {
  PerformanceDeltas d;
  add_outcome(d, kLead, decided(DeliveryStatus::kUnsold, {}));
  add_outcome(d, {kAt + 20 * 60'000, "s1", "c1", "auto", "mail"},
              decided(DeliveryStatus::kUnsold, {}));
  const PerformanceTierDeltas tiers = performance_tiers(d);
  // Tier 1 (hour; seller, campaign, vertical): both leads in one row, the source summed away.
  const auto hour = tiers.find({1, {kBucket - kBucket % kTierHourMs, "s1", "c1", "", "auto", ""}});
  ASSERT_NE(hour, tiers.end());
  EXPECT_EQ(hour->second[kLeads], 2);
  // Tier 3 (hour; seller, source): one row per source.
  EXPECT_EQ(tiers.at({3, {kBucket - kBucket % kTierHourMs, "s1", "", "", "", "web"}})[kUnsold], 1);
  EXPECT_EQ(tiers.size(), 10u);  // tiers 3, 6 and 7 keep the source: two rows each

  UnsoldDeltas u;
  add_unsold(u, kLead, decided(DeliveryStatus::kUnsold, {}));
  for (const auto& [key, leads] : unsold_tiers(u))
    EXPECT_TRUE(kept_by_unsold(kRollupTiers[key.first - 1]));
}

TEST(OutcomeRows, AnUnsoldLeadsReasonIsTheFurthestItsAuctionGot) {
  const auto lead_reason = [](Distribution d) {
    UnsoldDeltas u;
    add_unsold(u, kLead, d);
    for (const auto& [key, n] : u)
      if (std::get<3>(key).empty()) return std::get<6>(key);
    return std::string("none");
  };
  using K = AttemptKind;
  using O = AttemptOutcome;
  EXPECT_EQ(lead_reason(decided(DeliveryStatus::kUnsold, {})), "no_buyer_in_vertical");
  Distribution ineligible = decided(DeliveryStatus::kUnsold, {});
  ineligible.ineligible = {{"b9", "cap:daily"}};
  EXPECT_EQ(lead_reason(ineligible), "no_eligible_buyer");
  EXPECT_EQ(
      lead_reason(decided(DeliveryStatus::kUnsold, {outcome_attempt("b1", K::kPing, O::kTimeout)})),
      "no_answer");
  EXPECT_EQ(
      lead_reason(decided(DeliveryStatus::kUnsold, {outcome_attempt("b1", K::kPing, O::kNoBid)})),
      "no_bid");
  EXPECT_EQ(lead_reason(decided(DeliveryStatus::kUnsold,
                                {outcome_attempt("b1", K::kPing, O::kBid, 40, "below min_bid")})),
            "below_min_bid");
  EXPECT_EQ(
      lead_reason(decided(DeliveryStatus::kUnsold, {outcome_attempt("b1", K::kPing, O::kBid)})),
      "not_posted");
  EXPECT_EQ(lead_reason(decided(DeliveryStatus::kRejected,
                                {outcome_attempt("b1", K::kPing, O::kBid),
                                 outcome_attempt("b1", K::kPost, O::kRejected)})),
            "refused");
  EXPECT_EQ(
      lead_reason(decided(DeliveryStatus::kUnsold, {outcome_attempt("b1", K::kPost, O::kError)})),
      "post_failed");
  // Sold, duplicate and failed leads add no reason.
  EXPECT_EQ(lead_reason(decided(DeliveryStatus::kDelivered, {})), "none");
  EXPECT_EQ(lead_reason(decided(DeliveryStatus::kFailed, {})), "none");
}

TEST(OutcomeRows, EachBuyerCountsWhyItDidNotTakeTheLead) {
  Distribution d = decided(DeliveryStatus::kUnsold,
                           {outcome_attempt("b1", AttemptKind::kPing, AttemptOutcome::kBid),
                            outcome_attempt("b1", AttemptKind::kPost, AttemptOutcome::kTimeout),
                            outcome_attempt("b2", AttemptKind::kPing, AttemptOutcome::kNoBid)});
  d.ineligible = {
      {"b3", "duplicate of ld_1"}, {"b4", std::string(100, 'x')}, {"b2", "filter:states"}};
  UnsoldDeltas u;
  add_unsold(u, kLead, d);
  EXPECT_EQ(unsold_count(u, "", "post_failed"), 1);
  EXPECT_EQ(unsold_count(u, "b1", "post_timeout"), 1);  // its post outranks its ping
  EXPECT_EQ(unsold_count(u, "b2", "no_bid"), 1);        // asked: its answer, not the filter
  EXPECT_EQ(unsold_count(u, "b3", "duplicate"), 1);
  EXPECT_EQ(unsold_count(u, "b4", std::string(64, 'x')), 1);
  EXPECT_EQ(u.size(), 5u);
}

TEST(OutcomeRows, SettlementsAndBackfills) {
  PerformanceDeltas p;
  add_settled(p, kLead, false);
  EXPECT_EQ(p.at(performance_key(kLead, ""))[kFailed], -1);
  EXPECT_EQ(p.at(performance_key(kLead, ""))[kUnsold], 1);

  OutcomeDeltas settled;
  add_backfill(settled, kLead, decided(DeliveryStatus::kUnsold, {}), true, false, true);
  EXPECT_EQ(unsold_count(settled.unsold, "", "settled_not_sold"), 1);
  EXPECT_TRUE(settled.performance.empty());

  OutcomeDeltas decided_unsold;
  add_backfill(decided_unsold, kLead,
               decided(DeliveryStatus::kUnsold,
                       {outcome_attempt("b1", AttemptKind::kPing, AttemptOutcome::kNoBid)}),
               false, true, true);
  EXPECT_EQ(unsold_count(decided_unsold.unsold, "", "no_bid"), 1);
  EXPECT_EQ(decided_unsold.performance.at(performance_key(kLead, "b1"))[kPings], 1);
  // The buyers' figures only: the lead's own were carried over in SQL.
  EXPECT_EQ(decided_unsold.performance.count(performance_key(kLead, "")), 0u);
}

}  // namespace
}  // namespace leadflow::reports
