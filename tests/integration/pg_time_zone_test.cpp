// A dashboard user's time zone over real HTTPS, on SQLite and on PostgreSQL: the user sets it
// (PUT /v1/session/time-zone), the session answers it, and the lead list reads bare dates as
// whole days in it (or in `tz`), across New York's 25-hour 2026-11-01; an API key's days stay UTC.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "pg_test_database.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// Calendar time set by the test (moving on with the real clock); steady time stays real.
class SetCalendar final : public Clock {
 public:
  SystemTime now() const override {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ahead_ms_.load());
  }
  SteadyTime steady_now() const override { return std::chrono::steady_clock::now(); }
  void set(std::int64_t unix_ms) {
    const auto real = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    ahead_ms_ = unix_ms - real;
  }

 private:
  std::atomic<std::int64_t> ahead_ms_{0};
};

class UserTimeZone : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ServiceOptions o;
    o.clock = &clock_;
    if (GetParam() == "postgresql") {
      admin_ = pg_admin_url();
      ASSERT_FALSE(admin_.empty()) << "no PostgreSQL: run through ctest (postgres_start)";
      database_ = "lf_tz_" + new_id("t").substr(2);
      for (auto& ch : database_)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      ASSERT_TRUE(psql(admin_, "CREATE DATABASE " + database_));
      o.store_url = admin_.substr(0, admin_.rfind('/') + 1) + database_ + "?pool_size=4";
    }
    // 23:30 EST on 2026-11-01 in New York, already 2026-11-02 in UTC. New York's 1 November runs
    // 25 hours (04:00Z to 05:00Z the next day): a 24-hour day would have ended at 04:00Z.
    clock_.set(*parse_rfc3339_ms("2026-11-02T04:30:00Z"));
    svc_ = std::make_unique<ServiceFixture>(o);
  }
  void TearDown() override {
    svc_.reset();
    if (!database_.empty()) psql(admin_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }

  SetCalendar clock_;
  std::string admin_, database_;
  std::unique_ptr<ServiceFixture> svc_;
};

TEST_P(UserTimeZone, BareDatesAreWholeDaysInTheUsersZoneAcrossAChangeOfClocks) {
  ServiceFixture& svc = *svc_;
  const std::string seller = svc.add_seller("Zone Seller");
  const std::string key = svc.add_api_key({{"name", "zone"}, {"seller_id", seller}});
  auto posted = svc.post("/v1/leads", sample_lead(7), key);
  ASSERT_EQ(posted->status, 201) << posted->body;

  auto made = svc.post("/v1/users",
                       {{"email", "zone@example.com"},
                        {"name", "Zone"},
                        {"password", "a long enough password"},
                        {"account", "operator"}},
                       svc.operator_key());
  ASSERT_EQ(made->status, 201) << made->body;
  auto signed_in = svc.https()->Post(
      "/v1/session",
      json{{"email", "zone@example.com"}, {"password", "a long enough password"}}.dump(),
      "application/json");
  ASSERT_EQ(signed_in->status, 201) << signed_in->body;
  EXPECT_EQ(body_of(signed_in)["user"]["time_zone"], "UTC");
  const std::string set = signed_in->get_header_value("Set-Cookie");
  const httplib::Headers cookie{{"Cookie", set.substr(0, set.find(';'))}};
  httplib::Headers with_csrf = cookie;
  with_csrf.emplace("X-CSRF-Token", body_of(signed_in)["csrf_token"].get<std::string>());

  const auto put_zone = [&](const httplib::Headers& h, const std::string& zone) {
    return svc.https()->Put("/v1/session/time-zone", h, json{{"time_zone", zone}}.dump(),
                            "application/json");
  };
  EXPECT_EQ(put_zone(cookie, "America/New_York")->status, 403);  // no CSRF token
  auto unknown = put_zone(with_csrf, "America/Gotham");
  ASSERT_EQ(unknown->status, 400) << unknown->body;
  EXPECT_EQ(body_of(unknown)["errors"][0]["field"], "time_zone");
  auto changed = put_zone(with_csrf, "America/New_York");
  ASSERT_EQ(changed->status, 200) << changed->body;
  auto session = svc.https()->Get("/v1/session", cookie);
  EXPECT_EQ(body_of(session)["user"]["time_zone"], "America/New_York");

  const auto listed = [&](const std::string& query, const httplib::Headers& h) {
    auto r = svc.https()->Get(("/v1/leads?" + query).c_str(), h);
    EXPECT_EQ(r->status, 200) << query << ": " << r->body;
    return r->status == 200 ? body_of(r)["data"].size() : 99u;
  };
  // The session's days are New York's; `tz` chooses another; a key's are UTC.
  EXPECT_EQ(listed("created_from=2026-11-01&created_to=2026-11-01", cookie), 1u);
  EXPECT_EQ(listed("created_from=2026-11-02", cookie), 0u);
  EXPECT_EQ(listed("created_from=2026-11-01&created_to=2026-11-01&tz=UTC", cookie), 0u);
  EXPECT_EQ(listed("created_from=2026-11-02&created_to=2026-11-02&tz=UTC", cookie), 1u);
  const httplib::Headers by_key{{"Authorization", "Bearer " + key}};
  EXPECT_EQ(listed("created_from=2026-11-01&created_to=2026-11-01", by_key), 0u);
  EXPECT_EQ(listed("created_from=2026-11-02&created_to=2026-11-02", by_key), 1u);
  EXPECT_EQ(listed("created_to=2026-11-01&tz=America/New_York", by_key), 1u);
  // An instant is exact whatever the zone.
  EXPECT_EQ(listed("created_to=2026-11-02T04:00:00Z", cookie), 0u);
  EXPECT_EQ(svc.https()->Get("/v1/leads?created_from=2026-11-01&tz=Mars", cookie)->status, 400);
}

INSTANTIATE_TEST_SUITE_P(Stores, UserTimeZone, ::testing::Values("sqlite", "postgresql"));

}  // namespace
}  // namespace leadflow::testing
