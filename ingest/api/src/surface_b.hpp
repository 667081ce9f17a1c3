#pragma once
// Private: Surface B's handlers (/api/v1 and the legacy form POST /{key}); their routes are
// registered by register_surface_b. A lead post's checks (campaign_lead.cpp) run on the event
// loop when they need no I/O, and say where they would have to wait; the reads (surface_b.cpp)
// run on the blocking pool.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "errors.hpp"
#include "intake.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/limits/rate_limiter.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/reporting.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {

/// What Surface B's handlers use besides the request. The routes bind them to IngestContext
/// once, when they are registered, so a lead post builds nothing of them; tests hand in fakes.
struct SurfaceBPorts {
  IntakeStore& intake;        // a job's lead
  ReportingStore& reporting;  // the stats' rollups, queued leads, invalid posts counted
  const VerticalRegistry& verticals;
  const Clock& clock;
  RateLimiter& limiter;  // the campaigns' per-minute ceilings
  /// The campaign of `key` (CampaignCache): with `may_block` false from the cache alone, and
  /// false when only the store can say (then `out` is untouched); with `may_block` true asking
  /// the store when it must, `unavailable` set when the store could not say.
  std::function<bool(const std::string& key, bool may_block, std::optional<Campaign>& out,
                     bool& unavailable)>
      find_campaign;
  /// A key not let in: counted against the client's address, audited, answered 401 or 429
  /// (answer_failed_campaign_auth). With `may_block` false, false when counting would wait on
  /// the store, and then nothing was counted or answered.
  std::function<bool(const http::Request&, http::Response&, const FailedCampaignAuth&,
                     std::string_view message, bool may_block)>
      refuse_key;
  /// Audits a lead post refused by its campaign's per-minute ceiling.
  std::function<void(const http::Request&, const Campaign&)> audit_rate_limited;
  /// Whether some active buyer takes the vertical now, for a test lead's answer
  /// (vertical_has_active_buyers, test_leads.hpp); nullopt when the store could not say. Blocks.
  std::function<std::optional<bool>(std::string_view vertical)> vertical_buying;
  /// The verticals' re-offer policies the operator set (AccountsStore::list_vertical_reoffers),
  /// so that a vertical's published policy is the one in force; nullopt when the store could
  /// not say. Blocks.
  std::function<std::optional<std::vector<VerticalReoffer>>()> reoffers_set;
  /// The operator's suppression lists (none: no lead is refused for its person).
  const SuppressionLists* suppression = nullptr;
};

/// The body of a Surface B post, in whatever form it came.
enum class BodyKind { kJson, kForm, kMultipart, kOther };

/// A Surface B post's body, read once and carried from the event loop to the pool when a check
/// must wait there. A JSON body is parsed once: its key is read first and the lead validated
/// against that key's campaign's vertical, known from the campaign cache. Only when the cache
/// cannot say (at most once a second per key) does the loop leave the lead unvalidated, and the
/// pool parses it again once the campaign is found.
struct PostBody {
  bool read = false;
  BodyKind kind = BodyKind::kOther;
  std::string key;                                          // SELLER_CAMPAIGN_KEY as sent, or ""
  std::vector<std::pair<std::string, std::string>> fields;  // a form post's fields
  ParsedLead parsed;                                        // a JSON post
};

/// Where a lead post stands after its checks.
enum class Intake {
  kAnswered,   // `res` is the answer (a refusal)
  kAccept,     // the lead passed: hand it to the queue
  kMustBlock,  // (may_block false) only the store can answer a check; nothing was spent
};

/// A lead that passed its checks, or what an invalid one leaves to count.
struct LeadIntake {
  Lead lead;
  int wait_ms = 0;               // 0: answered once durable; else how long to await the outcome
  std::string campaign_key;      // for the job id of a 202
  std::string invalid_campaign;  // (may_block false) count an invalid lead for this campaign
  std::int64_t invalid_at_ms = 0;
};

/// The checks of POST /api/v1/lead (`path_key` null: the key in the body) and of the legacy form
/// (`path_key`: the key in the path): media type (415), key (400 when the path's differs),
/// campaign (401 or 429 by refuse_key, 503), the campaign's ceiling (429; every answer past it
/// carries the X-RateLimit headers), validation (400, counted for the campaign's stats). With
/// `may_block` false it never waits on I/O (the event loop runs it): it says kMustBlock where
/// it would, with `body` read for the retry, and leaves an invalid lead's count to the caller
/// (`out.invalid_campaign`). kAccept: `out` holds the lead, its id and times set.
Intake take_campaign_lead(const SurfaceBPorts& ports, const http::Request& req, http::Response& res,
                          const std::string* path_key, bool may_block, PostBody& body,
                          LeadIntake& out);

/// The answer to a lead handed to the queue: 503 when it is not durable; 202 {"status":
/// "queued", "job_id", "lead_id"} while undecided (the job id tagged for `campaign_key`,
/// job_ids.hpp); 200 with the outcome as the campaign's seller `seller_id` may see it.
/// `would_have`: for a test lead (leadflow/domain/test_mode.hpp), what it would have come to
/// (project_would_have), added with `test: true` to the 200 or 202; null for a real lead.
void answer_campaign_lead(http::Response& res, const std::string& lead_id,
                          const std::string& seller_id, const std::string& campaign_key,
                          const AcceptResult& r, const nlohmann::json* would_have = nullptr);

/// The 202 of a lead accepted and not decided yet: {"status": "queued", "job_id", "lead_id"}.
std::string campaign_queued_body(const std::string& lead_id, const std::string& campaign_key);

/// A campaign's answer about a decided lead: {"status": "sold" | "unsold" | "duplicate" | "test",
/// "sold",
/// "price", "currency", "lead_id"}, as the seller `seller_id` may see it: the price is the
/// seller's payout, and no buyer is named.
nlohmann::json campaign_outcome_body(const OutcomeMessage& m, const std::string& seller_id);

/// GET /api/v1/stats/{key}?period=: the campaign's figures from the reports' rollups (200), 400
/// for an unknown period, 401 or 429 for a key not let in, 503 when the store cannot say.
void answer_stats(const SurfaceBPorts& ports, const std::string& key, const http::Request& req,
                  http::Response& res);

/// GET /api/v1/jobs/{id} with X-Campaign-Key: the job's state (200) when it is the campaign's,
/// else 404; 401 or 429 for a key not let in, 503 when the store cannot say.
void answer_job(const SurfaceBPorts& ports, const std::string& job_id, const http::Request& req,
                http::Response& res);

/// GET /api/v1/fields/{vertical}: the vertical's field specification, or 404.
void answer_fields(const SurfaceBPorts& ports, std::string_view vertical, http::Response& res);

}  // namespace leadflow
