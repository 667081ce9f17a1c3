#pragma once
// The postbacks' rules (docs/postbacks.md): what a seller is told, when it is told again, and
// when its endpoint counts as failing. Pure functions on plain values; thread-safe.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/lead.hpp"

namespace leadflow::postbacks {

/// What a postback reports. A seller's endpoint subscribes to some of them.
enum class EventKind { kSold, kUnsold, kReturned, kSettled };

inline constexpr EventKind kAllKinds[] = {EventKind::kSold, EventKind::kUnsold,
                                          EventKind::kReturned, EventKind::kSettled};

/// "lead.sold", "lead.unsold", "lead.returned", "lead.settled".
std::string_view kind_name(EventKind k);
std::optional<EventKind> parse_kind(std::string_view name);

/// The event a decided outcome reports: a sale is `lead.sold`; unsold, duplicate and rejected
/// leads are `lead.unsold`. A failed lead (its post's outcome unknown) reports nothing until an
/// operator settles it (`lead.settled`), a test lead nothing at all (it was offered to no one).
std::optional<EventKind> outcome_event(DeliveryStatus status);

/// The id a receiver deduplicates on ("evt_" and a sortable id): one per event, the same for
/// every endpoint it goes to and every attempt and replay of it.
std::string new_event_id(std::int64_t at_ms);
inline constexpr std::string_view kEventPrefix = "evt_";
inline constexpr std::string_view kEndpointPrefix = "pbe_";

/// A new signing secret for an endpoint ("pbs_" and 64 hex digits), shown once at creation or
/// rotation.
std::string new_endpoint_secret();

/// When an endpoint takes events (docs/postbacks.md#endpoints): those that happen while it is on,
/// from `on_since_ms` and, once it is switched off, before `off_since_ms` (0 while it is on).
/// Only the last spell on is kept: a change of what an endpoint takes fans the seller's waiting
/// events out first (fans_out_first), so no event of an earlier spell is still waiting. Example:
/// on at 10:00, off at 10:05: an event of 10:04 fanned out at 10:05:01 is the endpoint's, and
/// waits until it is on again; one of 10:06 is not, nor after it is switched on again at 10:10.
struct Spell {
  std::int64_t on_since_ms = 0;
  std::int64_t off_since_ms = 0;
};
/// A new endpoint's spell, made at `now_ms` on or off (off: a spell that took nothing).
Spell first_spell(bool active, std::int64_t now_ms);
/// The spell after an endpoint that was `was_active` is saved `active` at `now_ms`: switched
/// off, it ends now; switched on, a new one begins now; otherwise unchanged.
Spell switched(Spell spell, bool was_active, bool active, std::int64_t now_ms);
/// Whether a change of an endpoint from (`was_active`, `was_events`) to (`active`, `events`)
/// changes which events it takes: switched on or off, or other events subscribed. Such a change
/// goes for the events that happen from then on, so the seller's events still waiting to be
/// fanned out are fanned out first, in the change's transaction, by the endpoint as it stood:
/// switched off and on again before a claim, it still gets the events of its earlier spell.
bool fans_out_first(bool was_active, std::string_view was_events, bool active,
                    std::string_view events);

/// Rotating an endpoint's secret (docs/postbacks.md#rotating-the-secret): the secret it replaces
/// still signs for an overlap, so the receiver can change its own in the meantime; 24 hours
/// unless the rotation asks for another (0 to 7 days; 0 ends the old secret at once).
inline constexpr std::int64_t kDefaultPreviousValidSeconds = 86'400;
inline constexpr std::int64_t kMaxPreviousValidSeconds = 7 * 86'400;
/// When the replaced secret stops signing, for a rotation at `now_ms` keeping it `valid_for_s`
/// seconds (0..kMaxPreviousValidSeconds); 0 when it is not kept at all (0 seconds).
std::int64_t previous_secret_expiry(std::int64_t now_ms, std::int64_t valid_for_s);
/// Whether a previous secret expiring at `expires_at_ms` still signs at `now_ms`: until (not
/// at) its expiry, and only if there is one.
bool previous_secret_valid(std::string_view previous, std::int64_t expires_at_ms,
                           std::int64_t now_ms);
/// Whether a rotation at `now_ms` keeping the replaced secret `valid_for_s` seconds must be
/// refused: a previous secret that still signs would end at once, breaking a receiver that has
/// not switched to the current one yet. One that asks for no overlap (0) ends every old secret
/// now, as asked. Example: rotated at 12:00 with 24 hours, another rotation at 13:00 with an
/// overlap is refused until 12:00 the next day; with 0 it goes ahead.
bool rotation_ends_a_signing_secret(std::string_view previous, std::int64_t expires_at_ms,
                                    std::int64_t now_ms, std::int64_t valid_for_s);
/// The secrets a delivery at `now_ms` is signed with, in this order: the endpoint's secret, then
/// its previous one while it is valid. Example: rotated at 12:00 with the default overlap, an
/// attempt at 12:05 (or a retry or replay at 11:59 the next day) is signed with both, one at
/// 12:00 the next day with the new secret alone.
std::vector<std::string> signing_secrets(const std::string& secret, const std::string& previous,
                                         std::int64_t previous_expires_at_ms, std::int64_t now_ms);

/// The subscriptions as one text a store keeps and matches with LIKE: ",lead.sold,lead.unsold,"
/// (each name between commas, in the order of kAllKinds, none twice).
std::string events_text(std::span<const EventKind> kinds);
/// The kinds of such a text, in the order of kAllKinds.
std::vector<EventKind> events_of_text(std::string_view text);

/// How long an event is retried: 24 hours from when it happened. After that it is given up
/// (`expired`) and only a replay sends it again.
inline constexpr std::int64_t kRetryWindowMs = 24LL * 3'600'000;

/// When the next attempt of an event goes, after `attempts` failed ones (1 or more) of an event
/// that happened at `occurred_at_ms`, the last one ending at `now_ms`: 30 s after the first
/// failure, doubling each time up to an hour apart; nullopt once that is past the retry window
/// (the event expires). Example: failures at +0 s and +30 s are retried at +30 s and +90 s.
std::optional<std::int64_t> next_attempt_at(std::int64_t occurred_at_ms, int attempts,
                                            std::int64_t now_ms);

/// Whether an answer delivers the event: any 2xx. Everything else (no answer, a timeout, a
/// refused address, any other status) is retried, a 4xx included: the receiver's fault is
/// usually fixed within the day, and the event id lets it drop what it already took.
bool delivered(int http_status);

/// Retention of the outbox (LEADFLOW_POSTBACK_RETENTION_DAYS): an event no longer owed, delivered
/// or given up (expired), is deleted with its attempts once its retry window began (the event's
/// time, or its last replay) `retention_days` days or more before `now_ms`. A pending event is
/// never deleted, however old: it is still owed. Example: with 30 days, a delivered event of
/// 1 March goes on 31 March; one replayed on 20 March stays until 19 April.
inline constexpr int kDefaultRetentionDays = 30;
/// Events whose window began before this instant may go; nullopt when retention is off (0 days:
/// kept for ever).
std::optional<std::int64_t> prune_before(std::int64_t now_ms, int retention_days);
/// Whether an outbox row in this state ("pending", "delivered", "expired", as the store names
/// them) may be deleted once old enough: delivered and expired ones, never a pending one.
bool prunable_state(std::string_view state);
/// How many rows one pruning transaction deletes at most: a few milliseconds of the store's
/// writer, so intake never waits behind a long deletion.
inline constexpr int kPruneBatch = 200;

/// An endpoint is failing when its last kFailingAfter attempts all failed (newest first in
/// `recent`, true for a delivered one): what the metric counts and the alert watches.
inline constexpr std::size_t kFailingAfter = 5;
bool endpoint_failing(std::span<const bool> recent);
/// The same from the HTTP statuses of its latest attempts, newest first (0: no answer), as the
/// store keeps them for every process's attempts: what the fleet's gauge and the endpoints'
/// `failing` say.
bool endpoint_failing_by_status(std::span<const int> statuses);

}  // namespace leadflow::postbacks
