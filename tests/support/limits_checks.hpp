#pragma once
// The limits as a client meets them, over real HTTPS: many attempts sent at once, and two ingest
// services sharing one store (as two replicas would). Header-only checks, run by limits_test on
// a SQLite file and by pg_limits_test on PostgreSQL.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "leadflow/api/buyer_test_ping.hpp"
#include "leadflow/limits/sign_in_limits.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {

inline constexpr const char* kLimitsPassword = "a long enough password";

/// What a burst of requests got back.
struct Tally {
  std::atomic<int> ok{0};        // the attempt was checked and failed (401, or 400 for a password)
  std::atomic<int> limited{0};   // 429 with Retry-After
  std::atomic<int> other{0};     // anything else (each a test failure)
  std::atomic<int> no_retry{0};  // 429 without Retry-After
};

/// Sends `n` requests at once, each from a thread and a connection of its own; `send(i)` makes
/// request i and answers its result. `failed_status` is what a checked and failed attempt gets.
inline void burst(int n, int failed_status, const std::function<httplib::Result(int)>& send,
                  Tally& tally) {
  std::latch start(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      const httplib::Result r = send(i);
      if (!r) {
        ++tally.other;
      } else if (r->status == failed_status) {
        ++tally.ok;
      } else if (r->status == 429) {
        ++tally.limited;
        if (r->get_header_value("Retry-After").empty()) ++tally.no_retry;
      } else {
        ++tally.other;
        ADD_FAILURE() << r->status << " " << r->body;
      }
    });
  }
  for (auto& t : threads) t.join();
}

inline httplib::Result sign_in(const ServiceFixture& svc, const std::string& email,
                               const std::string& password, httplib::Headers headers = {}) {
  return svc.https()->Post("/v1/session", headers,
                           nlohmann::json{{"email", email}, {"password", password}}.dump(),
                           "application/json");
}

inline void add_user(const ServiceFixture& svc, const std::string& email) {
  auto r = svc.post(
      "/v1/users",
      {{"email", email}, {"name", email}, {"password", kLimitsPassword}, {"account", "operator"}},
      svc.operator_key());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
}

/// 24 wrong passwords for one account at once, spread over `services`: at most the account's
/// limit is checked (401), the others are refused (429 with Retry-After); then even the right
/// password is refused.
inline void check_concurrent_sign_ins(const std::vector<const ServiceFixture*>& services) {
  const std::string email = "burst@example.com";
  add_user(*services[0], email);
  Tally t;
  burst(
      24, 401,
      [&](int i) {
        return sign_in(*services[i % services.size()], email, "wrong guess " + std::to_string(i));
      },
      t);
  EXPECT_EQ(t.ok.load(), SignInLimits::kPerAccount) << "passwords checked";
  EXPECT_EQ(t.limited.load(), 24 - SignInLimits::kPerAccount);
  EXPECT_EQ(t.no_retry.load(), 0);
  EXPECT_EQ(t.other.load(), 0);
  for (const ServiceFixture* svc : services) {
    auto right = sign_in(*svc, email, kLimitsPassword);
    ASSERT_TRUE(right);
    EXPECT_EQ(right->status, 429) << "the right password waits for the window too";
  }
}

/// Failed authentications from one address, alternating over `services`, with
/// LEADFLOW_AUTH_FAILURE_LIMIT = `limit` a minute: `limit` 401s in all, not `limit` each.
inline void check_failed_authentications(const std::vector<const ServiceFixture*>& services,
                                         int limit) {
  int unauthorized = 0, limited = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 3 * limit; ++i) {
    auto r = services[i % services.size()]->get("/v1/leads", "lf_not_a_key_" + std::to_string(i));
    ASSERT_TRUE(r);
    if (r->status == 401)
      ++unauthorized;
    else if (r->status == 429)
      ++limited;
    else
      FAIL() << r->status << " " << r->body;
  }
  // The bucket refills `limit` a minute: what it refilled while the test ran may pass too.
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_GE(unauthorized, limit);
  EXPECT_LE(unauthorized, limit + static_cast<int>(elapsed_s * limit / 60.0)) << elapsed_s << " s";
  EXPECT_EQ(unauthorized + limited, 3 * limit);
}

/// Test pings of one buyer by one caller (the same operator key), alternating over `services`:
/// kTestPingsPerMinute in all.
inline void check_test_pings(const std::vector<const ServiceFixture*>& services,
                             const std::string& buyer_id, const std::string& key) {
  const std::string path = "/v1/buyers/" + buyer_id + "/test-ping";
  int pinged = 0, limited = 0;
  for (int i = 0; i < kTestPingsPerMinute + 6; ++i) {
    auto r = services[i % services.size()]->post(path, nlohmann::json::object(), key);
    ASSERT_TRUE(r);
    if (r->status == 200)
      ++pinged;
    else if (r->status == 429)
      ++limited;
    else
      FAIL() << r->status << " " << r->body;
  }
  // A bucket of 10 a minute: at most what it refilled meanwhile on top (the test takes seconds).
  EXPECT_GE(pinged, kTestPingsPerMinute);
  EXPECT_LE(pinged, kTestPingsPerMinute + 1);
  EXPECT_EQ(pinged + limited, kTestPingsPerMinute + 6);
}

}  // namespace leadflow::testing
