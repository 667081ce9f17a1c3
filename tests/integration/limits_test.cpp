// The limits under concurrency and across replicas, over real HTTPS on a real SQLite file:
// attempts at a password sent at once never get more than the limit checked, two ingest services
// sharing one store (LEADFLOW_SHARED_LIMITS=on) hold one limit between them for sign-ins,
// failed authentications and test pings, and an IPv6 client is limited by its /64.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "leadflow/limits/sign_in_limits.hpp"
#include "limits_checks.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

ServiceOptions quiet() {
  ServiceOptions o;
  o.workers = 0;
  return o;
}

TEST(LimitsUnderConcurrency, ConcurrentWrongPasswordsGetAtMostTheLimitChecked) {
  ServiceFixture svc(quiet());
  check_concurrent_sign_ins({&svc});
}

TEST(LimitsUnderConcurrency, ConcurrentWrongCurrentPasswordsGetAtMostTheLimitChecked) {
  ServiceFixture svc(quiet());
  const std::string email = "changer@example.com";
  add_user(svc, email);
  auto in = sign_in(svc, email, kLimitsPassword);
  ASSERT_EQ(in->status, 201) << in->body;
  const std::string set = in->get_header_value("Set-Cookie");
  const httplib::Headers h = {{"Cookie", set.substr(0, set.find(';'))},
                              {"X-CSRF-Token", json::parse(in->body)["csrf_token"]}};
  const auto change = [&](const std::string& current) {
    return svc.https()->Post(
        "/v1/session/password", h,
        json{{"current_password", current}, {"new_password", "a brand new password"}}.dump(),
        "application/json");
  };
  Tally t;
  burst(
      24, 400, [&](int i) { return change("wrong guess " + std::to_string(i)); }, t);
  EXPECT_EQ(t.ok.load(), SignInLimits::kPerAccount) << "passwords checked";
  EXPECT_EQ(t.limited.load(), 24 - SignInLimits::kPerAccount);
  EXPECT_EQ(t.no_retry.load(), 0);
  EXPECT_EQ(change(kLimitsPassword)->status, 429) << "the right one waits for the window too";
}

TEST(LimitsUnderConcurrency, ASuccessfulSignInDoesNotUseUpTheAccount) {
  ServiceFixture svc(quiet());
  add_user(svc, "often@example.com");
  // Twice the account's limit of right passwords, several at once: each gives its place back.
  Tally t;
  burst(
      2 * SignInLimits::kPerAccount, 201,
      [&](int) { return sign_in(svc, "often@example.com", kLimitsPassword); }, t);
  EXPECT_EQ(t.ok.load() + t.limited.load(), 2 * SignInLimits::kPerAccount);
  EXPECT_GE(t.ok.load(), SignInLimits::kPerAccount);
  EXPECT_EQ(sign_in(svc, "often@example.com", kLimitsPassword)->status, 201);
}

// Two ingest services on one SQLite file, each with its own queue, as two replicas.
class TwoReplicas : public ::testing::Test {
 protected:
  static ServiceOptions shared(const TempDir& dir) {
    ServiceOptions o = quiet();
    o.store_url = "sqlite:" + dir.path() + "/shared.db";
    o.shared_limits = true;
    o.auth_failure_limit = 4;
    return o;
  }
  TempDir dir_;
  ServiceFixture a_{shared(dir_)};
  ServiceFixture b_{shared(dir_)};
};

TEST_F(TwoReplicas, SignInsAreLimitedOnceForBoth) { check_concurrent_sign_ins({&a_, &b_}); }

TEST_F(TwoReplicas, FailedAuthenticationsAreLimitedOnceForBoth) {
  check_failed_authentications({&a_, &b_}, 4);
}

TEST_F(TwoReplicas, TestPingsAreLimitedOnceForBoth) {
  auto sim = start_buyer("pinged", 10.0);
  const std::string buyer = a_.add_buyer(*sim);
  check_test_pings({&a_, &b_}, buyer, a_.operator_key());
  EXPECT_EQ(sim->stats().pings, static_cast<std::uint64_t>(kTestPingsPerMinute));
}

TEST(LimitsPerAddress, AnIpv6ClientIsLimitedByItsSlashSixtyFour) {
  ServiceOptions o = quiet();
  o.trusted_proxies = {"127.0.0.1/32"};
  o.auth_failure_limit = 3;
  ServiceFixture svc(o);
  const auto bad_key_from = [&](const std::string& address) {
    auto r = svc.https()->Get(
        "/v1/leads", {{"Authorization", "Bearer lf_not_a_key"}, {"X-Forwarded-For", address}});
    return r ? r->status : 0;
  };
  // Three addresses of one /64 use its allowance; a fourth of the same /64 is refused.
  for (int i = 1; i <= 3; ++i)
    EXPECT_EQ(bad_key_from("2001:db8:1:2::" + std::to_string(i)), 401) << i;
  EXPECT_EQ(bad_key_from("2001:db8:1:2:ffff:eeee:dddd:cccc"), 429);
  // Another /64 is another subscriber.
  EXPECT_EQ(bad_key_from("2001:db8:1:3::1"), 401);

  // The sign-in limit of an address too: ten accounts tried from ten addresses of one /64.
  for (int i = 0; i < SignInLimits::kPerAddress; ++i) {
    auto r = sign_in(svc, "nobody" + std::to_string(i) + "@example.com", kLimitsPassword,
                     {{"X-Forwarded-For", "2001:db8:9:9::" + std::to_string(i + 1)}});
    ASSERT_EQ(r->status, 401) << i << " " << r->body;
  }
  auto limited = sign_in(svc, "someone@example.com", kLimitsPassword,
                         {{"X-Forwarded-For", "2001:db8:9:9:1234::1"}});
  EXPECT_EQ(limited->status, 429) << limited->body;
}

}  // namespace
}  // namespace leadflow::testing
