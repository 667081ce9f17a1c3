#pragma once
// The audit log: security-relevant events (failed authentications, rate-limit refusals, keys
// made and revoked) as one JSON line each on stderr ("event": "audit.auth_failed", ...), written
// whatever LEADFLOW_LOG_LEVEL says, and counted in leadflow_audit_events_total{event,surface,kind}.
//
// Never a secret and never personal data in a record: keys are named by their public id
// (key_..., cp_...), or, when the key presented matched nothing, by its last four characters.
// Routes are patterns ("/api/v1/stats/{key}"), never the raw path, which may hold a key.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "leadflow/base/clock.hpp"

namespace leadflow {

enum class AuditEvent {
  kAuthFailed,
  kRateLimited,
  kKeyCreated,
  kKeyRevoked,
  kLeadReturned,
  kLeadSettled,
  kSignedIn,
  kSignedOut,
  kPasswordChanged,
  kTwoFactorEnabled,
  kTwoFactorDisabled,
  kTimeZoneChanged,
  kPeriodClosed
};

/// "auth_failed", "rate_limited", "key_created", "key_revoked", "lead_returned", "lead_settled",
/// "signed_in", "signed_out", "password_changed", "two_factor_enabled", "two_factor_disabled",
/// "time_zone_changed" (the dashboard's sessions), "period_closed" (docs/statements.md).
std::string_view to_string(AuditEvent event);

/// One event. Every field but `event` may be empty, and is then left out of the line. The views
/// need only live for the call.
struct AuditRecord {
  AuditEvent event = AuditEvent::kAuthFailed;
  /// "api" (Surface A and the operator routes), "campaign" (Surface B), "admin" (leadflow-admin),
  /// "console" (the dashboard's sign-in).
  std::string_view surface;
  /// What happened, from a small fixed set (it is a metric label). auth_failed: missing_key,
  /// unknown_key, revoked_key, inactive_campaign, invalid_session, csrf (a state-changing call
  /// of a session without its CSRF token), and on sign-in unknown_user, wrong_password,
  /// inactive_user, and on the second factor wrong_code; rate_limited: api_key, campaign,
  /// failed_auth_per_address, login_per_address, login_per_account, user (a session's user);
  /// signed_in: password, totp, recovery_code; two_factor_enabled: self; two_factor_disabled: self,
  /// operator_reset; signed_out: logout; password_changed: self (a user's own, POST
  /// /v1/session/password); time_zone_changed: self (PUT /v1/session/time-zone); key_created /
  /// key_revoked: api_key, campaign_key; lead_returned: the reason code (from the configured list);
  /// lead_settled: sold, not_sold; period_closed: month, week.
  std::string_view kind;
  std::string_view route;         // the route's pattern
  std::string_view client;        // the client's address
  std::string_view key_id;        // the API key concerned
  std::string_view campaign_id;   // the campaign (whose key) concerned
  std::string_view seller_id;     // the account concerned, when it is a seller's
  std::string_view buyer_id;      // lead_returned: the buyer the lead was sold to
  std::string_view lead_id;       // lead_returned: the lead
  std::string_view actor_key_id;  // key_created / key_revoked / lead_returned: the key that did it
  std::string_view credential_last4;  // auth_failed: the end of a key that matched nothing
  std::string_view user_id;           // the dashboard user concerned (never a password or token)
};

/// Writes audit records. A burst of one event from one source (the same client address, key or
/// campaign on the same route) is written once a second: the line after a burst carries
/// "repeats", the records folded into it. Across all sources at most kMaxLinesPerSecond lines are
/// written a second (a flood from many addresses cannot flood the log); what is left out is
/// counted in leadflow_audit_lines_dropped_total. Every record is counted in the events counter.
/// Thread-safe.
class AuditLog {
 public:
  static constexpr std::size_t kMaxLinesPerSecond = 1000;

  explicit AuditLog(const Clock& clock) : clock_(clock) {}
  void record(const AuditRecord& r);

 private:
  struct Source {
    SteadyTime last_line{};
    std::int64_t repeats = 0;
  };

  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Source> sources_;
  SteadyTime second_started_{};
  std::size_t lines_this_second_ = 0;
  bool warned_this_second_ = false;
};

/// The process's audit log, on the system clock.
AuditLog& audit_log();
inline void audit(const AuditRecord& r) { audit_log().record(r); }

/// The last four characters of a presented credential, for a record of a failed
/// authentication: only when it is long enough (24 or more printable ASCII characters) that
/// four of them reveal nothing useful; otherwise "" (a short secret, or something that is no
/// key at all, such as a password sent by mistake, is not quoted even in part).
std::string credential_last4(std::string_view presented);

}  // namespace leadflow
