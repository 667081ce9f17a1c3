#include "leadflow/auction/distributor.hpp"

#include <algorithm>
#include <stdexcept>

#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/auction/auction.hpp"
#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/delivery/pending_responses.hpp"
#include "leadflow/auction/worker_metrics.hpp"

namespace leadflow {

std::shared_ptr<const std::vector<Buyer>> BuyerDirectory::snapshot() {
  std::lock_guard lock(mu_);
  const SteadyTime now = clock_.steady_now();
  if (buyers_ && now - checked_at_ < refresh_) return buyers_;
  checked_at_ = now;
  const std::int64_t version = store_.buyers_version();
  // The store cannot answer (-1): keep the buyers we know rather than an empty list.
  if (buyers_ && (version == version_ || version < 0)) return buyers_;
  auto fresh = std::make_shared<std::vector<Buyer>>();
  BuyerQuery q;
  q.limit = 1000;
  for (;;) {
    auto page = store_.list_buyers(q);
    for (auto& b : page) fresh->push_back(std::move(b));
    if (static_cast<int>(page.size()) < q.limit) break;
    q.after_id = fresh->back().id;
  }
  buyers_ = std::move(fresh);
  version_ = version;
  return buyers_;
}

std::optional<Campaign> CampaignDirectory::find(const std::string& id) {
  const SteadyTime now = clock_.steady_now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end() && now - it->second.second < std::chrono::seconds(5))
      return it->second.first;
  }
  auto c = store_.get_campaign(id);
  if (c) {
    std::lock_guard lock(mu_);
    if (cache_.size() > 10'000) cache_.clear();
    cache_[id] = {*c, now};
  }
  return c;
}

Distributor::Distributor(Store& store, HttpClient& http, BuyerDirectory& buyers,
                         CampaignDirectory& campaigns, const VerticalRegistry& verticals,
                         const Clock& clock, DistributorOptions options)
    : store_(store),
      http_(http),
      buyers_(buyers),
      campaigns_(campaigns),
      verticals_(verticals),
      clock_(clock),
      options_(options),
      health_(clock, options.health),
      rng_(std::random_device{}()) {}

void Distributor::observe_health(const std::string& buyer_id, const HttpResponse& r) {
  if (health_.record(buyer_id, classify_retry(r) == RetryClass::kRetryable)) {
    worker_metrics().buyer_pauses.Add({{"buyer_id", buyer_id}}).Increment();
    log(LogLevel::kWarn, "buyer_paused",
        {{"buyer_id", buyer_id},
         {"cool_down_ms", static_cast<std::int64_t>(options_.health.cool_down.count())}});
  }
}

Cents Distributor::payout_for(const Lead& lead, Cents price) {
  if (lead.campaign_id.empty()) return 0;  // Surface A: the seller's terms live outside leadflow
  auto c = campaigns_.find(lead.campaign_id);
  if (!c) return 0;
  const Cents payout = c->payout_fixed ? c->payout_value : apply_basis_points(price, c->payout_value);
  return std::min(payout, price);  // never pay a seller more than the sale brought
}

namespace {

struct NamedCap {
  const char* name;
  CapWindow window;
};

// The buyer's cap windows now, in the buyer's own time zone.
std::vector<NamedCap> cap_windows(const Buyer& b, std::int64_t unix_s) {
  std::vector<NamedCap> caps;
  if (!b.caps.is_object()) return caps;
  std::string zone = "UTC";
  if (b.schedule.is_object() && b.schedule.contains("timezone") && b.schedule["timezone"].is_string())
    zone = b.schedule["timezone"].get<std::string>();
  auto tz = TimeZone::cached(zone);
  if (!tz) tz = TimeZone::cached("UTC");
  struct Window {
    const char* name;
    std::int64_t (TimeZone::*start)(std::int64_t) const;
  };
  static constexpr Window kWindows[] = {{"hourly", &TimeZone::start_of_hour},
                                        {"daily", &TimeZone::start_of_day},
                                        {"weekly", &TimeZone::start_of_week},
                                        {"monthly", &TimeZone::start_of_month}};
  for (const auto& w : kWindows) {
    auto it = b.caps.find(w.name);
    if (it == b.caps.end() || !it->is_number_integer()) continue;
    caps.push_back({w.name, {((*tz).*(w.start))(unix_s) * 1000, it->get<std::int64_t>()}});
  }
  return caps;
}

// A cheap first look at the caps, so a full buyer is not pinged. It is not the guarantee: the
// post intent reserves the slot atomically (Store::record_post_intent), because several workers
// may pass this check for the last slot at once.
std::string cap_ineligibility(Store& store, const Buyer& b, const std::vector<NamedCap>& caps) {
  for (const auto& c : caps) {
    // A count the store cannot give is treated as full: better unsold than over a cap.
    const auto sold = store.count_sales(b.id, c.window.since_ms);
    if (!sold) return std::string("cap:") + c.name + ":unknown";
    if (*sold >= c.window.limit) return std::string("cap:") + c.name;
  }
  return "";
}

Attempt attempt_from(const std::string& buyer_id, AttemptKind kind, std::int64_t started_ms,
                     const HttpResponse& r) {
  Attempt a;
  a.buyer_id = buyer_id;
  a.kind = kind;
  a.started_at_ms = started_ms;
  a.duration_ms = static_cast<std::int32_t>(r.elapsed.count() / 1000);
  a.http_status = r.status;
  if (r.timed_out) a.outcome = AttemptOutcome::kTimeout;
  else if (r.status == 0 || r.status >= 500) a.outcome = AttemptOutcome::kError;
  return a;
}

}  // namespace

Distribution Distributor::decide(const Lead& lead) {
  auto& metrics = worker_metrics();
  Distribution d;
  const std::int64_t now_ms = clock_.now_ms();
  const std::int64_t now_s = now_ms / 1000;
  const SteadyTime deadline = clock_.steady_now() + options_.auction_timeout;
  auto buyers = buyers_.snapshot();
  auto buyer_by_id = [&](const std::string& id) -> const Buyer* {
    for (const auto& b : *buyers)
      if (b.id == id) return &b;
    return nullptr;
  };

  // What a post came to. kUnknown: no answer (a timeout, or a connection lost once the request may
  // have been sent), so the buyer may have taken the lead; kNotPosted: no intent could be recorded.
  // kStoreDown: our store could not answer for the intent, so nothing was posted and the buyer
  // did nothing: it never counts as a refusal.
  enum class Posted { kAccepted, kDeclined, kUnknown, kNotPosted, kStoreDown };

  // One post. `reserve`: take a cap slot with the intent (a new post); a recovered intent
  // already holds one.
  auto post_once = [&](const Buyer& b, const std::string& ping_id, Cents price, bool reserve) -> Posted {
    std::vector<CapWindow> caps;
    if (reserve)
      for (const auto& c : cap_windows(b, clock_.now_ms() / 1000)) caps.push_back(c.window);
    const StoreStatus intent =
        store_.record_post_intent({lead.id, b.id, price, ping_id, clock_.now_ms()}, caps);
    if (intent == StoreStatus::kLimitReached) {
      d.attempts.push_back({b.id, AttemptKind::kPost, clock_.now_ms(), 0, AttemptOutcome::kSkipped,
                            price, 0, "cap reached"});
      return Posted::kNotPosted;
    }
    // Posting without a durable intent could sell the lead twice after a crash, so this buyer is
    // not posted: decided elsewhere (kConflict), or the store cannot answer now (kStoreDown).
    if (intent == StoreStatus::kUnavailable) {
      metrics.store_errors.Increment();
      return Posted::kStoreDown;
    }
    if (intent != StoreStatus::kOk) return Posted::kNotPosted;
    const std::int64_t started = clock_.now_ms();
    const HttpResponse r = send_and_wait(http_, clock_, make_post_request(b, lead, ping_id, price));
    metrics.observe_buyer(b.id, "post", r);
    observe_health(b.id, r);
    Attempt a = attempt_from(b.id, AttemptKind::kPost, started, r);
    const PostAnswer answer = read_post_answer(b, r);
    a.bid = price;
    if (answer.accepted) {
      a.outcome = AttemptOutcome::kAccepted;
    } else {
      if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError)
        a.outcome = AttemptOutcome::kRejected;
      a.reason = answer.reason;
    }
    const bool unknown = !answer.accepted && (r.timed_out || r.status == 0);
    d.attempts.push_back(std::move(a));
    if (unknown) return Posted::kUnknown;
    if (!answer.accepted) return Posted::kDeclined;
    d.status = DeliveryStatus::kDelivered;
    d.buyer_id = b.id;
    d.price = price;
    d.payout = payout_for(lead, price);
    d.buyer_lead_id = answer.buyer_lead_id;
    return Posted::kAccepted;
  };

  // A post, asked again with the same Idempotency-Key while its outcome is unknown. Moving down
  // the ranking after a timeout could sell the lead twice: the buyer may have taken it and only
  // its answer was late. A buyer that answers at all (taken, refused, an HTTP error) settles it.
  // Still unknown at the auction deadline: the lead goes back to the queue (retry topic) with its
  // post intent, so the next attempt asks this buyer first again; after the last attempt it is
  // recorded as failed and dead-lettered for the operator to settle with the buyer.
  auto post_to = [&](const Buyer& b, const std::string& ping_id, Cents price, bool reserve) -> bool {
    Posted result = post_once(b, ping_id, price, reserve);
    while ((result == Posted::kUnknown || result == Posted::kStoreDown) &&
           clock_.steady_now() + options_.post_retry_pause < deadline) {
      clock_.sleep_for(options_.post_retry_pause);
      // After a timeout the intent already holds the slot; after a store failure nothing was
      // written, so the slot is asked for again.
      result = post_once(b, ping_id, price, result == Posted::kStoreDown && reserve);
    }
    if (result == Posted::kStoreDown)
      throw AuctionDeferred("the store could not record the post intent of lead " + lead.id +
                            " before the auction deadline; no buyer was posted");
    if (result == Posted::kUnknown) {
      metrics.post_outcome_unknown.Increment();
      throw std::runtime_error("no answer from buyer " + b.id + " to the post of lead " + lead.id +
                               "; it may have taken the lead, so no other buyer is offered it");
    }
    return result == Posted::kAccepted;
  };

  // 1. A redelivered lead whose post may have reached a buyer: ask that buyer again first, with
  //    the same Idempotency-Key, so a buyer that already took it answers the same and nobody
  //    else is sold the lead.
  std::string recovered_buyer;
  if (auto intent = store_.get_post_intent(lead.id)) {
    recovered_buyer = intent->buyer_id;
    if (const Buyer* b = buyer_by_id(intent->buyer_id)) {
      metrics.recoveries.Increment();
      if (post_to(*b, intent->ping_id, intent->price, false)) {
        d.decided_at_ms = clock_.now_ms();
        return d;
      }
    }
  }

  // 2. Intake dedupe: the same person in this vertical within the lookback is not sold again.
  const Vertical* vertical = verticals_.find(lead.vertical);
  const int lookback_days = vertical ? vertical->duplicate_lookback_days : 30;
  if (lookback_days > 0) {
    const std::string earlier = store_.find_duplicate(
        lead.vertical, lead.email, lead.phone, now_ms - lookback_days * 86'400'000LL, lead.id);
    if (!earlier.empty()) {
      d.status = DeliveryStatus::kDuplicate;
      d.reason = "duplicate of " + earlier;
      d.decided_at_ms = clock_.now_ms();
      return d;
    }
  }

  // 3. Eligibility.
  std::vector<const Buyer*> eligible;
  for (const auto& b : *buyers) {
    if (b.id == recovered_buyer) continue;
    std::string why = static_ineligibility(b, lead, now_s);
    if (why.empty() && health_.paused(b.id)) why = "unhealthy";
    if (why.empty()) why = cap_ineligibility(store_, b, cap_windows(b, now_s));
    if (why.empty() && b.duplicate_lookback_days > 0) {
      const auto bought = store_.buyer_bought_person(
          b.id, lead.email, lead.phone, now_ms - b.duplicate_lookback_days * 86'400'000LL);
      if (!bought) why = "duplicate:unknown";  // cannot tell: do not risk selling it twice
      else if (*bought) why = "duplicate";
    }
    if (why.empty()) {
      eligible.push_back(&b);
    } else if (why != "vertical") {
      d.ineligible.push_back({b.id, std::move(why)});
    }
  }
  if (eligible.empty()) {
    d.status = DeliveryStatus::kUnsold;
    d.reason = "no eligible buyer";
    d.decided_at_ms = clock_.now_ms();
    return d;
  }

  // 4. Pings, all at once, without PII; fixed-price and direct-post buyers bid their price.
  struct Pending {
    const Buyer* buyer;
    std::string ping_id;
    std::int64_t started_ms;
    std::size_t response;  // its index in `answers`
  };
  PendingResponses answers(clock_);
  std::vector<Pending> pending;
  std::vector<Bid> bids;
  for (const Buyer* b : eligible) {
    if (b->mode == DeliveryMode::kDirectPost || b->pricing == PricingModel::kFixed) {
      bids.push_back({b, b->price, ""});
      continue;
    }
    std::string ping_id = new_id(kPingPrefix);
    auto request = make_ping_request(*b, lead, ping_id);
    const std::int64_t started_ms = clock_.now_ms();
    pending.push_back({b, std::move(ping_id), started_ms, answers.send(http_, std::move(request))});
  }
  for (auto& p : pending) {
    // Each ping carries its buyer's timeout; the auction deadline is a second guard.
    const std::optional<HttpResponse> answer_in = answers.wait(p.response, deadline);
    if (!answer_in) {
      d.attempts.push_back({p.buyer->id, AttemptKind::kPing, p.started_ms, 0,
                            AttemptOutcome::kTimeout, std::nullopt, 0, "auction deadline"});
      continue;
    }
    const HttpResponse& r = *answer_in;
    metrics.observe_buyer(p.buyer->id, "ping", r);
    observe_health(p.buyer->id, r);
    Attempt a = attempt_from(p.buyer->id, AttemptKind::kPing, p.started_ms, r);
    const PingAnswer answer = read_ping_answer(*p.buyer, r);
    if (answer.bid) {
      a.outcome = AttemptOutcome::kBid;
      a.bid = answer.bid;
      if (*answer.bid < p.buyer->min_bid) {
        a.reason = "below min_bid";
      } else {
        bids.push_back({p.buyer, *answer.bid, p.ping_id});
      }
    } else {
      if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError)
        a.outcome = AttemptOutcome::kNoBid;
      a.reason = answer.reason;
    }
    d.attempts.push_back(std::move(a));
  }

  // 5. Posts, best bid first, down the ranking until one accepts or the auction runs out of time.
  std::vector<Bid> ranked;
  {
    std::lock_guard lock(rng_mu_);
    ranked = rank_bids(std::move(bids), rng_);
  }
  for (const Bid& bid : ranked) {
    if (clock_.steady_now() >= deadline) {
      d.attempts.push_back({bid.buyer->id, AttemptKind::kPost, clock_.now_ms(), 0,
                            AttemptOutcome::kSkipped, bid.amount, 0, "auction deadline"});
      continue;
    }
    if (post_to(*bid.buyer, bid.ping_id, bid.amount, true)) break;
  }
  if (d.status != DeliveryStatus::kDelivered) {
    d.status = DeliveryStatus::kUnsold;
    d.reason = ranked.empty() ? "no bids" : "every post was rejected";
  }
  d.decided_at_ms = clock_.now_ms();
  return d;
}

}  // namespace leadflow
