#include "leadflow/postbacks/rules.hpp"

#include <algorithm>

#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"

namespace leadflow::postbacks {

std::string_view kind_name(EventKind k) {
  switch (k) {
    case EventKind::kSold:
      return "lead.sold";
    case EventKind::kUnsold:
      return "lead.unsold";
    case EventKind::kReturned:
      return "lead.returned";
    case EventKind::kSettled:
      return "lead.settled";
  }
  return "lead.sold";
}

std::optional<EventKind> parse_kind(std::string_view name) {
  for (EventKind k : kAllKinds)
    if (kind_name(k) == name) return k;
  return std::nullopt;
}

std::optional<EventKind> outcome_event(DeliveryStatus status) {
  switch (status) {
    case DeliveryStatus::kDelivered:
      return EventKind::kSold;
    case DeliveryStatus::kUnsold:
    case DeliveryStatus::kDuplicate:
    case DeliveryStatus::kRejected:
      return EventKind::kUnsold;
    case DeliveryStatus::kPending:
    case DeliveryStatus::kFailed:
    case DeliveryStatus::kReturned:
    case DeliveryStatus::kTest:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string new_event_id(std::int64_t at_ms) { return new_id(kEventPrefix, at_ms); }

std::string new_endpoint_secret() { return "pbs_" + hex_of(random_bytes(32)); }

std::int64_t previous_secret_expiry(std::int64_t now_ms, std::int64_t valid_for_s) {
  if (valid_for_s <= 0) return 0;
  return now_ms + std::min(valid_for_s, kMaxPreviousValidSeconds) * 1000;
}

bool previous_secret_valid(std::string_view previous, std::int64_t expires_at_ms,
                           std::int64_t now_ms) {
  return !previous.empty() && expires_at_ms > 0 && now_ms < expires_at_ms;
}

bool rotation_ends_a_signing_secret(std::string_view previous, std::int64_t expires_at_ms,
                                    std::int64_t now_ms, std::int64_t valid_for_s) {
  return valid_for_s > 0 && previous_secret_valid(previous, expires_at_ms, now_ms);
}

std::vector<std::string> signing_secrets(const std::string& secret, const std::string& previous,
                                         std::int64_t previous_expires_at_ms, std::int64_t now_ms) {
  std::vector<std::string> out{secret};
  if (previous_secret_valid(previous, previous_expires_at_ms, now_ms) && previous != secret)
    out.push_back(previous);
  return out;
}

std::string events_text(std::span<const EventKind> kinds) {
  std::string out = ",";
  for (EventKind k : kAllKinds)
    if (std::find(kinds.begin(), kinds.end(), k) != kinds.end()) {
      out += kind_name(k);
      out += ',';
    }
  return out;
}

std::vector<EventKind> events_of_text(std::string_view text) {
  std::vector<EventKind> out;
  for (EventKind k : kAllKinds)
    if (text.find("," + std::string(kind_name(k)) + ",") != std::string_view::npos)
      out.push_back(k);
  return out;
}

std::optional<std::int64_t> next_attempt_at(std::int64_t occurred_at_ms, int attempts,
                                            std::int64_t now_ms) {
  constexpr std::int64_t kFirstMs = 30'000;
  constexpr std::int64_t kMaxMs = 3'600'000;
  std::int64_t delay = kFirstMs;
  for (int i = 1; i < attempts && delay < kMaxMs; ++i) delay *= 2;
  delay = std::min(delay, kMaxMs);
  const std::int64_t at = now_ms + delay;
  if (at >= occurred_at_ms + kRetryWindowMs) return std::nullopt;
  return at;
}

std::optional<std::int64_t> prune_before(std::int64_t now_ms, int retention_days) {
  if (retention_days <= 0) return std::nullopt;
  return now_ms - static_cast<std::int64_t>(retention_days) * 86'400'000LL;
}

bool prunable_state(std::string_view state) { return state == "delivered" || state == "expired"; }

bool delivered(int http_status) { return http_status >= 200 && http_status < 300; }

Spell first_spell(bool active, std::int64_t now_ms) { return {now_ms, active ? 0 : now_ms}; }

Spell switched(Spell spell, bool was_active, bool active, std::int64_t now_ms) {
  if (was_active == active) return spell;
  if (active) return {now_ms, 0};
  return {spell.on_since_ms, now_ms};
}

bool fans_out_first(bool was_active, std::string_view was_events, bool active,
                    std::string_view events) {
  return was_active != active || was_events != events;
}

namespace {
/// Whether the newest kFailingAfter of `recent` (newest first) all failed, `ok` saying which
/// delivered.
template <class T, class Ok>
bool last_ones_failed(std::span<const T> recent, Ok ok) {
  if (recent.size() < kFailingAfter) return false;
  return std::none_of(recent.begin(), recent.begin() + kFailingAfter, ok);
}
}  // namespace

bool endpoint_failing(std::span<const bool> recent) {
  return last_ones_failed(recent, [](bool ok) { return ok; });
}

bool endpoint_failing_by_status(std::span<const int> statuses) {
  return last_ones_failed(statuses, delivered);
}

}  // namespace leadflow::postbacks
