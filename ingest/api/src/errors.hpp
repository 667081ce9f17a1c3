#pragma once
// Private: how the front answers a domain result that is not a success, in one table, so that a
// result means the same status on every route. Surface A sends the answer as problem+json,
// Surface B as {"status": code, "message": detail}.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "leadflow/domain/field_error.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/erasure.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// The answer to a failed step.
struct Refusal {
  int status = 503;
  std::string_view code;     // Surface B's status word: "unavailable", "conflict", "not_found"
  std::string detail;        // the problem's detail, Surface B's message
  bool retry_after = false;  // also sends "Retry-After: 1"
  FieldErrors errors = {};   // Surface A: the fields at fault, for a 400
};

/// What the handler was doing when the store said no: the same outage reads differently to a
/// client whose write was not made than to one whose key could not be checked.
enum class StoreStep {
  kWrite,             // a management or buyer write: nothing was changed
  kClaimLead,         // the Idempotency-Key claim of a lead post: nothing was accepted
  kCheckApiKey,       // authenticating a Surface A key
  kCheckCampaignKey,  // authenticating a Surface B campaign key for a lead post
  kRead,              // reading for an answer (leads, buyers, stats, jobs): with Retry-After
};

/// Why a return of a lead (POST /v1/leads/{id}/return) was not made.
enum class ReturnRefused {
  kNotBuyerOrOperator,  // the key is a seller's: only the lead's buyer or the operator returns
  kNoSuchLead,          // no such lead, or one the asking buyer did not buy (the same answer)
  kBuyerNeeded,         // the operator named no buyer of a lead sold to several
  kNotSold,             // the lead was not sold
  kNotSoldToBuyer,      // the operator named a buyer the lead was not sold to
  kNoReturns,           // the buyer's return window is 0 days
  kAlreadyReturned,     // that buyer returned it before
  kWindowClosed,        // the buyer's return window of the sale has ended
  kBuyerUnreadable,     // the asking buyer's own record could not be read: nothing was changed
  kUnavailable,         // the store could not record it: nothing was changed
};
/// A refused return and what its answer names: the buyer's window (kWindowClosed).
struct ReturnRefusal {
  ReturnRefused reason = ReturnRefused::kUnavailable;
  int window_days = 0;
  std::int64_t window_ended_ms = 0;
};

/// Why a settlement of a lead (POST /v1/leads/{id}/settle) was not made.
enum class SettleRefused {
  kNotOperator,        // only the operator settles
  kNoSuchLead,         // no such lead
  kBuyerNeeded,        // the lead was posted to several buyers and none was named
  kNotUnknown,         // the lead's post outcome is not unknown, or not with that buyer
  kAlreadySettled,     // settled with that buyer before
  kIntentsUnreadable,  // the lead's post intents could not be read: nothing was changed
  kUnavailable,        // the store could not record it: nothing was changed
};

/// Why a statement was not answered or a period not closed (docs/statements.md).
enum class StatementRefused {
  kNotOperator,    // only the operator closes a period
  kNotYours,       // another account's statement, or no such account: as not found
  kNotEnded,       // the period has not ended everywhere yet: it cannot be closed
  kAlreadyClosed,  // closed before
  kUnavailable,    // the store could not read or record: nothing was changed
};

/// Why a postback endpoint's route refused (docs/postbacks.md).
enum class PostbackRefused {
  kNotSellerOrOperator,  // a buyer's key or session: postbacks are sellers'
  kNoSuchEndpoint,       // no such endpoint, or another seller's (the same answer)
  kNoSuchEvent,          // the endpoint has no such event to replay
  kRotatedMeanwhile,     // another rotation of its secret came first: nothing was rotated
  kOff,                  // this process was started without postbacks
};

/// Why a lead's person stopped it at intake, on both surfaces: the operator's suppression lists
/// (docs/suppression.md).
enum class PersonRefused {
  kSuppressed,    // one of the operator's lists holds its e-mail or phone (422)
  kListsUnknown,  // the lists were never read whole yet: nothing was accepted (503)
};

/// Why a lead post's Idempotency-Key stopped it (Surface A).
enum class KeyRefused {
  kInvalid,      // not 1 to 255 printable ASCII characters
  kOtherBody,    // used before with a different body
  kInProgress,   // the first request with it still runs
  kUnavailable,  // the store could not claim it: nothing was accepted
};

/// Why a Surface B request was refused, apart from its key (auth.hpp answers a key that is not
/// let in) and the fields of its lead (400 naming them).
enum class CampaignRefused {
  kJsonOnly,         // /api/v1/lead: a body that is not JSON (415)
  kNotAForm,         // the legacy form: neither a form nor JSON (415)
  kKeyMismatch,      // the legacy form: the body's SELLER_CAMPAIGN_KEY is not the path's (400)
  kRateLimited,      // the campaign's per-minute ceiling is reached (429)
  kNoSuchJob,        // a job that is not this campaign's, or no job at all (404)
  kUnknownVertical,  // GET /api/v1/fields/{vertical} of no vertical (404)
  kKeyUnavailable,   // a lead post's campaign key could not be checked: nothing was accepted
  kReadUnavailable,  // stats or a job could not be read (503)
};

/// Why a buyer's own account route (GET/PUT /v1/account, pause, resume) was refused.
enum class AccountRefused {
  kNotBuyer,       // the reader is not a buyer's key or user (403)
  kNoBuyer,        // the buyer's own record is gone (404)
  kCapsClosed,     // a change of caps the operator did not open to this buyer (403)
  kFiltersClosed,  // a change of filters the operator did not open to this buyer (403)
  kNoAccount,      // the operator reads /v1/account: it has no account of its own (403)
  kNoSeller,       // the seller's own record is gone (404)
};

/// Why a suppression list route refused (docs/suppression.md).
enum class SuppressionRefused {
  kNoSuchList,      // no such list, or one that is not the reader's (the same answer: 404)
  kOtherBuyer,      // a buyer making a list for another buyer or for the operator (403)
  kNotText,         // an upload that is not text/csv or text/plain (415)
  kBadLines,        // an upload with lines that are no e-mail, phone or SHA-256 (422)
  kTooManyEntries,  // an upload of more than kMaxSuppressionEntries distinct entries (422)
  kNotGzip,         // an upload in a Content-Encoding other than gzip or none (415)
  kBadGzip,         // a gzip upload that is damaged or cut short (400)
  kInflatesTooFar,  // a gzip upload that inflates past kMaxSuppressionUploadBytes (413)
};

/// Why a dashboard sign-in, its session or a password change was refused (console.hpp).
enum class SignInRefused {
  kWrongCredentials,      // an unknown e-mail, a wrong password, an inactive user: one answer (401)
  kTooManyAttempts,       // past the sign-in limits (429, Retry-After from the limits)
  kNotSignedIn,           // no session, or one that has ended (401)
  kCsrf,                  // a state change without the session's X-CSRF-Token (403)
  kKeyHasNoPassword,      // a password change by an API key (403)
  kKeyHasNoTimeZone,      // a time zone change by an API key (403)
  kEnrolFirst,            // an operator who must enrol a second factor first (403)
  kWrongCurrentPassword,  // a password change with a wrong current password (400)
  kUserDisabled,          // the user was disabled while changing its password (401)
  kNotOperator,           // a key that is not the operator's at the users' routes (403)
};

/// A lead the queue did not make durable (any status but kOk): 503, nothing was accepted.
Refusal refusal_for(ProduceStatus status);
/// A store step that did not succeed (any status but kOk): 409 on a conflict, 404 when not
/// found, 503 otherwise.
Refusal refusal_for(StoreStatus status, StoreStep step);

/// A lead post stopped by its Idempotency-Key: 400, 422, 409 or 503.
Refusal refusal_for(KeyRefused refused);
/// `field`: the field a list holds ("email" or "phone"), named in Surface A's errors.
Refusal refusal_for(PersonRefused refused, std::string_view field);
/// A return that was not made: 403, 404, 400, 409, 422 or 503.
Refusal refusal_for(const ReturnRefusal& refused);
/// A settlement that was not made: 403, 404, 400, 409 or 503.
Refusal refusal_for(SettleRefused refused);
/// An erasure that was not made (POST /v1/leads/{id}/erase): 404, 409 or 503. kErased is no
/// refusal and must not be passed.
Refusal refusal_for(EraseStatus refused);

/// A statement or close refused: 403, 404, 422, 409 or 503.
Refusal refusal_for(StatementRefused refused);

/// A Surface B request refused: 415, 400, 429, 404 or 503.
Refusal refusal_for(CampaignRefused refused);
/// A buyer's own account route refused: 403 or 404.
Refusal refusal_for(AccountRefused refused);
/// A suppression list route refused: 404, 403, 415 or 422.
Refusal refusal_for(SuppressionRefused refused);
/// A sign-in, session or password change refused: 401, 429, 403 or 400.
Refusal refusal_for(SignInRefused refused);

/// Why GET /v1/live opened no stream.
enum class LiveRefused {
  kFull,         // the process holds LEADFLOW_LIVE_MAX_CONNECTIONS streams already
  kOff,          // this listener runs no live feed
  kUnavailable,  // the store could not answer a resume's read
};
Refusal refusal_for(LiveRefused refused);
Refusal refusal_for(PostbackRefused refused);

/// Why GET /v1/verticals/{name} answered no vertical (docs/visibility.md, "Verticals").
enum class VerticalRefused {
  kNoSuchVertical,  // no such vertical, or one the reading buyer does not buy (the same 404)
};
Refusal refusal_for(VerticalRefused refused);

/// Surface B: the refusal as {"status": code, "message": detail} (and Retry-After when it says
/// so), or, for fields at fault, {"status": "invalid", "errors": [...]}.
void send_b_refusal(http::Response& res, const Refusal& refusal);
/// Surface B's 400 for a lead's fields: {"status": "invalid", "errors": [{field, code, message}]}.
void send_b_invalid(http::Response& res, const FieldErrors& errors);

/// Surface A: the refusal as an RFC 9457 problem (and Retry-After when it says so), with its
/// field errors, or with `members` added to the body (a conflict naming the record it conflicts
/// with).
void send_problem(http::Response& res, const Refusal& refusal,
                  const nlohmann::json& members = nullptr);

}  // namespace leadflow
