#include "leadflow/limits/sign_in_limits.hpp"

#include <string>

#include "leadflow/base/address_key.hpp"
#include "leadflow/base/crypto.hpp"

namespace leadflow {

SignInLimits::SignInLimits(const Clock& clock) : limiter_(clock, kWindow) {}

SignInLimits::SignInLimits(const Clock& clock, LimitsStore& store)
    : limiter_(clock, kWindow, store) {}

SignInLimits::Attempt SignInLimits::reserve(std::string_view client_address,
                                            std::string_view email) {
  // The account's key is the e-mail's SHA-256: of bounded length whatever was typed, and the
  // store's windows name no one.
  const std::vector<AttemptKey> keys = {
      {"signin:addr:" + address_limit_key(client_address), kPerAddress},
      {"signin:acct:" + sha256_hex(email), kPerAccount}};
  Attempt a;
  a.decision = limiter_.reserve(keys);
  a.refused_by = a.decision.refused_by == 0 ? Limit::kPerAddress : Limit::kPerAccount;
  return a;
}

void SignInLimits::succeeded(Attempt& attempt) { limiter_.release(attempt.decision.reservation); }

}  // namespace leadflow
