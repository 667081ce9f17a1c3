#include "errors.hpp"

#include "auth.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {

Refusal refusal_for(ProduceStatus) {
  return {503, "unavailable", "the lead could not be queued durably; nothing was accepted, retry",
          true};
}

Refusal refusal_for(StoreStatus status, StoreStep step) {
  switch (status) {
    case StoreStatus::kConflict:
      return {409, "conflict", "conflicts with an existing record"};
    case StoreStatus::kNotFound:
      return {404, "not_found", "no such resource"};
    default:
      break;
  }
  switch (step) {
    case StoreStep::kWrite:
      return {503, "unavailable", "the store is unavailable; nothing was changed"};
    case StoreStep::kClaimLead:
      return {503, "unavailable", "the store is unavailable; nothing was accepted, retry"};
    case StoreStep::kCheckApiKey:
      return {503, "unavailable", "the service cannot check API keys right now; retry"};
    case StoreStep::kCheckCampaignKey:
      return {503, "unavailable", "the service cannot check campaign keys right now; retry"};
    case StoreStep::kRead:
      // A read changes nothing: the client may simply ask again, and is told when.
      return {503, "unavailable", "the store cannot be reached; retry", true};
  }
  return {503, "unavailable", "the store is unavailable"};
}

Refusal refusal_for(KeyRefused refused) {
  switch (refused) {
    case KeyRefused::kInvalid:
      return {400,
              "invalid",
              "invalid Idempotency-Key",
              false,
              {{"Idempotency-Key", "invalid_format", "1 to 255 printable ASCII characters"}}};
    case KeyRefused::kOtherBody:
      return {422, "unprocessable", "this Idempotency-Key was used with a different body"};
    case KeyRefused::kInProgress:
      return {409, "conflict", "a request with this Idempotency-Key is still in progress"};
    case KeyRefused::kUnavailable:
      break;
  }
  return refusal_for(StoreStatus::kUnavailable, StoreStep::kClaimLead);
}

Refusal refusal_for(PersonRefused refused, std::string_view field) {
  if (refused == PersonRefused::kListsUnknown)
    return {503, "unavailable", "the suppression lists cannot be read yet; retry", true};
  // Surface B answers {"status": "suppressed", "message": ...}; Surface A a problem naming the
  // field, so the seller's developer sees which of the person's details is on the list.
  Refusal r{422, "suppressed", "this person may not be sold: they are on a suppression list"};
  r.errors = {{std::string(field), "suppressed", "on a suppression list: may not be sold"}};
  return r;
}

Refusal refusal_for(const ReturnRefusal& refused) {
  switch (refused.reason) {
    case ReturnRefused::kNotBuyerOrOperator:
      return {403, "forbidden", "only the lead's buyer or the operator may return a lead"};
    case ReturnRefused::kNoSuchLead:
      return {404, "not_found", "no such lead"};
    case ReturnRefused::kBuyerNeeded:
      return {400,
              "invalid",
              "the return is invalid",
              false,
              {{"buyer_id", "required",
                "the lead was sold to several buyers: name the one returning it"}}};
    case ReturnRefused::kNotSold:
      return {409, "conflict", "the lead was not sold: there is nothing to return"};
    case ReturnRefused::kNotSoldToBuyer:
      return {409, "conflict", "the lead was not sold to that buyer"};
    case ReturnRefused::kNoReturns:
      return {422, "unprocessable", "this buyer's purchases cannot be returned (return window 0)"};
    case ReturnRefused::kAlreadyReturned:
      return {409, "conflict", "the lead was already returned"};
    case ReturnRefused::kWindowClosed:
      return {422, "unprocessable",
              "the return window of " + std::to_string(refused.window_days) + " days ended at " +
                  format_rfc3339_ms(refused.window_ended_ms)};
    case ReturnRefused::kBuyerUnreadable:
      return refusal_for(StoreStatus::kUnavailable, StoreStep::kRead);
    case ReturnRefused::kUnavailable:
      break;
  }
  return refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite);
}

Refusal refusal_for(SuppressionRefused refused) {
  switch (refused) {
    case SuppressionRefused::kNoSuchList:
      return {404, "not_found", "no such suppression list"};
    case SuppressionRefused::kOtherBuyer:
      return {403, "forbidden", "a buyer makes suppression lists of its own only"};
    case SuppressionRefused::kNotText:
      return {415, "unsupported_media_type",
              "send the entries as text/csv or text/plain: one e-mail, phone or SHA-256 a line"};
    case SuppressionRefused::kBadLines:
      return {422, "invalid", "lines of the upload are no e-mail, phone or SHA-256"};
    case SuppressionRefused::kTooManyEntries:
      return {422, "invalid", "more than 10,000,000 entries: a list holds at most that many"};
    case SuppressionRefused::kNotGzip:
      return {415, "unsupported_media_type",
              "send the entries clear or with Content-Encoding: gzip; no other coding is read"};
    case SuppressionRefused::kBadGzip:
      return {400, "invalid", "the gzip body is damaged or cut short; nothing was replaced"};
    case SuppressionRefused::kInflatesTooFar:
      return {413, "too_large",
              "the gzip body inflates past 1 GiB, an upload's limit; nothing was replaced"};
  }
  return {503, "unavailable", "the store is unavailable"};
}

Refusal refusal_for(AccountRefused refused) {
  switch (refused) {
    case AccountRefused::kNotBuyer:
      return {403, "forbidden", "/v1/account is a buyer's own account: use a buyer's key or user"};
    case AccountRefused::kNoBuyer:
      return {404, "not_found", "no such buyer"};
    case AccountRefused::kNoAccount:
      return {403, "forbidden",
              "/v1/account is a buyer's or a seller's own account: the operator reads them through "
              "/v1/buyers and /v1/sellers"};
    case AccountRefused::kNoSeller:
      return {404, "not_found", "no such seller"};
    case AccountRefused::kCapsClosed:
      return {403, "forbidden",
              "the operator has not allowed this buyer to change its own caps; ask the operator"};
    case AccountRefused::kFiltersClosed:
      break;
  }
  return {403, "forbidden",
          "the operator has not allowed this buyer to change its own filters; ask the operator"};
}

Refusal refusal_for(SettleRefused refused) {
  switch (refused) {
    case SettleRefused::kNotOperator:
      return {403, "forbidden", "this API key lacks permission for the operation"};
    case SettleRefused::kNoSuchLead:
      return {404, "not_found", "no such lead"};
    case SettleRefused::kBuyerNeeded:
      return {400,
              "invalid",
              "the settlement is invalid",
              false,
              {{"buyer_id", "required",
                "the lead was posted to several buyers: name the one settled with"}}};
    case SettleRefused::kNotUnknown:
      return {409, "conflict",
              "only a failed lead whose post outcome stayed unknown can be settled"};
    case SettleRefused::kAlreadySettled:
      return {409, "conflict", "the lead was already settled with this buyer"};
    case SettleRefused::kIntentsUnreadable:
      return refusal_for(StoreStatus::kUnavailable, StoreStep::kRead);
    case SettleRefused::kUnavailable:
      break;
  }
  return refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite);
}

Refusal refusal_for(EraseStatus refused) {
  switch (refused) {
    case EraseStatus::kNoSuchLead:
      return {404, "not_found", "no such lead"};
    case EraseStatus::kPending:
      return {409, "conflict", "the lead is still being distributed: erase it once it is decided"};
    case EraseStatus::kAlreadyErased:
      return {409, "conflict", "the lead's personal data was erased already"};
    case EraseStatus::kErased:
    case EraseStatus::kUnavailable:
      break;
  }
  return refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite);
}

Refusal refusal_for(StatementRefused refused) {
  switch (refused) {
    case StatementRefused::kNotOperator:
      return {403, "forbidden", "only the operator closes a period"};
    case StatementRefused::kNotYours:
      return {404, "not_found", "no such statement"};
    case StatementRefused::kNotEnded:
      return {422, "unprocessable", "the period has not ended everywhere yet (UTC-12)"};
    case StatementRefused::kAlreadyClosed:
      return {409, "conflict", "the period was already closed"};
    case StatementRefused::kUnavailable:
      break;
  }
  return refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite);
}

Refusal refusal_for(CampaignRefused refused) {
  switch (refused) {
    case CampaignRefused::kJsonOnly:
      return {415, "unsupported_media_type", "Content-Type must be application/json"};
    case CampaignRefused::kNotAForm:
      return {415, "unsupported_media_type",
              "Content-Type must be application/x-www-form-urlencoded, multipart/form-data or "
              "application/json"};
    case CampaignRefused::kKeyMismatch:
      return {400,
              "invalid",
              "",
              false,
              {{"SELLER_CAMPAIGN_KEY", "mismatch", "differs from the campaign key in the path"}}};
    case CampaignRefused::kRateLimited:
      return {429, "rate_limited", "the campaign's per-minute ceiling is reached"};
    case CampaignRefused::kNoSuchJob:
      return {404, "not_found", "no such job"};
    case CampaignRefused::kUnknownVertical:
      return {404, "not_found", "unknown vertical"};
    case CampaignRefused::kKeyUnavailable:
      return refusal_for(StoreStatus::kUnavailable, StoreStep::kCheckCampaignKey);
    case CampaignRefused::kReadUnavailable:
      break;
  }
  return refusal_for(StoreStatus::kUnavailable, StoreStep::kRead);
}

Refusal refusal_for(SignInRefused refused) {
  switch (refused) {
    case SignInRefused::kWrongCredentials:
      return {401, "unauthorized", "wrong e-mail or password"};
    case SignInRefused::kTooManyAttempts:
      return {429, "rate_limited", "too many failed sign-ins; retry later"};
    case SignInRefused::kNotSignedIn:
      return {401, "unauthorized", "not signed in, or the session has ended"};
    case SignInRefused::kCsrf:
      return {403, "forbidden", "missing or wrong X-CSRF-Token for this session"};
    case SignInRefused::kKeyHasNoPassword:
      return {403, "forbidden",
              "only a signed-in dashboard user can change its password; an API key has none"};
    case SignInRefused::kKeyHasNoTimeZone:
      return {403, "forbidden",
              "only a signed-in dashboard user can change its time zone; an API key has none"};
    case SignInRefused::kEnrolFirst:
      return {403, "forbidden", std::string(kEnrolFirst)};
    case SignInRefused::kWrongCurrentPassword:
      return {400,
              "invalid",
              "the password change is invalid",
              false,
              {{"current_password", "wrong", "is not the user's current password"}}};
    case SignInRefused::kNotOperator:
      return {403, "forbidden", "this API key lacks permission for the operation"};
    case SignInRefused::kUserDisabled:
      break;
  }
  return {401, "unauthorized", "the user was disabled; nothing was changed"};
}

Refusal refusal_for(LiveRefused refused) {
  switch (refused) {
    case LiveRefused::kFull:
      return {503, "unavailable",
              "this server holds as many live streams as it may; try again shortly", true};
    case LiveRefused::kOff:
      break;
    case LiveRefused::kUnavailable:
      return {503, "unavailable", "the store could not be read to resume the stream; try again",
              true};
  }
  return {503, "unavailable", "the live feed does not run here", false};
}

Refusal refusal_for(PostbackRefused refused) {
  switch (refused) {
    case PostbackRefused::kNotSellerOrOperator:
      return {403, "forbidden", "postback endpoints are a seller's or the operator's"};
    case PostbackRefused::kNoSuchEndpoint:
      return {404, "not_found", "no such postback endpoint"};
    case PostbackRefused::kNoSuchEvent:
      return {404, "not_found", "no such event at this endpoint"};
    case PostbackRefused::kRotatedMeanwhile:
      return {409, "conflict",
              "the secret was rotated by another request meanwhile; nothing was rotated: read the "
              "endpoint again"};
    case PostbackRefused::kOff:
      break;
  }
  return {503, "unavailable", "postbacks are not served here", false};
}

Refusal refusal_for(VerticalRefused refused) {
  switch (refused) {
    case VerticalRefused::kNoSuchVertical:
      break;
  }
  return {404, "not_found", "no such vertical"};
}

void send_b_invalid(http::Response& res, const FieldErrors& errors) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : errors)
    list.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  http::send_json(res, 400, {{"status", "invalid"}, {"errors", std::move(list)}});
}

void send_b_refusal(http::Response& res, const Refusal& refusal) {
  if (!refusal.errors.empty() && refusal.status == 400) return send_b_invalid(res, refusal.errors);
  if (refusal.retry_after) res.set_header("Retry-After", "1");
  http::send_json(res, refusal.status, {{"status", refusal.code}, {"message", refusal.detail}});
}

void send_problem(http::Response& res, const Refusal& refusal, const nlohmann::json& members) {
  if (refusal.retry_after) res.set_header("Retry-After", "1");
  if (members.is_object())
    http::send_problem_with(res, refusal.status, refusal.detail, members);
  else
    http::send_problem(res, refusal.status, refusal.detail, refusal.errors);
}

}  // namespace leadflow
