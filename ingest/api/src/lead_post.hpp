#pragma once
// Private: Surface A's lead post (POST /v1/leads); its route is registered by register_surface_a.
#include <cstdint>
#include <functional>
#include <string_view>

#include "errors.hpp"
#include "intake.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the lead post uses besides the key that authorised the request. The route binds them
/// to IngestContext; tests hand in fakes.
struct LeadPostPorts {
  IntakeStore& intake;  // the Idempotency-Keys
  const VerticalRegistry& verticals;
  const Clock& clock;
  int wait_ms;      // how long a post waits for its outcome unless it asks (Config::wait_ms)
  int max_wait_ms;  // the longest it may ask for (Config::max_wait_ms)
  /// Appends the lead to the queue, answered once durable, and waits up to the given budget
  /// (ms) for its outcome: accept_lead.
  std::function<AcceptResult(const Lead&, int wait_ms)> accept;
  /// A seller, for a post of a signed-in seller user (a key reads its seller's test mode with
  /// it; a session does not): AccountsStore::get_seller.
  std::function<Lookup<Seller>(std::string_view seller_id)> seller;
  /// Whether some active buyer takes the vertical now, for a test lead's answer
  /// (vertical_has_active_buyers, test_leads.hpp); nullopt when the store could not say.
  std::function<std::optional<bool>(std::string_view vertical)> vertical_buying;
  /// The operator's suppression lists (none: no lead is refused for its person).
  const SuppressionLists* suppression = nullptr;
};

/// What a request repeating an Idempotency-Key comes to, against the claim that holds the key.
enum class KeyRepeat {
  kReplay,      // the first request was answered: its answer again
  kOtherBody,   // the key was used with a different body (422)
  kInProgress,  // the first request still runs (409)
  kTakeOver,    // the first request died: this one finishes it, with its lead id
};
/// `request_hash`: this request's body hash. A claim without an answer is taken over once it
/// is `stale_after_ms` old at `now_ms`: its request cannot still be running.
KeyRepeat judge_repeat(const IdempotencyRecord& existing, std::string_view request_hash,
                       std::int64_t now_ms, std::int64_t stale_after_ms);

/// POST /v1/leads by `key`, whose reader is `viewer`: the Idempotency-Key and the lead checked
/// (400), the key claimed (the first answer replayed, 409, 422, 503), the lead queued durably
/// (503 when not) and its outcome awaited within its budget: 201 with the outcome as `viewer`
/// may see it, 202 while undecided. A test lead (leadflow/domain/test_mode.hpp) is answered the
/// same way, with `test: true` and what it would have come to (`would_have`).
void answer_lead_post(const LeadPostPorts& ports, const ApiKey& key, const Viewer& viewer,
                      const http::Request& req, http::Response& res);

}  // namespace leadflow
