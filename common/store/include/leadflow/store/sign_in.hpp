#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// The sign-in port: dashboard users' sign-ins, sessions and second factor, for the console,
/// the API's authentication and the two-factor routes.
class SignInStore : public virtual StorePort {
 public:
  // --- dashboard users' sign-ins and sessions ------------------------------------------------
  /// A sign-in: sets last_login_at, and the password hash to `rehashed` when that is not empty
  /// and the hash is still `verified` (the one the password was checked against: a password
  /// changed meanwhile is not replaced by the old one rehashed). Neither moves the version.
  virtual StoreStatus record_login(std::string_view user_id, std::int64_t at_ms,
                                   std::string_view rehashed, std::string_view verified) = 0;
  /// kConflict if the token hash exists or the user does not.
  virtual StoreStatus insert_session(const UserSession& s) = 0;
  virtual Lookup<UserSession> find_session(std::string_view token_hash) = 0;
  /// Marks a session used at `at_ms` (its idle time starts again); kNotFound if absent.
  virtual StoreStatus touch_session(std::string_view token_hash, std::int64_t at_ms) = 0;
  /// kNotFound if absent.
  virtual StoreStatus delete_session(std::string_view token_hash) = 0;
  /// Ends every session of a user (kOk when it had none).
  virtual StoreStatus delete_user_sessions(std::string_view user_id) = 0;
  /// Removes the sessions past their absolute expiry at `now_ms` or unused since before
  /// `idle_before_ms`.
  virtual StoreStatus delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) = 0;

  // --- dashboard users' second factor (docs/two-factor.md) --------------------------------------

  /// The user's second factor with its count of unused recovery codes; kNotFound for none.
  virtual Lookup<UserTotp> get_user_totp(std::string_view user_id) = 0;
  /// The second factor whose pending sign-in has this challenge hash; kNotFound for none.
  virtual Lookup<UserTotp> find_user_totp_by_challenge(std::string_view challenge_hash) = 0;
  /// Starts an enrolment (again): the user's second factor becomes `t.sealed_secret`, not enabled,
  /// with no step, challenge or recovery code. kConflict when the user's is enabled already, or
  /// when there is no such user.
  virtual StoreStatus begin_user_totp(const UserTotp& t) = 0;
  /// Confirms an enrolment: enabled, `step` as its last accepted step, and `recovery_hashes` as its
  /// recovery codes (replacing any), in one transaction. kNotFound when no enrolment waits.
  virtual StoreStatus enable_user_totp(std::string_view user_id, std::int64_t step,
                                       const std::vector<std::string>& recovery_hashes) = 0;
  /// Accepts a code of time step `step`: records it, only if the second factor is enabled and
  /// `step` is after the last accepted one. kNotFound otherwise (a replayed or older code), so two
  /// concurrent uses of one code cannot both pass.
  virtual StoreStatus accept_user_totp_step(std::string_view user_id, std::int64_t step) = 0;
  /// Uses one recovery code, once: kNotFound when the user has no unused code of this hash.
  virtual StoreStatus use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                        std::int64_t at_ms) = 0;
  /// Records a pending sign-in's challenge (replacing the one before) on an enabled second
  /// factor; kNotFound when there is none.
  virtual StoreStatus set_user_totp_challenge(std::string_view user_id,
                                              std::string_view challenge_hash,
                                              std::int64_t expires_at_ms) = 0;
  /// Ends the pending sign-in of this challenge hash, once: kNotFound when it is not the user's
  /// current one (used already, or replaced).
  virtual StoreStatus take_user_totp_challenge(std::string_view user_id,
                                               std::string_view challenge_hash) = 0;
  /// Turns the second factor off: removes it and its recovery codes. kNotFound when there was none.
  virtual StoreStatus delete_user_totp(std::string_view user_id) = 0;
};

}  // namespace leadflow
