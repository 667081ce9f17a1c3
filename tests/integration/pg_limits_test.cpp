// The limits across replicas on PostgreSQL, the scale-out store: two ingest services on one
// database (LEADFLOW_SHARED_LIMITS=on, as in scale-out) hold one limit between them for sign-ins
// (attempts sent at once to both), failed authentications and test pings.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "leadflow/base/ids.hpp"
#include "limits_checks.hpp"
#include "pg_test_database.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

class PgTwoReplicas : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = pg_admin_url();
    ASSERT_FALSE(admin_.empty()) << kNoPostgres;
    database_ = "lf_limits_" + new_id("t").substr(2);
    for (auto& ch : database_) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    ASSERT_TRUE(psql(admin_, "CREATE DATABASE " + database_));
    ServiceOptions o;
    o.workers = 0;
    o.store_url = admin_.substr(0, admin_.rfind('/') + 1) + database_ + "?pool_size=4";
    o.shared_limits = true;
    o.auth_failure_limit = 4;
    a_ = std::make_unique<ServiceFixture>(o);
    b_ = std::make_unique<ServiceFixture>(o);
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    if (!database_.empty()) psql(admin_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }

  std::string admin_, database_;
  std::unique_ptr<ServiceFixture> a_, b_;
};

TEST_F(PgTwoReplicas, SignInsAreLimitedOnceForBoth) { check_concurrent_sign_ins({&*a_, &*b_}); }

TEST_F(PgTwoReplicas, FailedAuthenticationsAreLimitedOnceForBoth) {
  check_failed_authentications({&*a_, &*b_}, 4);
}

TEST_F(PgTwoReplicas, TestPingsAreLimitedOnceForBoth) {
  auto sim = start_buyer("pinged", 10.0);
  const std::string buyer = a_->add_buyer(*sim);
  check_test_pings({&*a_, &*b_}, buyer, a_->operator_key());
  EXPECT_EQ(sim->stats().pings, static_cast<std::uint64_t>(kTestPingsPerMinute));
}

}  // namespace
}  // namespace leadflow::testing
