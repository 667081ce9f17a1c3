// Surface A's lead post: the lead validated and normalised, its Idempotency-Key claimed, the
// lead appended to the queue durably and its outcome awaited within the request's budget. The
// handler decodes, calls and encodes; the route authorises (leads:write).
#include "lead_post.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/test_mode.hpp"
#include "leadflow/validation/validation.hpp"
#include "leadflow/visibility/projections.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kKeyLifetimeMs = 86'400'000;  // a claim older than a day is replaced

bool valid_idempotency_key(const std::string& k) {
  if (k.empty() || k.size() > 255) return false;
  for (unsigned char c : k)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

// A lead post as decoded: the lead (its id and times set), how long it may wait for its
// outcome, and its Idempotency-Key if it sent one.
struct LeadPost {
  Lead lead;
  int wait_ms = 0;
  bool has_key = false;
  std::string idempotency_key;
};

// The post, or nothing when `res` is the answer: 415, or 400 for a bad Idempotency-Key or lead.
std::optional<LeadPost> decode_lead_post(const LeadPostPorts& ports, const ApiKey& key,
                                         const http::Request& req, http::Response& res) {
  if (!http::require_json(req, res)) return std::nullopt;
  LeadPost post;
  post.has_key = req.has_header("Idempotency-Key");
  post.idempotency_key = std::string(req.header("Idempotency-Key"));
  if (post.has_key && !valid_idempotency_key(post.idempotency_key)) {
    send_problem(res, refusal_for(KeyRefused::kInvalid));
    return std::nullopt;
  }
  ParsedLead parsed = parse_lead_json(req.body(), LeadShape::kApi, ports.verticals, "");
  if (!parsed.errors.empty()) {
    ingest_metrics().lead("api", "invalid");
    http::send_problem(res, 400,
                       parsed.malformed
                           ? "the body could not be read: " + parsed.errors.front().message
                           : std::string("the lead failed validation"),
                       parsed.errors);
    return std::nullopt;
  }
  if (auto refused = suppression_refusal(ports.suppression, parsed.lead)) {
    if (refused->status == 422) ingest_metrics().lead("api", "suppressed");
    send_problem(res, *refused);
    return std::nullopt;
  }
  // A key reads its seller's test mode with it; a signed-in seller user's session does not.
  bool seller_test_mode = key.seller_test_mode;
  if (!key.seller_id.empty() && key.id.starts_with(kUserPrefix) && ports.seller) {
    const Lookup<Seller> seller = ports.seller(key.seller_id);
    if (seller.status == StoreStatus::kUnavailable) {  // never guessed: nothing accepted
      send_problem(res, refusal_for(seller.status, StoreStep::kCheckApiKey));
      return std::nullopt;
    }
    seller_test_mode = seller.value && seller.value->test_mode;
  }
  post.lead = std::move(parsed.lead);
  Lead& lead = post.lead;
  lead.test = is_test_lead({lead.test, seller_test_mode, false});
  lead.received_at_ms = ports.clock.now_ms();
  lead.id = new_id(kLeadPrefix, lead.received_at_ms);
  lead.seller_id = key.seller_id;
  lead.api_key_id = key.id;
  lead.surface = Surface::kApi;
  post.wait_ms = http::wait_budget_ms(req, ports.wait_ms, ports.max_wait_ms);
  lead.sync_wait_ms = post.wait_ms;
  return post;
}

// What claiming a post's Idempotency-Key came to: go on (the lead perhaps taking over the id
// of a request that died), the first request's answer again, or a refusal.
struct KeyClaim {
  std::optional<KeyRefused> refused;
  std::optional<IdempotencyRecord> replay;
};

// The first request claims the key with its body hash and lead id; a repeat gets the first
// answer again, a different body 422, a repeat while the first runs 409. A claim whose request
// died (the process was killed) is finished by the repeat with the same lead id, so the lead is
// queued at most once under that id and workers sell it at most once.
KeyClaim claim_key(const LeadPostPorts& ports, const ApiKey& key, const LeadPost& post,
                   std::string_view body, Lead& lead) {
  const IdempotencyRecord claim{key.id, post.idempotency_key, sha256_hex(body), lead.id, 0,
                                "",     lead.received_at_ms};
  IdempotencyRecord existing;
  switch (
      ports.intake.claim_idempotency_key(claim, lead.received_at_ms - kKeyLifetimeMs, existing)) {
    case StoreStatus::kOk:
      return {};
    case StoreStatus::kConflict:
      break;
    default:
      return {KeyRefused::kUnavailable, std::nullopt};
  }
  const std::int64_t stale_after = std::max<std::int64_t>(60'000, ports.max_wait_ms + 15'000);
  switch (judge_repeat(existing, claim.request_hash, lead.received_at_ms, stale_after)) {
    case KeyRepeat::kReplay:
      return {std::nullopt, std::move(existing)};
    case KeyRepeat::kOtherBody:
      return {KeyRefused::kOtherBody, std::nullopt};
    case KeyRepeat::kInProgress:
      return {KeyRefused::kInProgress, std::nullopt};
    case KeyRepeat::kTakeOver:
      break;
  }
  lead.id = existing.lead_id;
  lead.received_at_ms = existing.created_at_ms;
  return {};
}

// The first request's answer, as it was.
void send_replay(http::Response& res, const IdempotencyRecord& first) {
  res.status = first.status;
  res.set_content(first.response, "application/json");
  res.set_header("Location", "/v1/leads/" + first.lead_id);
  res.set_header("Idempotent-Replayed", "true");
}

// The accepted lead: 201 with its outcome as `viewer` may see it, or 202 while undecided; a test
// lead with what it would have come to.
void send_accepted(const LeadPostPorts& ports, http::Response& res, const Viewer& viewer,
                   const Lead& lead, const std::optional<OutcomeMessage>& outcome) {
  res.set_header("Location", "/v1/leads/" + lead.id);
  Distribution d;
  if (outcome) {
    d.status = outcome->status;
    d.buyer_id = outcome->buyer_id;
    d.price = outcome->price;
    d.payout = outcome->payout;
  }
  const char* message = lead.test  ? "Test lead accepted: stored as a test, offered to no buyer"
                        : !outcome ? "Lead accepted; distribution in progress"
                        : d.status == DeliveryStatus::kDelivered ? "Lead accepted and sold"
                        : d.status == DeliveryStatus::kDuplicate
                            ? "Lead accepted; duplicate of an earlier lead"
                            : "Lead accepted; no buyer took it";
  json body = {{"success", true},
               {"lead_id", lead.id},
               {"message", message},
               {"distribution", project_distribution(viewer, d, lead.seller_id)}};
  if (lead.test) {
    body["test"] = true;
    body["would_have"] = project_would_have(
        ports.vertical_buying ? ports.vertical_buying(lead.vertical) : std::nullopt);
  }
  http::send_json(res, outcome ? 201 : 202, body);
}

}  // namespace

KeyRepeat judge_repeat(const IdempotencyRecord& existing, std::string_view request_hash,
                       std::int64_t now_ms, std::int64_t stale_after_ms) {
  if (!constant_time_equal(existing.request_hash, request_hash)) return KeyRepeat::kOtherBody;
  if (existing.status != 0) return KeyRepeat::kReplay;
  if (now_ms - existing.created_at_ms < stale_after_ms) return KeyRepeat::kInProgress;
  return KeyRepeat::kTakeOver;
}

void answer_lead_post(const LeadPostPorts& ports, const ApiKey& key, const Viewer& viewer,
                      const http::Request& req, http::Response& res) {
  std::optional<LeadPost> post = decode_lead_post(ports, key, req, res);
  if (!post) return;
  Lead& lead = post->lead;
  if (post->has_key) {
    const KeyClaim claim = claim_key(ports, key, *post, req.body(), lead);
    if (claim.replay) return send_replay(res, *claim.replay);
    if (claim.refused) return send_problem(res, refusal_for(*claim.refused));
  }

  const AcceptResult r = ports.accept(lead, post->wait_ms);
  auto& metrics = ingest_metrics();
  if (r.produced != ProduceStatus::kOk) {
    metrics.lead("api", "unavailable");
    // Nothing was accepted: a retry with the key must be free to go.
    if (post->has_key) ports.intake.release_idempotency_key(key.id, post->idempotency_key);
    return send_problem(res, refusal_for(r.produced));
  }
  metrics.lead("api", "accepted");
  send_accepted(ports, res, viewer, lead, r.outcome);
  if (post->has_key && ports.intake.complete_idempotency_key(
                           key.id, post->idempotency_key, res.status, res.body) != StoreStatus::kOk)
    log(LogLevel::kWarn, "idempotency_not_recorded", {{"lead_id", lead.id}});
}

}  // namespace leadflow
