#pragma once
// The postbacks port (docs/postbacks.md): sellers' endpoints, and the outbox of the events they
// are sent. The event of an outcome, a return or a settlement is written by the transaction that
// records it (record_outcomes, record_return(s), settle_lead), once, so no event is lost or
// invented across a crash; a claim fans it out into one row per endpoint it goes to (the
// seller's active endpoints for all its campaigns or the lead's, subscribed to its kind, made no
// later than the event), and until then it reads as those rows, pending and due. Which event a
// change reports is common/postbacks' rule; the store keeps and hands back what it is given.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// A seller's endpoint, for all of its campaigns or one of them.
struct PostbackEndpoint {
  std::string id;           // "pbe_..."
  std::string seller_id;    // its owner
  std::string campaign_id;  // "" = every campaign of the seller (and its leads without one)
  std::string url;
  std::string events;  // the subscriptions as postbacks::events_text (",lead.sold,...,")
  std::string secret;  // the signing key; the API shows it once, at creation or rotation
  bool active = true;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
  /// After a rotation: the secret it replaced, which signs too until its expiry
  /// (postbacks::signing_secrets); "" and 0 when none is kept.
  std::string previous_secret;
  std::int64_t previous_secret_expires_at_ms = 0;
  std::int64_t secret_rotated_at_ms = 0;  // the last rotation; 0 = never rotated
  /// Its last spell on (postbacks::Spell): it takes the events that happen from on_since_ms
  /// and, switched off, before off_since_ms (0 while on).
  std::int64_t on_since_ms = 0;
  std::int64_t off_since_ms = 0;
  /// Its version (docs/versions.md): 1 when made, one more with each change and rotation.
  std::int64_t version = 1;
};

/// A rotation of an endpoint's signing secret (docs/postbacks.md#rotating-the-secret).
struct SecretRotation {
  std::string endpoint_id;
  std::string secret;  // the new one
  std::int64_t at_ms = 0;
  /// Until when the secret it replaces still signs (postbacks::previous_secret_expiry); 0: it
  /// ends now and is not kept.
  std::int64_t previous_expires_at_ms = 0;
  /// The secret the rotation was decided on: the store rotates only while the endpoint still
  /// holds it ("" = whatever it holds), so two rotations at once cannot both replace it.
  std::string expected_secret;
};

/// What an event says, as its transaction wrote it (the sender builds the body from these alone,
/// through the visibility model, so every attempt sends the same body).
struct PostbackFacts {
  std::string event_id;  // "evt_...": the same for every endpoint and attempt
  std::string kind;      // "lead.sold", ...
  std::string lead_id;
  std::string seller_id;
  std::string campaign_id;
  std::string status;  // the lead's status after the change ("delivered", "unsold", ...)
  bool sold = false;   // lead.settled: settled as sold
  Cents payout = 0;    // the seller's payout earned (sold, settled) or reversed (returned)
  std::string reason;  // the operator's reason; the body carries the seller's words for it
  std::int64_t occurred_at_ms = 0;
};

/// Where an outbox row stands.
enum class PostbackState { kPending, kDelivered, kExpired };
inline std::string_view to_string(PostbackState s) {
  switch (s) {
    case PostbackState::kDelivered:
      return "delivered";
    case PostbackState::kExpired:
      return "expired";
    case PostbackState::kPending:
      break;
  }
  return "pending";
}

/// One event for one endpoint, with its delivery so far.
struct PostbackDelivery {
  PostbackFacts facts;
  std::string endpoint_id;
  PostbackState state = PostbackState::kPending;
  int attempts = 0;
  std::int64_t next_at_ms = 0;  // when it is due (pending)
  int last_status = 0;          // the last attempt's HTTP status (0: none, or no answer)
  std::string last_error;
  std::int64_t delivered_at_ms = 0;
  /// Its 24 hours of retries run from here: the event's time, or its last replay.
  std::int64_t window_from_ms = 0;
};

/// One attempt at delivering an event to an endpoint, and what it leaves the row at:
/// kDelivered, kPending again at `next_at_ms`, or kExpired (its 24 hours are over).
struct PostbackAttempt {
  std::string event_id;
  std::string endpoint_id;
  std::int64_t at_ms = 0;
  int status = 0;  // HTTP status, 0 when no answer came
  std::int64_t latency_us = 0;
  std::string error;  // transport error or timeout, "" on an answer
  PostbackState then = PostbackState::kPending;
  std::int64_t next_at_ms = 0;
};

/// A claimed row put back unattempted, due again at `next_at_ms`.
struct PostbackRelease {
  std::string event_id;
  std::string endpoint_id;
  std::int64_t next_at_ms = 0;
};

/// An endpoint whose events a sender would send back if it claimed them (failing, at its limit
/// of waiting events, switched off): a claim fans its events out due at `until_ms` at the
/// earliest, so they are not claimed only to be sent back (docs/postbacks.md#delivery).
struct PostbackHold {
  std::string endpoint_id;
  std::int64_t until_ms = 0;
};

/// How many times one claim fans events out at most (PostbackStore::claim_postbacks): a claim
/// whose events go mostly to held endpoints goes on to later events, up to this many times its
/// limit, so held endpoints slow the others' events by a round each, never by a poll.
inline constexpr int kClaimFanOutRounds = 8;

/// The outbox's size, for the metric and the measurement.
/// An endpoint's latest attempts, newest first, as their HTTP statuses (0: no answer).
struct RecentStatuses {
  std::string endpoint_id;
  std::vector<int> statuses;
};

struct PostbackBacklog {
  std::int64_t pending = 0;
  std::int64_t oldest_pending_at_ms = 0;  // 0 when none is pending
};

class PostbackStore : public virtual StorePort {
 public:
  // --- endpoints ------------------------------------------------------------------------------
  /// kConflict if the id exists.
  virtual StoreStatus insert_postback_endpoint(const PostbackEndpoint& e) = 0;
  virtual Lookup<PostbackEndpoint> get_postback_endpoint(std::string_view id) = 0;
  /// One seller's endpoints, or every one with `seller_id` ""; ordered by id. nullopt when the
  /// store could not read them.
  virtual std::optional<std::vector<PostbackEndpoint>> list_postback_endpoints(
      std::string_view seller_id) = 0;
  /// Writes url, events, active, updated_at_ms and the spell of the endpoint `e.id` if it is still
  /// at `e.version` (0: any), and sets `e.version` to the new one; kConflict, changing nothing,
  /// when it is at another version; kNotFound if none. With `fan_out_first`
  /// (postbacks::fans_out_first), the events of `e`'s seller not yet fanned out are fanned out
  /// first, in the same transaction, by the endpoints as they stood.
  virtual StoreStatus update_postback_endpoint(PostbackEndpoint& e, bool fan_out_first) = 0;
  /// Makes `r.secret` the endpoint's secret and the one it held its previous secret, until
  /// `r.previous_expires_at_ms` (0: none kept), in one statement on the row as it stands: of two
  /// rotations at once, the later holds the other's secret as its previous one, never a secret
  /// neither answered. Sets secret_rotated_at_ms and updated_at_ms to `r.at_ms`
  /// and moves the version by one. The endpoint
  /// as it then is; kNotFound if none; kConflict, rotating nothing, when `r.expected_secret` is
  /// set and the endpoint no longer holds it (another rotation came first).
  virtual Lookup<PostbackEndpoint> rotate_postback_secret(const SecretRotation& r) = 0;
  /// Removes the endpoint and its outbox rows and attempts, only while it is at `version` (0:
  /// any); kConflict, removing nothing, at another version; kNotFound if none.
  virtual StoreStatus delete_postback_endpoint(std::string_view id, std::int64_t version) = 0;
  /// A number that changes whenever an endpoint has changed as far as this store knows: at once
  /// for a change made through it, and for one made by another process as soon as the store
  /// hears of it (PostgreSQL: a NOTIFY on commit, heard within milliseconds). A reader of the
  /// endpoints (the postback sender) reads them again when it moves. Any thread; cheap.
  virtual std::uint64_t postback_endpoints_version() = 0;

  // --- the outbox -----------------------------------------------------------------------------
  /// Up to `limit` pending rows due at `now_ms`, oldest due first, each leased: its next_at is
  /// moved to now_ms + lease_ms in the same transaction, so another process (or this one) claims
  /// it again only if no attempt was recorded by then. Before that, in the same transaction, up
  /// to `limit` of the oldest events not yet fanned out become their rows, due when their event
  /// happened, or for an endpoint in `holds` at its `until_ms` if later; while the rows due
  /// still fall short and events are left, as many more in up to kClaimFanOutRounds rounds in
  /// all. Several processes claiming at once get distinct rows. nullopt when the store could
  /// not say.
  virtual std::optional<std::vector<PostbackDelivery>> claim_postbacks(
      std::int64_t now_ms, std::int64_t lease_ms, int limit,
      std::span<const PostbackHold> holds = {}) = 0;
  /// Records attempts in one transaction: each attempt's row, and its outbox row's new state
  /// (attempts + 1, last status and error, next_at or delivered_at). An attempt of a row that
  /// is gone (its endpoint deleted) is dropped.
  virtual StoreStatus record_postback_attempts(std::span<const PostbackAttempt> attempts) = 0;
  /// Puts claimed rows back, each due at its `next_at_ms`, without counting an attempt (the
  /// sender could not start one: the endpoint is at its own limit of requests in flight, or
  /// switched off), in one transaction. A row no longer pending is left as it is.
  virtual StoreStatus release_postbacks(std::span<const PostbackRelease> rows) = 0;
  /// An endpoint that answers again: its pending rows due after `beyond_ms` are due at `now_ms`
  /// (the sender puts a failing endpoint's events back for as long as it has been failing; a
  /// lease never reaches past now + the lease, so a caller passing a `beyond_ms` past that takes
  /// no row another sender holds). How many; nullopt when the store could not say.
  virtual std::optional<int> resume_postbacks(std::string_view endpoint_id, std::int64_t now_ms,
                                              std::int64_t beyond_ms) = 0;
  /// An endpoint's outbox rows, newest event first, those with events before `before_event_id`
  /// ("" = from the newest); at most `limit`; an event not yet fanned out among them as the row
  /// it will be. nullopt when the store could not say.
  virtual std::optional<std::vector<PostbackDelivery>> list_postback_deliveries(
      std::string_view endpoint_id, std::string_view before_event_id, int limit) = 0;
  /// The attempts of one event at one endpoint, oldest first.
  virtual std::optional<std::vector<PostbackAttempt>> list_postback_attempts(
      std::string_view endpoint_id, std::string_view event_id) = 0;
  /// The latest `limit` attempts of an endpoint, newest first (whether it is failing).
  virtual std::optional<std::vector<PostbackAttempt>> recent_postback_attempts(
      std::string_view endpoint_id, int limit) = 0;
  /// Every endpoint that is on: the HTTP statuses of its latest `per_endpoint` attempts, from
  /// every process, newest first (an endpoint never tried has none). Whether each is failing is
  /// postbacks' rule (endpoint_failing_by_status). nullopt when the store could not say.
  virtual std::optional<std::vector<RecentStatuses>> recent_postback_statuses(int per_endpoint) = 0;
  /// Sends an event again: its row becomes pending and due at `now_ms` (its attempts stay
  /// counted; a replay of an expired row gets another 24 hours from now). kOk, changing nothing,
  /// for an event not fanned out yet (pending and due already); kNotFound if none.
  virtual StoreStatus replay_postback(std::string_view endpoint_id, std::string_view event_id,
                                      std::int64_t now_ms) = 0;
  /// How many rows are pending (an event not yet fanned out once per endpoint it goes to), and
  /// the oldest one's event time.
  virtual std::optional<PostbackBacklog> postback_backlog() = 0;
  /// Deletes up to `limit` rows in `state` whose retry window began before `before_ms` (the
  /// event, or its last replay), with their attempts, in one short transaction; which states
  /// go, and when, is postbacks' rule (prune_before, prunable_state); a pending row is never
  /// deleted, whatever `state` says. How many rows went; nullopt when the store could not say.
  virtual std::optional<int> prune_postbacks(PostbackState state, std::int64_t before_ms,
                                             int limit) = 0;
};

}  // namespace leadflow
