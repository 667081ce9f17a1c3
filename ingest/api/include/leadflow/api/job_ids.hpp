#pragma once
// Surface B job ids. A job id is the lead id, a dot, and a tag: 16 Crockford base32 characters
// of HMAC-SHA256(campaign key, lead id). Only the holder of the campaign key the lead was posted
// with can make or check the tag, so a poll can tell "accepted for this campaign and not stored
// yet" (answered queued) from "never issued to this key" (answered like an id that does not
// exist) without asking the store or sharing anything between ingest replicas.
#include <string>
#include <string_view>

namespace leadflow {

/// The job id of `lead_id` posted with `campaign_key`.
std::string job_id_for(std::string_view lead_id, std::string_view campaign_key);

/// What a polled job id says.
struct JobRef {
  std::string lead_id;         // "" when the id is neither a job id nor a lead id
  bool issued_to_key = false;  // the tag checks against the key the poll presented
};
/// Reads a job id (or a bare lead id, which proves nothing) polled with `campaign_key`.
JobRef parse_job_id(std::string_view job_id, std::string_view campaign_key);

}  // namespace leadflow
