// One lead's auction as a state machine on the Distributor's loop: pings by tier, ranking, posts
// with fallback and re-asks, shared sales, the post intents and the deadline. The Distributor
// (distributor.cpp) holds what auctions share: the store, the HTTP client, the buyers' health
// and capacity, the batching of post intents; the pure rules are auction.cpp's.
#include "auction_machine.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "attempts.hpp"
#include "buyer_caps.hpp"
#include "leadflow/auction/auction.hpp"
#include "leadflow/auction/reoffer.hpp"
#include "leadflow/auction/worker_metrics.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/money/payout.hpp"
#include "leadflow/money/settlement.hpp"

namespace leadflow {

/// One lead's auction as a state machine on the Distributor's loop. Every member is touched on
/// the loop thread only, except what a blocking call reads before it is handed over (the lead,
/// the buyers) and writes into its own result. Owned by the events that refer to it.
class Auction : public std::enable_shared_from_this<Auction> {
 public:
  Auction(Distributor& dist, Lead lead, std::function<void(Decision)> done,
          std::optional<AgedLead> aged = std::nullopt)
      : dist_(dist),
        loop_(*dist.loop_),
        clock_(dist.clock_),
        lead_(std::move(lead)),
        done_(std::move(done)),
        aged_(std::move(aged)) {
    const Vertical* v = dist.verticals_.find(lead_.vertical);
    vertical_ = v ? *v : Vertical{};
    max_sales_ = v ? std::max(1, v->max_sales) : 1;
    if (aged_) {
      // An aged lead sells what its vertical still allows; after earlier shares, only shares.
      max_sales_ = reoffer::room_left(vertical_, static_cast<int>(aged_->sales.size()), false);
      shares_only_ = !aged_->sales.empty();
    }
  }

  void start() {
    loop_.hold();
    auto self = shared_from_this();
    loop_.blocking([self] { return self->prepare(); });
  }

 private:
  // What a post came to. kUnknown: no answer (a timeout, or a connection lost once the request
  // may have been sent), so the buyer may have taken the lead. kNotPosted: no intent could be
  // recorded for a reason of the buyer's (its cap) or the lead is decided elsewhere.
  // kStoreDown: our store could not take the intent until the deadline: nothing was posted and
  // the buyer did nothing, so it never counts as a refusal.
  enum class Posted { kAccepted, kDeclined, kUnknown, kNotPosted, kStoreDown };

  struct Ping {
    const Buyer* buyer;
    std::string ping_id;
    std::int64_t started_ms;
    std::optional<Attempt> attempt;  // set when answered (or cut by the deadline)
  };

  // Runs `step` on the loop for this auction unless it is over; an exception fails the auction.
  template <typename F>
  EventLoop::Task step(F f) {
    return [self = shared_from_this(), f = std::move(f)]() mutable {
      if (self->finished_) return;
      try {
        f();
      } catch (const std::exception& e) {
        self->fail(e.what());
      }
    };
  }

  const Buyer* buyer_by_id(const std::string& id) const {
    for (const auto& b : *buyers_)
      if (b.id == id) return &b;
    return nullptr;
  }

  // Blocking: the buyers, the campaign's payout rule, a post intent left by an earlier attempt,
  // and (without one) the eligibility checks.
  EventLoop::Task prepare() {
    // Past its consent window (or with no room left) an aged lead is offered to nobody: its
    // re-offer is recorded empty, with no next one.
    if (aged_ && (max_sales_ == 0 ||
                  !reoffer::within_consent(vertical_, lead_.received_at_ms, clock_.now_ms())))
      return step([this] { aged_over(); });
    buyers_ = dist_.buyers_.snapshot();
    // Buyers the store could never list are not "no buyer": the lead is not decided unsold.
    if (!buyers_) return step([this] { defer(); });
    // The vertical's re-offer policy set by the operator, and the payout rule: the campaign's
    // (Surface B), else the seller's (Surface A). One the store cannot read is not the default:
    // the lead waits rather than being paid or scheduled by a guess.
    Lookup<ReofferPolicy> set = dist_.campaigns_.vertical_reoffer(vertical_.name);
    if (set.status == StoreStatus::kUnavailable) return step([this] { defer(); });
    vertical_reoffer_ = std::move(set.value);
    StoreStatus rule = StoreStatus::kOk;
    if (!lead_.campaign_id.empty()) {
      Lookup<Campaign> found = dist_.campaigns_.find(lead_.campaign_id);
      rule = found.status;
      campaign_ = std::move(found.value);
    } else if (!lead_.seller_id.empty()) {
      Lookup<Seller> found = dist_.campaigns_.find_seller(lead_.seller_id);
      rule = found.status;
      seller_ = std::move(found.value);
    }
    if (rule == StoreStatus::kUnavailable) return step([this] { defer(); });
    std::optional<std::vector<PostIntent>> found = dist_.store_.get_post_intents(lead_.id);
    // A store that cannot say whether the lead has an intent cannot say whether a buyer may
    // already hold it: no other buyer may be asked until it can.
    if (!found) return step([this] { defer(); });
    // The usual case, no earlier intent: the eligibility checks run in this same blocking call,
    // which spares the auction a round trip through the pool (a sync seller waits on each).
    if (found->empty()) return armed(check_eligibility());
    return step([this, intents = std::move(*found)] {
      arm_deadline();
      recover(intents);
    });
  }

  // A redelivered lead whose posts may have reached buyers: ask those buyers again first, all at
  // once, each with the same Idempotency-Key, so a buyer that already took it answers the same
  // and nobody else is sold the lead (or a share of it) meanwhile. If any took it, the lead is
  // sold to those; if none did, the auction starts without them.
  void recover(const std::vector<PostIntent>& intents) {
    worker_metrics().recoveries.Increment();
    for (const auto& intent : intents) {
      recovered_.push_back(intent.buyer_id);
      const Buyer* b = buyer_by_id(intent.buyer_id);
      if (b == nullptr) continue;  // no longer configured: cannot be asked
      ++recovering_;
      post_to(*b, intent.ping_id, intent.price, /*reserve=*/false, intent.shared, [this](Posted p) {
        if (p == Posted::kStoreDown) store_trouble_ = true;
        if (--recovering_ > 0) return;
        if (!sales_.empty()) return sold();
        if (store_trouble_) return defer();
        eligibility();
      });
    }
    if (recovering_ == 0) eligibility();
  }

  void eligibility() {
    arm_deadline();
    loop_.blocking([self = shared_from_this()] { return self->check_eligibility(); });
  }

  // The auction deadline, set once, on the loop, when the auction is ready to reach its first
  // buyer (its eligibility read, or an earlier attempt's post intents): the buyers' time. Time
  // the lead waited for this process (its store reads queued behind thousands of others on a
  // loaded worker) is our own, and must never decide it unsold. Loop thread only.
  void arm_deadline() {
    if (deadline_ != SteadyTime::max()) return;
    deadline_ = clock_.steady_now() + dist_.options_.auction_timeout;
    deadline_timer_ = loop_.at(deadline_, step([this] { on_deadline(); }));
  }

  // `then` (a task for the loop) with the deadline's timer set first.
  EventLoop::Task armed(EventLoop::Task then) {
    return [self = shared_from_this(), then = std::move(then)]() mutable {
      if (self->finished_) return;
      self->arm_deadline();
      then();
    };
  }

  // Blocking: intake dedupe, then each buyer's eligibility (caps, per-buyer duplicates: store).
  EventLoop::Task check_eligibility() {
    const std::int64_t now_ms = clock_.now_ms();
    const Vertical* vertical = dist_.verticals_.find(lead_.vertical);
    const int lookback_days = vertical ? vertical->duplicate_lookback_days : 30;
    if (lookback_days > 0 && !aged_) {  // an aged lead was found no duplicate when it was live
      std::string earlier =
          dist_.store_.find_duplicate(lead_.vertical, lead_.email, lead_.phone,
                                      now_ms - lookback_days * 86'400'000LL, lead_.id);
      if (!earlier.empty()) {
        return step([this, earlier = std::move(earlier)] {
          d_.status = DeliveryStatus::kDuplicate;
          d_.reason = "duplicate of " + earlier;
          decide();
        });
      }
    }
    std::vector<const Buyer*> eligible;
    std::vector<Ineligibility> ineligible;
    // The person is hashed for the buyers' suppression lists once, and only when a buyer has
    // one (or the lists were never read: then no buyer may have the lead yet).
    const SuppressionLists* lists = dist_.options_.suppression;
    std::optional<PersonFingerprints> person;
    if (lists != nullptr && (!lists->known() || lists->any_buyer_list()))
      person = person_fingerprints(lead_.email, lead_.phone);
    for (const auto& b : *buyers_) {
      if (std::find(recovered_.begin(), recovered_.end(), b.id) != recovered_.end()) continue;
      // An aged lead goes only to buyers of aged leads never posted it (nor sold it).
      if (aged_ && !reoffer::may_offer(b, aged_->history, aged_->sales)) continue;
      std::string why = dist_.ineligibility(b, lead_, now_ms, person);
      if (why.empty()) {
        eligible.push_back(&b);
      } else if (why != "vertical") {
        ineligible.push_back({b.id, std::move(why)});
      }
    }
    return step([this, eligible = std::move(eligible),
                 ineligible = std::move(ineligible)]() mutable {
      for (auto& i : ineligible) {
        if (i.reason.ends_with(":unknown")) store_trouble_ = true;
        d_.ineligible.push_back(std::move(i));
      }
      if (eligible.empty()) {
        // A buyer left out only because our store could not answer might have bought it.
        if (store_trouble_) return defer();
        d_.status = DeliveryStatus::kUnsold;
        d_.reason = "no eligible buyer";
        return decide();
      }
      // The ping tree: tier 1 first; inside a tier, the order of the buyer list.
      std::stable_sort(eligible.begin(), eligible.end(),
                       [](const Buyer* a, const Buyer* b) { return tier_of(*a) < tier_of(*b); });
      for (const Buyer* b : eligible) {
        if (tiers_.empty() || tier_of(*tiers_.back().front()) != tier_of(*b)) tiers_.emplace_back();
        tiers_.back().push_back(b);
      }
      next_tier();
    });
  }

  // The ping tree. A tier is asked only when every tier above it failed to sell the lead (no
  // bid worth posting, every post refused, timeouts), and only while the one auction deadline
  // allows: a lower tier gets whatever time is left. A post whose outcome stays unknown never
  // gets here: it fails the auction (on_post), so no lower tier is ever offered that lead.
  // Capacity is judged when a buyer's tier comes up: a buyer with max_concurrency pings and
  // posts in flight from this process sits the auction out ("at_capacity"); that is not a
  // failure of the buyer's, so it touches neither its health nor its timeouts.
  void next_tier() {
    while (next_tier_ < tiers_.size()) {
      if (clock_.steady_now() >= deadline_) {
        // The deadline came before these tiers' turn: their buyers took no part.
        for (std::size_t t = next_tier_; t < tiers_.size(); ++t)
          for (const Buyer* b : tiers_[t]) d_.ineligible.push_back({b->id, "auction_deadline"});
        next_tier_ = tiers_.size();
        out_of_time_ = true;
        break;
      }
      std::vector<const Buyer*> admitted;
      for (const Buyer* b : tiers_[next_tier_]) {
        if (dist_.at_capacity(*b)) {
          worker_metrics().buyer_at_capacity.Add({{"buyer_id", b->id}}).Increment();
          d_.ineligible.push_back({b->id, "at_capacity"});
          continue;
        }
        admitted.push_back(b);
      }
      ++next_tier_;
      if (!admitted.empty()) return send_pings(admitted);
    }
    // Nobody took it. If our store kept a buyer from being posted, or a request never left this
    // process (no connection or no socket in time), no buyer refused it: the lead goes back for
    // a later attempt rather than being decided by our failure.
    if (store_trouble_) return defer();
    if (local_trouble_) {
      return defer("a request for lead " + lead_.id + " could not be sent from this process");
    }
    d_.status = DeliveryStatus::kUnsold;
    d_.reason = any_ranked_    ? "every post was rejected"
                : any_asked_   ? "no bids"
                : out_of_time_ ? "auction deadline"
                               : "no eligible buyer had capacity";
    decide();
  }

  // One tier's pings, all at once, without PII; fixed-price and direct-post buyers bid.
  void send_pings(const std::vector<const Buyer*>& tier) {
    phase_ = Phase::kPinging;
    any_asked_ = true;
    ++round_;
    pings_.clear();
    bids_.clear();
    for (const Buyer* b : tier) {
      if (aged_ && reoffer::priced_without_ping(*b)) {
        aged_bid(b, reoffer::aged_offer(*b, std::nullopt), "");
        continue;
      }
      if (aged_ && b->mode == DeliveryMode::kDirectPost) continue;  // no ping: no aged price
      if (!aged_ && (b->mode == DeliveryMode::kDirectPost || b->pricing == PricingModel::kFixed)) {
        bids_.push_back({b, b->price, "", shared_offer(*b, std::nullopt)});
        continue;
      }
      pings_.push_back({b, new_id(kPingPrefix), clock_.now_ms(), std::nullopt});
    }
    pings_out_ = pings_.size();
    if (pings_out_ == 0) return start_posts();
    // Our client answers every ping sent at once within its timeout, a timeout included. One
    // still unanswered well past the tier's longest waited here (our queue for a connection, or
    // a late loop); one not sent by then never will be, the auction no longer listening.
    std::vector<HttpRequest> requests;
    std::chrono::milliseconds longest{0};
    for (const Ping& p : pings_) {
      requests.push_back(make_ping_request(*p.buyer, lead_, p.ping_id, aged_.has_value()));
      longest = std::max(longest, requests.back().timeout);
    }
    for (std::size_t i = 0; i < pings_.size(); ++i) {
      requests[i].max_queue_wait = longest + kHeldUpMargin;
      send(*pings_[i].buyer, std::move(requests[i]),
           [this, i, round = round_](const HttpResponse& r) { on_ping(round, i, r); });
    }
    const SteadyTime held_up_at = clock_.steady_now() + longest + kHeldUpMargin;
    if (held_up_at < deadline_)
      held_up_timer_ = loop_.at(held_up_at, step([this, round = round_] { on_held_up(round); }));
  }

  // Sends a ping or post to `b`, counted in the buyer's requests in flight until it is answered
  // (however late, even after this auction is over); `on_answer` then runs on the loop unless
  // the auction is over.
  template <typename F>
  void send(const Buyer& b, HttpRequest request, F on_answer) {
    dist_.request_sent(b.id);
    auto post = loop_.poster();
    dist_.http_.send(std::move(request),
                     [post, self = shared_from_this(), id = b.id, asked = clock_.steady_now(),
                      on_answer = std::move(on_answer)](HttpResponse r) mutable {
                       post([self, id = std::move(id), asked, on_answer = std::move(on_answer),
                             r = std::move(r)]() mutable {
                         // What of its time the request spent waiting on us (our client's queue for
                         // a connection, then our loop), not on the buyer: the worker's admission
                         // reads it.
                         const auto total = self->clock_.steady_now() - asked;
                         self->dist_.observe_request_queue(r.not_sent ? total : total - r.elapsed);
                         self->dist_.request_answered(id);
                         self->step([&on_answer, &r] { on_answer(r); })();
                       });
                     });
  }

  void on_ping(std::size_t round, std::size_t i, const HttpResponse& r) {
    // Too late: its tier was cut by the deadline, or is over and a lower one is being asked.
    if (round != round_ || phase_ != Phase::kPinging) return;
    Ping& p = pings_[i];
    if (p.attempt) return;
    worker_metrics().observe_buyer(p.buyer->id, "ping", r);
    dist_.observe_health(p.buyer->id, r);
    // It never left this process, or timed out while this process was starved of CPU (its
    // answer may have been on the way): the buyer's part is unknown, so the failure is ours.
    if (r.not_sent || (r.timed_out && r.stalled_here)) {
      held_up_here();
      p.attempt = held_up(*p.buyer, p.started_ms);
      if (--pings_out_ == 0) start_posts();
      return;
    }
    Attempt a = attempt_from(*p.buyer, AttemptKind::kPing, p.started_ms, r);
    const PingAnswer answer = read_ping_answer(*p.buyer, r);
    if (aged_) {
      const std::optional<Cents> offer = reoffer::aged_offer(*p.buyer, answer.aged_bid);
      if (offer) {
        a.outcome = AttemptOutcome::kBid;
        a.bid = offer;
        aged_bid(p.buyer, offer, p.ping_id);
      } else {
        if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError)
          a.outcome = AttemptOutcome::kNoBid;
        a.reason = answer.aged_bid         ? "below min_bid"
                   : answer.reason.empty() ? "no aged_bid"
                                           : answer.reason;
      }
    } else if (answer.bid || answer.shared_bid) {
      a.outcome = AttemptOutcome::kBid;
      a.bid = answer.bid;
      const Cents shared = shared_offer(*p.buyer, answer.shared_bid);
      // An exclusive bid under the buyer's floor is no bid; its share, if any, still counts.
      Cents exclusive = answer.bid.value_or(0);
      if (answer.bid && *answer.bid < p.buyer->min_bid) {
        a.reason = "below min_bid";
        exclusive = 0;
      }
      if (exclusive > 0 || shared > 0) bids_.push_back({p.buyer, exclusive, p.ping_id, shared});
    } else {
      if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError)
        a.outcome = AttemptOutcome::kNoBid;
      a.reason = answer.reason;
    }
    p.attempt = std::move(a);
    if (--pings_out_ == 0) start_posts();
  }

  void held_up_here() {  // a ping held up by our doing: the lead delayed, fewer auctions at once
    local_trouble_ = true;
    dist_.note_held_up();
  }
  // The tier's pings still unanswered went no further than this process in their buyers' time:
  // each is skipped for our reason, never the buyer's timeout, and the tier goes on with its
  // bids. If nobody buys, the lead is delayed rather than decided by our queue.
  void on_held_up(std::size_t round) {
    held_up_timer_ = 0;
    if (round != round_ || phase_ != Phase::kPinging) return;
    for (auto& p : pings_) {
      if (p.attempt) continue;
      held_up_here();
      worker_metrics().held_up(p.buyer->id, "ping");
      p.attempt = held_up(*p.buyer, p.started_ms);
    }
    start_posts();
  }

  void on_deadline() {
    deadline_timer_ = 0;
    if (phase_ != Phase::kPinging) return;  // a post in flight runs to its own timeout
    // Each ping carries its buyer's timeout; the auction deadline is a second guard.
    for (auto& p : pings_) {
      if (p.attempt) continue;
      p.attempt = unanswered(*p.buyer, AttemptKind::kPing, p.started_ms, AttemptOutcome::kTimeout,
                             std::nullopt, "auction deadline");
    }
    start_posts();
  }

  // A share's offer: the buyer's shared bid, else shared price; 0 where leads sell exclusively.
  Cents shared_offer(const Buyer& b, std::optional<Cents> shared_bid) const {
    if (max_sales_ < 2) return 0;
    return shared_bid.value_or(b.shared_price);
  }

  // The tier's posts. The lead is sold exclusively (best bid first, down the ranking until one
  // accepts) or shared (to the best max_sales shared bidders at once, each refusal making room
  // for the next), whichever earns more; if the chosen way sells nothing, the other is tried
  // with the buyers not yet posted, while the deadline allows.
  void start_posts() {
    phase_ = Phase::kPosting;
    if (held_up_timer_ != 0) loop_.cancel(std::exchange(held_up_timer_, 0));
    for (auto& p : pings_) d_.attempts.push_back(std::move(*p.attempt));
    pings_.clear();
    {
      std::lock_guard lock(dist_.rng_mu_);
      shared_ranked_ = rank_shared_bids(bids_, dist_.rng_);
      ranked_ = aged_ ? rank_aged_bids(std::move(bids_), dist_.rng_)
                      : rank_bids(std::move(bids_), dist_.rng_);
    }
    bids_.clear();
    posted_.clear();
    exclusive_tried_ = shared_tried_ = false;
    if (!ranked_.empty() || !shared_ranked_.empty()) any_ranked_ = true;
    if (shares_only_) {
      exclusive_tried_ = true;  // a lead sold in shares before is never sold whole
      return start_shares();
    }
    if (shared_earns_more(ranked_, shared_ranked_, max_sales_)) return start_shares();
    exclusive_tried_ = true;
    next_post(0);
  }

  bool posted(const Buyer& b) const {
    return std::find(posted_.begin(), posted_.end(), b.id) != posted_.end();
  }

  void next_post(std::size_t index) {
    for (; index < ranked_.size(); ++index) {
      const Bid& bid = ranked_[index];
      if (posted(*bid.buyer)) continue;
      if (clock_.steady_now() < deadline_) {
        posted_.push_back(bid.buyer->id);
        post_to(*bid.buyer, bid.ping_id, bid.amount, /*reserve=*/true, /*shared=*/false,
                [this, index](Posted p) {
                  if (p == Posted::kAccepted) return sold();
                  if (p == Posted::kStoreDown) store_trouble_ = true;
                  next_post(index + 1);
                });
        return;
      }
      d_.attempts.push_back(unanswered(*bid.buyer, AttemptKind::kPost, clock_.now_ms(),
                                       AttemptOutcome::kSkipped, bid.amount, "auction deadline"));
    }
    if (!shared_tried_ && max_sales_ > 1 && !shared_ranked_.empty()) return start_shares();
    next_tier();  // nobody in this tier took it
  }

  // A shared sale: up to max_sales posts in flight, best shared bid first; each refusal makes
  // room for the next bidder. Every share has its own post intent and Idempotency-Key.
  void start_shares() {
    shared_tried_ = true;
    next_share_ = 0;
    fill_shares();
  }

  void fill_shares() {
    const auto room = [this] {
      return sales_.size() + shares_out_ < static_cast<std::size_t>(max_sales_);
    };
    for (; room() && next_share_ < shared_ranked_.size(); ++next_share_) {
      const Bid& bid = shared_ranked_[next_share_];
      if (posted(*bid.buyer)) continue;
      if (clock_.steady_now() >= deadline_) {
        d_.attempts.push_back(unanswered(*bid.buyer, AttemptKind::kPost, clock_.now_ms(),
                                         AttemptOutcome::kSkipped, bid.shared, "auction deadline"));
        continue;
      }
      posted_.push_back(bid.buyer->id);
      ++shares_out_;
      post_to(*bid.buyer, bid.ping_id, bid.shared, /*reserve=*/true, /*shared=*/true,
              [this](Posted p) {
                --shares_out_;
                if (p == Posted::kStoreDown) store_trouble_ = true;
                fill_shares();
              });
    }
    if (shares_out_ > 0) return;  // the rest answer first
    if (!sales_.empty()) return sold();
    if (!exclusive_tried_) {
      exclusive_tried_ = true;
      return next_post(0);
    }
    next_tier();  // nobody in this tier took it
  }

  // One post, asked again with the same Idempotency-Key while its outcome is unknown. Moving down
  // the ranking after a timeout could sell the lead twice: the buyer may have taken it and only
  // its answer was late. A buyer that answers at all (taken, refused, an HTTP error) settles it.
  // Still unknown at the auction deadline: the auction fails and the lead goes back to the queue
  // (retry topic) with its post intents, so the next attempt asks these buyers first again; after
  // the last attempt it is recorded as failed and dead-lettered for the operator to settle.
  // `reserve`: take a cap slot with the intent (a new post); a recovered intent already holds one.
  // Several posts may be out at once (the shares of a shared sale), each under its own number.
  void post_to(const Buyer& b, std::string ping_id, Cents price, bool reserve, bool shared,
               std::function<void(Posted)> then) {
    const int n = ++posts_made_;
    posts_[n] = {&b, std::move(ping_id), price, reserve, shared, std::move(then)};
    write_intent(n);
  }

  void write_intent(int n) {
    const OpenPost& post = posts_.at(n);
    std::vector<CapWindow> caps;
    if (post.reserve)
      for (const auto& c : cap_windows(*post.buyer, clock_.now_ms() / 1000))
        caps.push_back(c.window);
    PostIntent intent{lead_.id,     post.buyer->id,  post.price,
                      post.ping_id, clock_.now_ms(), post.shared};
    auto then = [self = shared_from_this(), n](StoreStatus s) {
      self->step([self = self.get(), n, s] { self->on_intent(n, s); })();
    };
    dist_.write_intent({std::move(intent), std::move(caps)}, std::move(then));
  }

  void on_intent(int n, StoreStatus s) {
    OpenPost& post = posts_.at(n);
    if (s == StoreStatus::kLimitReached) {
      d_.attempts.push_back(unanswered(*post.buyer, AttemptKind::kPost, clock_.now_ms(),
                                       AttemptOutcome::kSkipped, post.price,
                                       limit_reached_reason(*post.buyer, clock_.now_ms() / 1000)));
      return settle(n, Posted::kNotPosted);
    }
    if (s == StoreStatus::kUnavailable) {
      // Posting without a durable intent could sell the lead twice after a crash, so the buyer
      // waits for the store: the intent is tried again after a pause, until the deadline.
      worker_metrics().store_errors.Increment();
      if (clock_.steady_now() + dist_.options_.post_retry_pause < deadline_) {
        loop_.at(clock_.steady_now() + dist_.options_.post_retry_pause,
                 step([this, n] { write_intent(n); }));
        return;
      }
      return settle(n, Posted::kStoreDown);
    }
    if (s != StoreStatus::kOk) return settle(n, Posted::kNotPosted);  // decided elsewhere
    post.reserve = false;  // the intent holds the slot from now on
    const std::int64_t started = clock_.now_ms();
    // Never held back by max_concurrency: the buyer was admitted to this auction when its tier
    // came up, and it bid; refusing it the post now would waste its bid and our lead. The post
    // counts in flight like a ping, so it holds back the buyer's next pings.
    send(*post.buyer, make_post_request(*post.buyer, lead_, post.ping_id, post.price, post.shared),
         [this, n, started](const HttpResponse& r) { on_post(n, started, r); });
  }

  void on_post(int n, std::int64_t started, const HttpResponse& r) {
    const OpenPost& post = posts_.at(n);
    const Buyer& b = *post.buyer;
    if (r.not_sent) local_trouble_ = true;
    worker_metrics().observe_buyer(b.id, "post", r);
    dist_.observe_health(b.id, r);
    Attempt a = attempt_from(b, AttemptKind::kPost, started, r);
    const PostAnswer answer = read_post_answer(b, r);
    a.bid = post.price;
    if (answer.accepted) {
      a.outcome = AttemptOutcome::kAccepted;
    } else {
      if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError)
        a.outcome = AttemptOutcome::kRejected;
      a.reason = answer.reason;
    }
    if (post.shared) a.reason = a.reason.empty() ? "shared" : "shared: " + a.reason;
    // No answer may mean the buyer took it and the answer was lost; a post that certainly never
    // reached the buyer (no connection) is refused, and the next bidder is asked.
    const bool unknown = !answer.accepted && !r.not_delivered && (r.timed_out || r.status == 0);
    d_.attempts.push_back(std::move(a));
    if (unknown) {
      if (clock_.steady_now() + dist_.options_.post_retry_pause < deadline_) {
        loop_.at(clock_.steady_now() + dist_.options_.post_retry_pause,
                 step([this, n] { write_intent(n); }));
        return;
      }
      worker_metrics().post_outcome_unknown.Increment();
      return fail("no answer from buyer " + b.id + " to the post of lead " + lead_.id +
                  "; it may have taken the lead, so no other buyer is offered it");
    }
    if (!answer.accepted) return settle(n, Posted::kDeclined);
    if (!post.shared) sold_whole_ = true;
    sales_.push_back({b.id, post.price, 0, answer.buyer_lead_id});
    settle(n, Posted::kAccepted);
  }

  void settle(int n, Posted p) {
    auto it = posts_.find(n);
    auto then = std::move(it->second.then);
    posts_.erase(it);
    then(p);
  }

  // The lead is sold to the buyers that accepted: the best-paying one first, the seller paid by
  // its rule on the total, each sale carrying its part of that payout.
  void sold() {
    std::stable_sort(sales_.begin(), sales_.end(),
                     [](const Sale& x, const Sale& y) { return x.price > y.price; });
    if (aged_) return aged_sold();
    std::vector<Cents> prices;
    for (const auto& s : sales_) prices.push_back(s.price);
    const money::PricedSales priced = money::price_sales(
        prices,
        money::payout_model_of(campaign_ ? &*campaign_ : nullptr, seller_ ? &*seller_ : nullptr));
    for (std::size_t i = 0; i < sales_.size(); ++i) sales_[i].payout = priced.parts[i];
    d_.status = DeliveryStatus::kDelivered;
    d_.buyer_id = sales_.front().buyer_id;
    d_.buyer_lead_id = sales_.front().buyer_lead_id;
    d_.price = priced.total;
    d_.payout = priced.payout;
    d_.sales = std::move(sales_);
    decide();
  }

  void decide() {
    if (aged_) return aged_over();
    d_.decided_at_ms = clock_.now_ms();
    Decision decision;
    if (d_.status == DeliveryStatus::kUnsold)
      decision.reoffer_at_ms =
          reoffer::next_offer_at(vertical_, reoffer_policy(), {lead_.received_at_ms, 0, 0, false})
              .value_or(0);
    decision.distribution = std::move(d_);
    finish(std::move(decision));
  }

  // The re-offer policy the lead follows: its campaign's own, else its vertical's.
  const ReofferPolicy& reoffer_policy() const {
    return reoffer_policy_of(vertical_, campaign_ ? &*campaign_ : nullptr,
                             vertical_reoffer_ ? &*vertical_reoffer_ : nullptr);
  }

  // An aged price offered: its exclusive bid and, where shares are allowed, its share.
  void aged_bid(const Buyer* b, std::optional<Cents> offer, const std::string& ping_id) {
    if (!offer) return;
    bids_.push_back(
        {b, shares_only_ ? 0 : *offer, ping_id, max_sales_ > 1 || shares_only_ ? *offer : 0});
  }

  // The aged sales: the seller is paid by its rule on the lead's whole total (earlier shares
  // included), each new sale carrying what that payout grows by (money::settle_sold).
  void aged_sold() {
    const auto model =
        money::payout_model_of(campaign_ ? &*campaign_ : nullptr, seller_ ? &*seller_ : nullptr);
    money::SalesHeld held{static_cast<std::int64_t>(aged_->sales.size()), 0, 0};
    for (const auto& s : aged_->sales)
      held = {held.count, held.revenue + s.price, held.payout + s.payout};
    for (auto& s : sales_) {
      const money::SettledSale settled = money::settle_sold(
          held, s.price, [&](Cents total) { return money::payout_of(model, total); });
      s.payout = settled.payout;
      held = {held.count + 1, settled.lead_price, settled.lead_payout};
    }
    aged_over();
  }

  // The re-offer's outcome: its attempts (marked with its round), its sales, and the next.
  void aged_over() {
    ReofferOutcome o;
    o.lead_id = lead_.id;
    o.round = aged_->round;
    o.at_ms = clock_.now_ms();
    for (auto& a : d_.attempts) a.reoffer = aged_->round;
    o.attempts = std::move(d_.attempts);
    const int sales = static_cast<int>(aged_->sales.size() + sales_.size());
    if (!sales_.empty()) o.reason = "sold aged in re-offer " + std::to_string(aged_->round);
    o.sales = std::move(sales_);
    if (reoffer::within_consent(vertical_, lead_.received_at_ms, o.at_ms))
      o.next_at_ms =
          reoffer::next_offer_at(vertical_, reoffer_policy(),
                                 {lead_.received_at_ms, aged_->round, sales, sold_whole_})
              .value_or(0);
    Decision decision;
    decision.reoffer = std::move(o);
    finish(std::move(decision));
  }
  void defer() {
    defer("the store could not answer for lead " + lead_.id + " before the auction deadline");
  }
  void defer(std::string why) {
    Decision decision;
    decision.kind = Decision::Kind::kDeferred;
    decision.error = std::move(why);
    finish(std::move(decision));
  }
  void fail(std::string error) {
    Decision decision;
    decision.kind = Decision::Kind::kFailed;
    decision.error = std::move(error);
    // The pings and posts it made go with it: a lead recorded failed shows the operator who
    // must settle it when it was posted, to whom and at what price.
    if (aged_)
      for (auto& a : d_.attempts) a.reoffer = aged_->round;
    decision.distribution.attempts = std::move(d_.attempts);
    decision.distribution.ineligible = std::move(d_.ineligible);
    finish(std::move(decision));
  }
  void finish(Decision decision) {
    if (finished_) return;
    finished_ = true;
    if (deadline_timer_ != 0) loop_.cancel(deadline_timer_);
    if (held_up_timer_ != 0) loop_.cancel(held_up_timer_);
    loop_.release();
    auto done = std::move(done_);
    done(std::move(decision));
  }

  enum class Phase { kLooking, kPinging, kPosting };
  struct OpenPost {
    const Buyer* buyer = nullptr;
    std::string ping_id;
    Cents price = 0;
    bool reserve = false;
    bool shared = false;
    std::function<void(Posted)> then;
  };

  Distributor& dist_;
  EventLoop& loop_;
  const Clock& clock_;
  const Lead lead_;
  std::function<void(Decision)> done_;
  // Set once by arm_deadline, before any buyer is asked (none until then); never moves.
  SteadyTime deadline_ = SteadyTime::max();
  std::shared_ptr<const std::vector<Buyer>> buyers_;
  std::optional<Campaign> campaign_;
  std::optional<Seller> seller_;
  int max_sales_ = 1;  // the vertical's: 1 sells exclusively
  Vertical vertical_;  // the lead's (its re-offer policy, consent window)
  std::optional<ReofferPolicy> vertical_reoffer_;  // its policy the operator set, if any
  std::optional<AgedLead> aged_;                   // set for a re-offer (docs/reoffers.md)
  bool shares_only_ = false;                       // an aged lead already sold in shares
  bool sold_whole_ = false;                        // an exclusive post was accepted
  std::vector<std::string> recovered_;             // buyers of intents left by an earlier attempt
  int recovering_ = 0;                             // their posts still out
  Distribution d_;
  std::vector<Sale> sales_;  // accepted posts
  Phase phase_ = Phase::kLooking;
  std::vector<std::vector<const Buyer*>> tiers_;  // eligible buyers, by tier, tier 1 first
  std::size_t next_tier_ = 0;                     // the index in tiers_ to ask next
  std::size_t round_ = 0;     // tiers asked so far: a ping's answer names its own
  bool any_asked_ = false;    // some tier was pinged (or bid without a ping)
  bool any_ranked_ = false;   // some tier had a bid worth posting
  bool out_of_time_ = false;  // the deadline came before some tier's turn
  std::vector<Ping> pings_;
  std::size_t pings_out_ = 0;
  std::vector<Bid> bids_;
  std::vector<Bid> ranked_;          // the tier's exclusive bids, best first
  std::vector<Bid> shared_ranked_;   // its shared bids, best first
  std::vector<std::string> posted_;  // buyers posted in this tier (either way)
  bool exclusive_tried_ = false, shared_tried_ = false;
  std::size_t next_share_ = 0;  // in shared_ranked_
  std::size_t shares_out_ = 0;  // shared posts not yet answered
  std::map<int, OpenPost> posts_;
  int posts_made_ = 0;
  EventLoop::TimerId deadline_timer_ = 0;
  EventLoop::TimerId held_up_timer_ = 0;  // the pinging tier's (send_pings)
  bool store_trouble_ = false;            // our store kept a buyer out or unposted
  bool local_trouble_ = false;            // a ping or post never left this process
  bool finished_ = false;
};

void run_auction(Distributor& dist, Lead lead, std::function<void(Decision)> done) {
  std::make_shared<Auction>(dist, std::move(lead), std::move(done))->start();
}

void run_aged_auction(Distributor& dist, Lead lead, AgedLead aged,
                      std::function<void(Decision)> done) {
  std::make_shared<Auction>(dist, std::move(lead), std::move(done), std::move(aged))->start();
}

}  // namespace leadflow
