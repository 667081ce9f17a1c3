#pragma once
// The dashboard's sign-in limits: the attempts at a user's secrets (its password at sign-in or
// when changing it, and any further factor) per client address and per account.
#include <chrono>
#include <string_view>

#include "leadflow/base/clock.hpp"
#include "leadflow/limits/attempt_limiter.hpp"

namespace leadflow {

class LimitsStore;

/// At most kPerAddress attempts per client address (an IPv6 client: its /64) and kPerAccount
/// per account (the normalised e-mail, known or not) in any kWindow, each attempt reserved
/// before its secret is checked (AttemptLimiter). Every check of a user's secret goes through
/// the same two steps, whatever the secret:
///
///   SignInAttempt a = limits.reserve(client, email);
///   if (a.decision.status != AttemptStatus::kReserved) ... 429 with Retry-After, or 503 ...
///   if (secret_is_right) limits.succeeded(a); else ... 401 (the places stay) ...
///
/// A second factor checked after the password reserves again the same way, so wrong codes count
/// against the same limits. Local to this process, or shared through the store (scale-out).
/// Thread-safe.
class SignInLimits {
 public:
  static constexpr int kPerAddress = 10;
  static constexpr int kPerAccount = 5;
  static constexpr std::chrono::minutes kWindow{15};

  /// Limits of this process only.
  explicit SignInLimits(const Clock& clock);
  /// Limits shared by every process using `store`.
  SignInLimits(const Clock& clock, LimitsStore& store);

  /// Which limit refused an attempt (for the audit log).
  enum class Limit { kPerAddress, kPerAccount };
  struct Attempt {
    AttemptDecision decision;
    Limit refused_by = Limit::kPerAddress;  // when decision.status is kRefused
  };

  /// Reserves one attempt for the account `email` (normalised) from `client_address`.
  Attempt reserve(std::string_view client_address, std::string_view email);
  /// The secret was right: the attempt's places go back.
  void succeeded(Attempt& attempt);

 private:
  AttemptLimiter limiter_;
};

}  // namespace leadflow
