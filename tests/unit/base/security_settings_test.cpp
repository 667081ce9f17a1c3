// The settings of the security bounds.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config_vars.hpp"
#include "leadflow/base/config.hpp"

namespace leadflow {
namespace {

std::optional<Config> load_security_config(const testing::ConfigVars& vars, std::string& error) {
  return testing::load_from(vars, error);
}

TEST(SecuritySettings, FailedAuthenticationsPerAddressDefaultTo20AMinute) {
  std::string error;
  auto c = load_security_config({}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->auth_failure_limit_per_minute, 20);
  c = load_security_config({{"LEADFLOW_AUTH_FAILURE_LIMIT", "5"}}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->auth_failure_limit_per_minute, 5);
  // The setting's former name still works; the new one wins when both are set.
  c = load_security_config({{"LEADFLOW_IP_RATE_LIMIT", "7"}}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->auth_failure_limit_per_minute, 7);
  c = load_security_config({{"LEADFLOW_IP_RATE_LIMIT", "7"}, {"LEADFLOW_AUTH_FAILURE_LIMIT", "9"}},
                           error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->auth_failure_limit_per_minute, 9);
  for (const char* bad : {"0", "-1", "many", ""}) {
    EXPECT_FALSE(load_security_config({{"LEADFLOW_AUTH_FAILURE_LIMIT", bad}}, error)) << bad;
    EXPECT_NE(error.find("LEADFLOW_AUTH_FAILURE_LIMIT"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace leadflow
