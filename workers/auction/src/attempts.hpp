#pragma once
// Private to the auction: the attempts an auction records of a buyer's answer, or of the lack of
// one, and the buyer's tier they carry.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "leadflow/delivery/http_client.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

// The buyer's tier in the ping tree. Configurations are validated to 1-10; one saved before
// tiers existed has the default, 1.
inline int tier_of(const Buyer& b) { return std::max(1, b.tier); }

inline Attempt attempt_from(const Buyer& b, AttemptKind kind, std::int64_t started_ms,
                            const HttpResponse& r) {
  Attempt a;
  a.buyer_id = b.id;
  a.kind = kind;
  a.started_at_ms = started_ms;
  a.tier = tier_of(b);
  a.duration_ms = static_cast<std::int32_t>(r.elapsed.count() / 1000);
  a.http_status = r.status;
  if (r.timed_out)
    a.outcome = AttemptOutcome::kTimeout;
  else if (r.status == 0 || r.status >= 500)
    a.outcome = AttemptOutcome::kError;
  return a;
}

// An attempt that got no answer of the buyer's: cut by the auction deadline, or never sent.
inline Attempt unanswered(const Buyer& b, AttemptKind kind, std::int64_t started_ms,
                          AttemptOutcome outcome, std::optional<Cents> bid, std::string reason) {
  Attempt a;
  a.buyer_id = b.id;
  a.kind = kind;
  a.started_at_ms = started_ms;
  a.outcome = outcome;
  a.bid = bid;
  a.reason = std::move(reason);
  a.tier = tier_of(b);
  return a;
}

// Past a ping's timeout, the time our client may take to tell the auction it timed out: a ping
// unanswered past both went no further than this process in its buyer's time.
constexpr std::chrono::milliseconds kHeldUpMargin{250};

// A ping held up in this process (never sent, or sent too late to be answered in time): skipped
// for our reason, never counted as the buyer's timeout.
inline Attempt held_up(const Buyer& b, std::int64_t started_ms) {
  return unanswered(b, AttemptKind::kPing, started_ms, AttemptOutcome::kSkipped, std::nullopt,
                    "held up in this worker");
}

}  // namespace leadflow
