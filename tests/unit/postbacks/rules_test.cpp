// The postbacks' rules on plain values: which event an outcome reports, the subscriptions' text,
// the retry schedule and its 24 hours, what delivers, what makes an endpoint failing, what the
// outbox keeps for how long, the signature a receiver verifies, and a rotation's overlap.
#include <gtest/gtest.h>

#include <vector>

#include "leadflow/postbacks/rules.hpp"
#include "leadflow/postbacks/signature.hpp"

namespace leadflow::postbacks {
namespace {

TEST(PostbackRules, AnOutcomeReportsSoldOrUnsoldAndAFailedOrTestLeadNothingYet) {
  EXPECT_EQ(outcome_event(DeliveryStatus::kDelivered), EventKind::kSold);
  for (auto s : {DeliveryStatus::kUnsold, DeliveryStatus::kDuplicate, DeliveryStatus::kRejected})
    EXPECT_EQ(outcome_event(s), EventKind::kUnsold);
  for (auto s : {DeliveryStatus::kPending, DeliveryStatus::kFailed, DeliveryStatus::kTest,
                 DeliveryStatus::kReturned})
    EXPECT_EQ(outcome_event(s), std::nullopt);
}

TEST(PostbackRules, KindsHaveNamesAndSubscriptionsAreOneText) {
  for (EventKind k : kAllKinds) EXPECT_EQ(parse_kind(kind_name(k)), k);
  EXPECT_EQ(parse_kind("lead.bought"), std::nullopt);
  const std::vector<EventKind> some{EventKind::kReturned, EventKind::kSold, EventKind::kSold};
  EXPECT_EQ(events_text(some), ",lead.sold,lead.returned,");
  EXPECT_EQ(events_of_text(",lead.sold,lead.returned,"),
            (std::vector<EventKind>{EventKind::kSold, EventKind::kReturned}));
  EXPECT_TRUE(events_of_text(",").empty());
}

TEST(PostbackRules, DeliveredAndExpiredEventsGoAfterTheRetentionPendingOnesNever) {
  constexpr std::int64_t kDay = 86'400'000;
  constexpr std::int64_t now = 1'700'000'000'000;
  EXPECT_EQ(prune_before(now, 30), now - 30 * kDay);
  EXPECT_EQ(prune_before(now, 1), now - kDay);
  EXPECT_EQ(prune_before(now, 0), std::nullopt) << "0 days: kept for ever";
  EXPECT_EQ(prune_before(now, -1), std::nullopt);
  EXPECT_EQ(kDefaultRetentionDays, 30);
  EXPECT_TRUE(prunable_state("delivered"));
  EXPECT_TRUE(prunable_state("expired"));
  EXPECT_FALSE(prunable_state("pending")) << "still owed, however old";
  EXPECT_FALSE(prunable_state(""));
  EXPECT_FALSE(prunable_state("Delivered"));
}

TEST(PostbackRules, RetriesDoubleFromThirtySecondsToAnHourForADay) {
  constexpr std::int64_t t0 = 1'700'000'000'000;
  EXPECT_EQ(next_attempt_at(t0, 1, t0), t0 + 30'000);
  EXPECT_EQ(next_attempt_at(t0, 2, t0 + 30'000), t0 + 90'000);
  EXPECT_EQ(next_attempt_at(t0, 3, t0 + 90'000), t0 + 210'000);
  EXPECT_EQ(next_attempt_at(t0, 8, t0), t0 + 3'600'000) << "capped at an hour";
  EXPECT_EQ(next_attempt_at(t0, 40, t0), t0 + 3'600'000);
  // The last attempt that still falls inside the day, and the one that does not.
  EXPECT_EQ(next_attempt_at(t0, 30, t0 + kRetryWindowMs - 3'600'001), t0 + kRetryWindowMs - 1);
  EXPECT_EQ(next_attempt_at(t0, 30, t0 + kRetryWindowMs - 3'600'000), std::nullopt);
}

TEST(PostbackRules, Only2xxDeliversAndFiveFailuresInARowMakeAnEndpointFailing) {
  EXPECT_TRUE(delivered(200));
  EXPECT_TRUE(delivered(204));
  for (int s : {0, 301, 400, 404, 410, 429, 500, 503}) EXPECT_FALSE(delivered(s)) << s;
  const bool four_failed[] = {false, false, false, false};
  EXPECT_FALSE(endpoint_failing(four_failed));
  const bool five_failed[] = {false, false, false, false, false, true};
  EXPECT_TRUE(endpoint_failing(five_failed));
  const bool recovered[] = {true, false, false, false, false, false};
  EXPECT_FALSE(endpoint_failing(recovered));
}

TEST(PostbackSignature, AReceiverVerifiesTheBodyTheTimeAndTheSecret) {
  const std::string body = R"({"id":"evt_1","type":"lead.sold"})";
  const std::int64_t t = 1'700'000'000;
  const std::string header = sign("pbs_secret", t, body);
  EXPECT_TRUE(header.starts_with("t=1700000000,v1="));
  EXPECT_EQ(header.size(), std::string("t=1700000000,v1=").size() + 64);
  EXPECT_TRUE(verify(header, "pbs_secret", body, t));
  EXPECT_TRUE(verify(header, "pbs_secret", body, t + kToleranceSeconds));
  EXPECT_FALSE(verify(header, "pbs_secret", body, t + kToleranceSeconds + 1)) << "too old";
  EXPECT_FALSE(verify(header, "pbs_secret", body, t - kToleranceSeconds - 1)) << "from the future";
  EXPECT_FALSE(verify(header, "pbs_other", body, t));
  EXPECT_FALSE(verify(header, "pbs_secret", body + " ", t));
  EXPECT_FALSE(verify("v1=" + header.substr(header.find("v1=") + 3), "pbs_secret", body, t));
  EXPECT_FALSE(verify("t=1700000000x,v1=00", "pbs_secret", body, t));
  // The signed text is "<t>.<body>": a signature of another time does not carry over.
  EXPECT_FALSE(verify("t=1700000001," + header.substr(header.find("v1=")), "pbs_secret", body, t));
}

// Through a rotation's overlap one header carries a v1 per secret over the same time and body:
// a receiver holding either secret accepts it, one holding neither does not, and each v1 is
// exactly the one-secret signature's.
TEST(PostbackSignature, TwoSecretsSignOneHeaderEitherOfWhichVerifies) {
  const std::string body = R"({"id":"evt_2","type":"lead.unsold"})";
  const std::int64_t t = 1'700'000'000;
  const std::vector<std::string> both{"pbs_new", "pbs_old"};
  const std::string header = sign(both, t, body);
  const std::string one_new = sign("pbs_new", t, body), one_old = sign("pbs_old", t, body);
  EXPECT_EQ(header, one_new + "," + one_old.substr(one_old.find("v1=")))
      << "t once, then the new secret's v1, then the previous one's";
  EXPECT_TRUE(verify(header, "pbs_new", body, t));
  EXPECT_TRUE(verify(header, "pbs_old", body, t));
  EXPECT_FALSE(verify(header, "pbs_other", body, t));
  EXPECT_FALSE(verify(header, "pbs_old", body + " ", t));
  EXPECT_FALSE(verify(header, "pbs_old", body, t + kToleranceSeconds + 1)) << "too old";
  // The order of the parts does not matter to a receiver; an empty v1 matches nothing.
  EXPECT_TRUE(verify("v1=" + one_old.substr(one_old.find("v1=") + 3) + ",t=1700000000", "pbs_old",
                     body, t));
  EXPECT_FALSE(verify("t=1700000000,v1=", "pbs_old", body, t));
  const std::vector<std::string> alone{"pbs_new"};
  EXPECT_EQ(sign(alone, t, body), one_new);
}

TEST(PostbackRules, AReplacedSecretSignsTooUntilItsOverlapEnds) {
  const std::int64_t at = 1'700'000'000'000;
  EXPECT_EQ(previous_secret_expiry(at, kDefaultPreviousValidSeconds), at + 86'400'000);
  EXPECT_EQ(previous_secret_expiry(at, 60), at + 60'000);
  EXPECT_EQ(previous_secret_expiry(at, 0), 0) << "0 seconds: the old secret ends now";
  EXPECT_EQ(previous_secret_expiry(at, kMaxPreviousValidSeconds + 1),
            at + kMaxPreviousValidSeconds * 1000);
  EXPECT_EQ(kMaxPreviousValidSeconds, 604'800);

  const std::int64_t until = at + 60'000;
  using V = std::vector<std::string>;
  EXPECT_EQ(signing_secrets("pbs_b", "pbs_a", until, at), (V{"pbs_b", "pbs_a"}));
  EXPECT_EQ(signing_secrets("pbs_b", "pbs_a", until, until - 1), (V{"pbs_b", "pbs_a"}));
  EXPECT_EQ(signing_secrets("pbs_b", "pbs_a", until, until), V{"pbs_b"}) << "not at its expiry";
  EXPECT_EQ(signing_secrets("pbs_b", "pbs_a", until, until + 1), V{"pbs_b"});
  EXPECT_EQ(signing_secrets("pbs_b", "", 0, at), V{"pbs_b"}) << "never rotated";
  EXPECT_EQ(signing_secrets("pbs_b", "pbs_a", 0, at), V{"pbs_b"}) << "rotated with 0 seconds";
  EXPECT_TRUE(previous_secret_valid("pbs_a", until, at));
  EXPECT_FALSE(previous_secret_valid("", until, at));
  EXPECT_FALSE(previous_secret_valid("pbs_a", until, until));
}

// The same judgement from the statuses the store keeps, newest first (0: no answer).
TEST(PostbackRules, FiveFailedStatusesInARowMakeAnEndpointFailing) {
  EXPECT_TRUE(endpoint_failing_by_status(std::vector<int>{500, 0, 503, 404, 0}));
  EXPECT_TRUE(endpoint_failing_by_status(std::vector<int>{500, 0, 503, 404, 0, 200}))
      << "the sixth is older than the five that count";
  EXPECT_FALSE(endpoint_failing_by_status(std::vector<int>{500, 0, 503, 404}))
      << "four are not enough";
  EXPECT_FALSE(endpoint_failing_by_status(std::vector<int>{204, 500, 500, 500, 500}))
      << "the newest delivered";
  EXPECT_FALSE(endpoint_failing_by_status(std::vector<int>{}));
}

// An endpoint's spell on: made on, it begins; switched off, it ends then; switched on again, a
// new one begins; a save that leaves `active` as it was changes nothing.
TEST(PostbackRules, AnEndpointsSpellOnBeginsAndEndsWhenItIsSwitched) {
  const auto is = [](Spell s, std::int64_t on, std::int64_t off) {
    return s.on_since_ms == on && s.off_since_ms == off;
  };
  EXPECT_TRUE(is(first_spell(true, 100), 100, 0));
  EXPECT_TRUE(is(first_spell(false, 100), 100, 100)) << "made off: a spell that took nothing";
  const Spell on = first_spell(true, 100);
  const Spell off = switched(on, true, false, 250);
  EXPECT_TRUE(is(off, 100, 250));
  EXPECT_TRUE(is(switched(off, false, false, 300), 100, 250)) << "saved off again";
  EXPECT_TRUE(is(switched(off, false, true, 400), 400, 0));
  EXPECT_TRUE(is(switched(on, true, true, 500), 100, 0)) << "saved on again";
}

// What an endpoint takes changes when it is switched or subscribes to other events; then the
// waiting events are fanned out first. A new URL alone changes nothing they go to.
TEST(PostbackRules, ASwitchOrOtherEventsFanTheWaitingEventsOutFirst) {
  const std::string both = ",lead.sold,lead.unsold,", sold = ",lead.sold,";
  EXPECT_TRUE(fans_out_first(true, both, false, both)) << "switched off";
  EXPECT_TRUE(fans_out_first(false, both, true, both)) << "switched on";
  EXPECT_TRUE(fans_out_first(true, both, true, sold)) << "other events";
  EXPECT_FALSE(fans_out_first(true, both, true, both)) << "the URL, say";
  EXPECT_FALSE(fans_out_first(false, both, false, both));
}

// A rotation with an overlap is refused while a replaced secret still signs (it would end it at
// once); one with none, or once it has ended, goes ahead.
TEST(PostbackRules, ARotationMayNotEndASecretThatStillSigns) {
  const std::int64_t until = 1'000'000;
  EXPECT_TRUE(rotation_ends_a_signing_secret("pbs_a", until, until - 1, 60));
  EXPECT_FALSE(rotation_ends_a_signing_secret("pbs_a", until, until - 1, 0)) << "asked for";
  EXPECT_FALSE(rotation_ends_a_signing_secret("pbs_a", until, until, 60)) << "ended";
  EXPECT_FALSE(rotation_ends_a_signing_secret("", 0, until, 60)) << "never rotated";
}

TEST(PostbackRules, IdsAndSecretsAreFreshEachTime) {
  EXPECT_TRUE(new_event_id(1).starts_with("evt_"));
  EXPECT_NE(new_event_id(1), new_event_id(1));
  const std::string s = new_endpoint_secret();
  EXPECT_TRUE(s.starts_with("pbs_"));
  EXPECT_EQ(s.size(), 4u + 64u);
  EXPECT_NE(s, new_endpoint_secret());
}

}  // namespace
}  // namespace leadflow::postbacks
