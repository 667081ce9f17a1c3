#pragma once
// Both adapters' rows of the postbacks port: the columns and readers of endpoints, outbox rows
// and attempts; the outbox events an outcome, a return and a settlement write (the rule of which
// is common/postbacks'); and the cache of sellers with an active endpoint that lets the outcome
// writer skip the outbox statement for everyone else.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/postbacks/rules.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/store/postbacks.hpp"

namespace leadflow {

#define LF_POSTBACK_ENDPOINT_COLUMNS                                                       \
  "id, seller_id, campaign_id, url, events, secret, active, created_at_ms, updated_at_ms," \
  " previous_secret, previous_secret_expires_at_ms, secret_rotated_at_ms, on_since_ms,"    \
  " off_since_ms"
/// The columns an endpoint is read from: those it is written with and its version, which the
/// store keeps (1 when made, one more with each change).
#define LF_POSTBACK_ENDPOINT_READ_COLUMNS LF_POSTBACK_ENDPOINT_COLUMNS ", version"

#define LF_POSTBACK_OUTBOX_COLUMNS                                                              \
  "event_id, kind, lead_id, seller_id, campaign_id, status, sold, payout_cents, reason,"        \
  " occurred_at, endpoint_id, state, attempts, next_at, last_status, last_error, delivered_at," \
  " window_from"

/// The columns of an event (postback_events) that the outcome's transaction writes.
#define LF_POSTBACK_EVENT_COLUMNS                                                         \
  "event_id, kind, lead_id, seller_id, campaign_id, status, sold, payout_cents, reason, " \
  "occurred_at"

/// A row of the view postback_event_deliveries (an event not yet fanned out, and one endpoint it
/// goes to) read as the outbox row it becomes: pending, no attempt, due and its 24 hours counted
/// from the event.
#define LF_POSTBACK_EVENT_AS_OUTBOX \
  LF_POSTBACK_EVENT_COLUMNS ", endpoint_id, 'pending', 0, occurred_at, 0, '', 0, occurred_at"

/// The same for a claim's fan-out, beside the claim's holds (held_endpoint, held_until; NULL for
/// an endpoint not held): due at the later of its event and its endpoint's hold.
#define LF_POSTBACK_EVENT_AS_HELD_OUTBOX                \
  LF_POSTBACK_EVENT_COLUMNS                             \
  ", endpoint_id, 'pending', 0,"                        \
  " CASE WHEN held_until > occurred_at THEN held_until" \
  " ELSE occurred_at END, 0, '', 0, occurred_at"

/// Events still to deliver, the fanned-out rows pending and the events not yet fanned out (once
/// per endpoint they go to), and the oldest of them.
#define LF_POSTBACK_BACKLOG                                                      \
  "SELECT COUNT(*), COALESCE(MIN(occurred_at), 0) FROM (SELECT occurred_at FROM" \
  " postback_outbox WHERE state = 'pending' UNION ALL SELECT occurred_at FROM"   \
  " postback_event_deliveries) AS pending"

#define LF_POSTBACK_ATTEMPT_COLUMNS \
  "event_id, endpoint_id, at, status, latency_us, error, then_state, next_at"

template <class Row>
PostbackEndpoint read_postback_endpoint(const Row& r) {
  PostbackEndpoint e;
  e.id = r.text(0);
  e.seller_id = r.text(1);
  e.campaign_id = r.text(2);
  e.url = r.text(3);
  e.events = r.text(4);
  e.secret = r.text(5);
  e.active = r.boolean(6);
  e.created_at_ms = r.int64(7);
  e.updated_at_ms = r.int64(8);
  e.previous_secret = r.text(9);
  e.previous_secret_expires_at_ms = r.int64(10);
  e.secret_rotated_at_ms = r.int64(11);
  e.on_since_ms = r.int64(12);
  e.off_since_ms = r.int64(13);
  e.version = r.int64(14);
  return e;
}

/// One row of an endpoint's latest attempts (its id, an attempt's status), read in endpoint then
/// newest-first order, and those rows as each endpoint's statuses.
template <class Row>
std::pair<std::string, int> read_endpoint_status(const Row& r) {
  return {r.text(0), static_cast<int>(r.int64(1))};
}
inline std::optional<std::vector<RecentStatuses>> group_statuses(
    std::optional<std::vector<std::pair<std::string, int>>> rows) {
  if (!rows) return std::nullopt;
  std::vector<RecentStatuses> out;
  for (auto& [endpoint_id, status] : *rows) {
    if (out.empty() || out.back().endpoint_id != endpoint_id)
      out.push_back({std::move(endpoint_id), {}});
    out.back().statuses.push_back(status);
  }
  return out;
}

inline PostbackState parse_postback_state(std::string_view s) {
  if (s == "delivered") return PostbackState::kDelivered;
  if (s == "expired") return PostbackState::kExpired;
  return PostbackState::kPending;
}

template <class Row>
PostbackDelivery read_postback_delivery(const Row& r) {
  PostbackDelivery d;
  PostbackFacts& f = d.facts;
  f.event_id = r.text(0);
  f.kind = r.text(1);
  f.lead_id = r.text(2);
  f.seller_id = r.text(3);
  f.campaign_id = r.text(4);
  f.status = r.text(5);
  f.sold = r.boolean(6);
  f.payout = r.int64(7);
  f.reason = r.text(8);
  f.occurred_at_ms = r.int64(9);
  d.endpoint_id = r.text(10);
  d.state = parse_postback_state(r.text(11));
  d.attempts = static_cast<int>(r.int64(12));
  d.next_at_ms = r.int64(13);
  d.last_status = static_cast<int>(r.int64(14));
  d.last_error = r.text(15);
  d.delivered_at_ms = r.int64(16);
  d.window_from_ms = r.int64(17);
  return d;
}

template <class Row>
PostbackAttempt read_postback_attempt(const Row& r) {
  PostbackAttempt a;
  a.event_id = r.text(0);
  a.endpoint_id = r.text(1);
  a.at_ms = r.int64(2);
  a.status = static_cast<int>(r.int64(3));
  a.latency_us = r.int64(4);
  a.error = r.text(5);
  a.then = parse_postback_state(r.text(6));
  a.next_at_ms = r.int64(7);
  return a;
}

/// One event to write to the outbox, once per active endpoint of the lead's seller (and
/// campaign) subscribed to its kind; the lead's seller, campaign and status come from the lead
/// row in the same transaction.
struct OutboxEvent {
  std::string event_id;
  std::string kind;
  std::string lead_id;
  bool sold = false;
  Cents payout = 0;
  std::string reason;
  std::int64_t at_ms = 0;
};

/// The event a decided outcome writes, if it reports one (postbacks::outcome_event).
inline std::optional<OutboxEvent> outcome_outbox_event(const std::string& lead_id,
                                                       const Distribution& d) {
  const auto kind = postbacks::outcome_event(d.status);
  if (!kind) return std::nullopt;
  return OutboxEvent{postbacks::new_event_id(d.decided_at_ms),
                     std::string(postbacks::kind_name(*kind)),
                     lead_id,
                     d.status == DeliveryStatus::kDelivered,
                     d.payout,
                     d.reason,
                     d.decided_at_ms};
}

/// The event a re-offer that sold writes (docs/reoffers.md): the lead sold later as an aged lead,
/// with the payout of this sale. A re-offer that did not sell reports nothing: its unsold was
/// reported when the live auction ended.
inline OutboxEvent reoffer_outbox_event(const std::string& lead_id, Cents payout,
                                        const std::string& reason, std::int64_t at_ms) {
  const auto kind = postbacks::outcome_event(DeliveryStatus::kDelivered);
  return {postbacks::new_event_id(at_ms),
          std::string(postbacks::kind_name(*kind)),
          lead_id,
          true,
          payout,
          reason,
          at_ms};
}

/// A return's event: the payout it reverses and the buyer's reason for it.
inline OutboxEvent return_outbox_event(const LeadReturn& r) {
  return {postbacks::new_event_id(r.returned_at_ms),
          std::string(postbacks::kind_name(postbacks::EventKind::kReturned)),
          r.lead_id,
          false,
          r.payout,
          r.reason,
          r.returned_at_ms};
}

/// A settlement's event: sold or not, and the payout it made.
inline OutboxEvent settlement_outbox_event(const Settlement& s) {
  return {postbacks::new_event_id(s.at_ms),
          std::string(postbacks::kind_name(postbacks::EventKind::kSettled)),
          s.lead_id,
          s.sold,
          s.sold ? s.payout : 0,
          "",
          s.at_ms};
}

/// Which sellers have an endpoint, on or off, as SQLite's adapter last read it. The outcome
/// writer asks it before writing a lead's event, so a lead whose seller has no endpoint costs no
/// statement (one switched off moments ago may still be owed it: the view decides). Read again at
/// the next write after an endpoint changed (SQLite has one process, so its own changes are all
/// there are), and when older than kRefresh. PostgreSQL's adapter keeps no such cache: its
/// outcome transactions read the endpoints themselves, other processes making them too.
/// Thread-safe.
class PostbackSubscribers {
 public:
  static constexpr std::chrono::milliseconds kRefresh{2000};

  bool stale() const {
    std::lock_guard lock(mu_);
    return !read_ || std::chrono::steady_clock::now() - read_at_ > kRefresh;
  }
  /// Taken before a read of the endpoints, and handed to set() with what it read.
  std::uint64_t version() const { return version_.load(); }
  /// What a read begun at `read_version` found. A change heard while it ran leaves the cache
  /// stale, so the next write reads again rather than trust a read that may have missed it.
  void set(std::vector<std::string> sellers, std::uint64_t read_version) {
    auto fresh = std::make_shared<const std::unordered_set<std::string>>(
        std::make_move_iterator(sellers.begin()), std::make_move_iterator(sellers.end()));
    std::lock_guard lock(mu_);
    sellers_ = std::move(fresh);
    read_ = version_.load() == read_version;
    read_at_ = std::chrono::steady_clock::now();
  }
  /// An endpoint changed (after its write committed): read again before the next write.
  void invalidate() {
    std::lock_guard lock(mu_);
    ++version_;
    read_ = false;
  }
  bool has(const std::string& seller_id) const {
    std::lock_guard lock(mu_);
    return sellers_->count(seller_id) > 0;
  }
  bool any() const {
    std::lock_guard lock(mu_);
    return !sellers_->empty();
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const std::unordered_set<std::string>> sellers_ =
      std::make_shared<const std::unordered_set<std::string>>();
  bool read_ = false;
  std::chrono::steady_clock::time_point read_at_{};
  std::atomic<std::uint64_t> version_{1};
};

}  // namespace leadflow
