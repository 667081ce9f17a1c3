// Ids, money, time formats, rate limiter (simulated clock), config, outcome waiters.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "config_vars.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/config.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/limits/rate_limiter.hpp"
#include "leadflow/outcomes/outcomes.hpp"

namespace leadflow {
namespace {

TEST(Ids, HavePrefixAndLengthAndAreValid) {
  const std::string id = new_id(kLeadPrefix);
  EXPECT_EQ(id.size(), 3u + 26u);
  EXPECT_EQ(id.substr(0, 3), "ld_");
  EXPECT_TRUE(is_valid_id(id, kLeadPrefix));
  EXPECT_FALSE(is_valid_id(id, kBuyerPrefix));
  EXPECT_FALSE(is_valid_id("ld_", kLeadPrefix));
  EXPECT_FALSE(is_valid_id("ld_0000000000000000000000000U", kLeadPrefix));  // U is not base32
  EXPECT_FALSE(is_valid_id("ld_80000000000000000000000000", kLeadPrefix));  // overflows 128 bits
}

TEST(Ids, SortInCreationOrderEvenWithinOneMillisecond) {
  std::string previous = new_id(kLeadPrefix, 1'700'000'000'000);
  for (int i = 0; i < 10'000; ++i) {
    const std::string next = new_id(kLeadPrefix, 1'700'000'000'000 + i / 1000);
    ASSERT_LT(previous, next);
    previous = next;
  }
}

TEST(Ids, CarryTheirTimestamp) {
  // The generator never goes back in time (a clock stepping backwards reuses the last
  // millisecond), so use the present rather than a fixed instant other tests may have passed.
  const std::int64_t now = SystemClock::instance().now_ms() + 5;
  const std::string id = new_id(kBuyerPrefix, now);
  EXPECT_EQ(id_time_ms(id, kBuyerPrefix), now);
  EXPECT_EQ(id_time_ms("nonsense", kBuyerPrefix), -1);
}

TEST(Ids, AreUniqueAcrossThreads) {
  std::vector<std::vector<std::string>> made(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) made[t].push_back(new_id(kLeadPrefix));
    });
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (auto& v : made) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 20'000u);
}

TEST(Money, DecimalsBecomeCentsRoundedHalfAwayFromZero) {
  EXPECT_EQ(cents_from_decimal(14.25), 1425);
  EXPECT_EQ(cents_from_decimal(0.1 + 0.2), 30);
  EXPECT_EQ(cents_from_decimal(19.999), 2000);
  EXPECT_EQ(cents_from_decimal(0.005), 1);
  EXPECT_EQ(cents_from_decimal(0), 0);
  EXPECT_FALSE(cents_from_decimal(-1));
  EXPECT_FALSE(cents_from_decimal(std::nan("")));
  EXPECT_FALSE(cents_from_decimal(1e300));
  EXPECT_FALSE(cents_from_decimal(1'000'000.01));
}

TEST(Money, FormatsAndSplits) {
  EXPECT_EQ(format_cents(1425), "14.25");
  EXPECT_EQ(format_cents(5), "0.05");
  EXPECT_EQ(format_cents(-310), "-3.10");
  EXPECT_DOUBLE_EQ(cents_to_decimal(1425), 14.25);
  EXPECT_EQ(apply_basis_points(1425, 7000), 998);  // 70% of 14.25 = 9.975 -> 9.98
  EXPECT_EQ(apply_basis_points(1000, 3333), 333);
  EXPECT_EQ(apply_basis_points(1, 5000), 1);  // half up
  EXPECT_EQ(apply_basis_points(0, 7000), 0);
}

TEST(TimeFormat, RoundTripsAndRefusesNonsense) {
  EXPECT_EQ(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339_ms(1'763'793'145'123), "2025-11-22T06:32:25.123Z");
  EXPECT_EQ(parse_rfc3339_ms("2025-11-22T06:32:25.123Z"), 1'763'793'145'123);
  EXPECT_EQ(parse_rfc3339_ms("2025-11-22T07:32:25.123+01:00"), 1'763'793'145'123);
  EXPECT_EQ(parse_rfc3339_ms("2025-11-22"), 1'763'769'600'000);
  EXPECT_FALSE(parse_rfc3339_ms("2025-02-30"));
  EXPECT_FALSE(parse_rfc3339_ms("2025-11-22T06:32:25"));  // no offset
  EXPECT_FALSE(parse_rfc3339_ms("yesterday"));
  EXPECT_FALSE(parse_rfc3339_ms(""));
  EXPECT_FALSE(parse_rfc3339_ms("2025-11-22T25:00:00Z"));
}

TEST(RateLimiter, AllowsTheMinuteLimitThenRefusesWithHeaders) {
  ManualClock clock;
  RateLimiter limiter(clock);
  for (int i = 0; i < 100; ++i) {
    const auto d = limiter.acquire("k", 100, 10'000);
    ASSERT_TRUE(d.allowed) << i;
    EXPECT_EQ(d.limit, 100);
    EXPECT_EQ(d.remaining, 99 - i);
  }
  const auto refused = limiter.acquire("k", 100, 10'000);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_EQ(refused.retry_after_s, 1);  // one token comes back every 0.6 s
  EXPECT_EQ(refused.reset_unix, clock.now_ms() / 1000 + 60);
  // Keys are independent.
  EXPECT_TRUE(limiter.acquire("other", 100, 10'000).allowed);
}

TEST(RateLimiter, RefillsEvenlyOverTheMinute) {
  ManualClock clock;
  RateLimiter limiter(clock);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(limiter.acquire("k", 100, 0).allowed);
  clock.advance(std::chrono::milliseconds(590));
  EXPECT_FALSE(limiter.acquire("k", 100, 0).allowed);
  clock.advance(std::chrono::milliseconds(20));
  EXPECT_TRUE(limiter.acquire("k", 100, 0).allowed);
  EXPECT_FALSE(limiter.acquire("k", 100, 0).allowed);
  clock.advance(std::chrono::minutes(5));
  const auto d = limiter.acquire("k", 100, 0);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 99);  // full again, never more than the limit
}

TEST(RateLimiter, DailyLimitBindsAndResetsAtUtcMidnight) {
  ManualClock clock(SystemTime{std::chrono::seconds{1'763'769'600}});  // 2025-11-22T00:00:00Z
  RateLimiter limiter(clock);
  int allowed = 0;
  for (int minute = 0; minute < 30; ++minute) {
    for (int i = 0; i < 10; ++i) allowed += limiter.acquire("k", 10, 50).allowed ? 1 : 0;
    clock.advance(std::chrono::minutes(1));
  }
  EXPECT_EQ(allowed, 50);
  auto d = limiter.acquire("k", 10, 50);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reset_unix, 1'763'769'600 + 86'400);
  EXPECT_GT(d.retry_after_s, 60);
  clock.advance(std::chrono::hours(24));
  EXPECT_TRUE(limiter.acquire("k", 10, 50).allowed);
}

TEST(RateLimiter, RemainingIsTheSmallerAllowance) {
  ManualClock clock;
  RateLimiter limiter(clock);
  const auto d = limiter.acquire("k", 100, 3);
  EXPECT_EQ(d.remaining, 2);
}

using testing::env_of;
using testing::names_of;

TEST(Config, DefaultsAreTheEmbeddedShape) {
  std::map<std::string, std::string> vars;
  std::string error;
  auto c = load_config(env_of(vars), names_of(vars), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->queue_url, "embedded");
  EXPECT_EQ(c->store_url, "sqlite:leadflow-data/leadflow.db");
  EXPECT_EQ(c->listen.host, "127.0.0.1");
  EXPECT_EQ(c->listen.port, 8443);
  EXPECT_FALSE(c->http_listen);
  EXPECT_EQ(c->shape, Shape::kEmbedded);
  EXPECT_FALSE(c->kafka_queue());
}

TEST(Config, TheShapeIsASettingOfItsOwn) {
  std::string error;
  // Unset, it follows the queue: Kafka means scale-out.
  std::map<std::string, std::string> kafka = {{"LEADFLOW_QUEUE", "kafka://k1:9092,k2:9092"}};
  auto c = load_config(env_of(kafka), names_of(kafka), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->shape, Shape::kScaleOut);
  EXPECT_TRUE(c->kafka_queue());
  // One process with its workers inside, on Kafka.
  kafka["LEADFLOW_SHAPE"] = "embedded";
  c = load_config(env_of(kafka), names_of(kafka), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->shape, Shape::kEmbedded);
  EXPECT_TRUE(c->kafka_queue());
  // The embedded queue lives in one process: it cannot be shared by a scale-out shape.
  std::map<std::string, std::string> bad = {{"LEADFLOW_SHAPE", "scale-out"}};
  EXPECT_FALSE(load_config(env_of(bad), names_of(bad), error));
  EXPECT_NE(error.find("LEADFLOW_SHAPE"), std::string::npos) << error;
  bad = {{"LEADFLOW_SHAPE", "cluster"}};
  EXPECT_FALSE(load_config(env_of(bad), names_of(bad), error));
  EXPECT_NE(error.find("LEADFLOW_SHAPE"), std::string::npos) << error;
}

TEST(Config, BadSettingsNameThemselves) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"LEADFLOW_LISTEN", "nowhere"},
      {"LEADFLOW_STORE", "mysql://x"},
      {"LEADFLOW_QUEUE", "rabbit://x"},
      {"LEADFLOW_HTTP_THREADS", "many"},
      {"LEADFLOW_WAIT_MS", "-1"},
      {"LEADFLOW_ALLOW_PRIVATE_BUYERS", "maybe"},
      {"LEADFLOW_TRUSTED_PROXIES", "10.0.0.0/99"},
      {"LEADFLOW_BOOTSTRAP_KEY", "short"},
      {"LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL", "ops@example.com"},  // without its password file
      {"LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE", "/run/secrets/password"},  // without an e-mail
      {"LEADFLOW_TLS_CERT", "/only/cert.pem"},
      {"LEADFLOW_LOG_LEVEL", "loud"},
      {"LEADFLOW_HEADER_TIMEOUT_MS", "0"},
      {"LEADFLOW_BODY_MIN_RATE", "0"},
      {"LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS", "-1"},
      {"LEADFLOW_LIVE_MAX_CONNECTIONS", "-1"},
      {"LEADFLOW_LIVE_POLL_MS", "10"},
      {"LEADFLOW_BUYER_CONNECTIONS", "0"},
      {"LEADFLOW_BUYER_CA_FILE", "/no/such/ca.pem"},
      {"LEADFLOW_BUYER_HTTP2", "sometimes"},
      {"LEADFLOW_REQUIRE_OPERATOR_2FA", "yes"},
      {"LEADFLOW_TOTP_KEY_FILE", "/no/such/key"},
      {"LEADFLOW_KAFKA_LINGER_MS", "1001"},
      {"LEADFLOW_KAFKA_FETCH_WAIT_MS", "0"},
      {"LEADFLOW_NO_SUCH_THING", "1"},
  };
  for (const auto& [name, value] : bad) {
    std::map<std::string, std::string> vars = {{name, value}};
    std::string error;
    EXPECT_FALSE(load_config(env_of(vars), names_of(vars), error)) << name;
    EXPECT_NE(error.find(name), std::string::npos) << error;
  }
}

TEST(Config, ReadsTheTwoFactorSettings) {
  const std::string path = ::testing::TempDir() + "/leadflow_totp_key";
  {
    std::ofstream out(path);
    out << "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
  }
  std::map<std::string, std::string> vars = {{"LEADFLOW_REQUIRE_OPERATOR_2FA", "1"},
                                             {"LEADFLOW_TOTP_KEY_FILE", path}};
  std::string error;
  auto c = load_config(env_of(vars), names_of(vars), error);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(c->require_operator_2fa);
  ASSERT_EQ(c->totp_key.size(), 32u);
  EXPECT_EQ(c->totp_key[0], '\x00');
  EXPECT_EQ(c->totp_key[31], '\x1f');

  {
    std::ofstream out(path);
    out << "not a key\n";
  }
  EXPECT_FALSE(load_config(env_of(vars), names_of(vars), error));
  EXPECT_NE(error.find("LEADFLOW_TOTP_KEY_FILE"), std::string::npos) << error;

  vars = {};
  c = load_config(env_of(vars), names_of(vars), error);
  ASSERT_TRUE(c) << error;
  EXPECT_FALSE(c->require_operator_2fa);
  EXPECT_TRUE(c->totp_key.empty());
}

TEST(Config, ParsesEverySetting) {
  std::map<std::string, std::string> vars = {
      {"LEADFLOW_STORE", "sqlite:/tmp/x.db"},
      {"LEADFLOW_LISTEN", "0.0.0.0:9443"},
      {"LEADFLOW_HTTP_LISTEN", "127.0.0.1:8080"},
      {"LEADFLOW_METRICS_LISTEN", ":9100"},
      {"LEADFLOW_TRUSTED_PROXIES", "10.0.0.0/8,::1"},
      {"LEADFLOW_ALLOW_PRIVATE_BUYERS", "1"},
      {"LEADFLOW_BOOTSTRAP_KEY", "lfk_0123456789abcdefghijklmnop"},
      {"LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL", "ops@example.com"},
      {"LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE", "/run/secrets/password"},
      {"LEADFLOW_WORKERS", "2"},
      {"LEADFLOW_KAFKA_LINGER_MS", "0"},
      {"LEADFLOW_KAFKA_FETCH_WAIT_MS", "5"}};
  std::string error;
  auto c = load_config(env_of(vars), names_of(vars), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->store_url, "sqlite:/tmp/x.db");
  EXPECT_EQ(c->kafka_linger_ms, 0);
  EXPECT_EQ(c->kafka_fetch_wait_ms, 5);
  EXPECT_EQ(c->listen.port, 9443);
  ASSERT_TRUE(c->http_listen);
  EXPECT_EQ(c->http_listen->port, 8080);
  ASSERT_TRUE(c->metrics_listen);
  EXPECT_EQ(c->metrics_listen->host, "0.0.0.0");
  EXPECT_EQ(c->trusted_proxies.size(), 2u);
  EXPECT_TRUE(c->allow_private_buyers);
  EXPECT_EQ(c->bootstrap_operator_email, "ops@example.com");
  EXPECT_EQ(c->bootstrap_operator_password_file, "/run/secrets/password");
  EXPECT_EQ(c->workers, 2);
}

TEST(Config, FrontBoundsAndBuyerConnections) {
  std::string error;
  std::map<std::string, std::string> none;
  auto d = load_config(env_of(none), names_of(none), error);
  ASSERT_TRUE(d) << error;
  EXPECT_EQ(d->header_timeout_ms, 10000);
  EXPECT_EQ(d->body_timeout_ms, 10000);
  EXPECT_EQ(d->body_min_rate, 4096);
  EXPECT_EQ(d->tls_handshake_timeout_ms, 10000);
  EXPECT_EQ(d->max_connections, 10000);
  EXPECT_EQ(d->max_connections_per_address, 256);
  EXPECT_EQ(d->buyer_connections, 8192);
  EXPECT_EQ(d->buyer_host_connections, 2048);
  EXPECT_EQ(d->buyer_http2, "auto");
  EXPECT_EQ(d->live_max_connections, 1000);
  EXPECT_EQ(d->live_poll_ms, 500);
  std::map<std::string, std::string> vars = {
      {"LEADFLOW_LIVE_MAX_CONNECTIONS", "0"}, {"LEADFLOW_LIVE_POLL_MS", "250"},
      {"LEADFLOW_HEADER_TIMEOUT_MS", "5000"}, {"LEADFLOW_BODY_TIMEOUT_MS", "7000"},
      {"LEADFLOW_BODY_MIN_RATE", "1024"},     {"LEADFLOW_TLS_HANDSHAKE_TIMEOUT_MS", "3000"},
      {"LEADFLOW_MAX_CONNECTIONS", "2000"},   {"LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS", "0"},
      {"LEADFLOW_BUYER_CONNECTIONS", "4000"}, {"LEADFLOW_BUYER_HOST_CONNECTIONS", "500"}};
  auto c = load_config(env_of(vars), names_of(vars), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->header_timeout_ms, 5000);
  EXPECT_EQ(c->body_timeout_ms, 7000);
  EXPECT_EQ(c->body_min_rate, 1024);
  EXPECT_EQ(c->tls_handshake_timeout_ms, 3000);
  EXPECT_EQ(c->max_connections, 2000);
  EXPECT_EQ(c->max_connections_per_address, 0);
  EXPECT_EQ(c->buyer_connections, 4000);
  EXPECT_EQ(c->buyer_host_connections, 500);
  EXPECT_EQ(c->live_max_connections, 0);
  EXPECT_EQ(c->live_poll_ms, 250);
}

TEST(OutcomeWaiters, DeliversToTheWaiterAndForgetsIt) {
  OutcomeWaiters waiters;
  auto ticket = waiters.expect("ld_1");
  EXPECT_EQ(waiters.waiting(), 1u);
  std::thread t([&] { waiters.deliver({"ld_1", DeliveryStatus::kDelivered, "by_1", 1425, 998}); });
  auto got = ticket->wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(5));
  t.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->price, 1425);
  ticket.reset();
  EXPECT_EQ(waiters.waiting(), 0u);
  EXPECT_FALSE(waiters.deliver({"ld_1", DeliveryStatus::kDelivered, "", 0, 0}));
}

TEST(OutcomeWaiters, TimesOutWithoutAnOutcome) {
  OutcomeWaiters waiters;
  auto ticket = waiters.expect("ld_2");
  EXPECT_FALSE(ticket->wait_until(std::chrono::steady_clock::now()));
}

TEST(Outcome, EncodesAndDecodes) {
  const OutcomeMessage m{"ld_3", DeliveryStatus::kUnsold, "", 0, 0};
  auto back = decode_outcome(encode_outcome(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, DeliveryStatus::kUnsold);
  EXPECT_FALSE(decode_outcome("{}"));
  EXPECT_FALSE(decode_outcome("not json"));
}

}  // namespace
}  // namespace leadflow
