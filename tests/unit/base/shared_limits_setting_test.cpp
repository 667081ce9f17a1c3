// LEADFLOW_SHARED_LIMITS: where the limits are counted, following the shape unless set.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config_vars.hpp"
#include "leadflow/base/config.hpp"

namespace leadflow {
namespace {

std::optional<Config> load_shared_limits_config(const testing::ConfigVars& vars,
                                                std::string& error) {
  return testing::load_from(vars, error);
}

TEST(SharedLimitsSetting, FollowsTheShapeUnlessSet) {
  std::string error;
  auto c = load_shared_limits_config({}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_FALSE(c->limits_shared()) << "embedded: one process";
  c = load_shared_limits_config({{"LEADFLOW_QUEUE", "kafka://127.0.0.1:9092"}}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(c->limits_shared()) << "scale-out: replicas share the store";
  c = load_shared_limits_config(
      {{"LEADFLOW_QUEUE", "kafka://127.0.0.1:9092"}, {"LEADFLOW_SHARED_LIMITS", "off"}}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_FALSE(c->limits_shared());
  c = load_shared_limits_config({{"LEADFLOW_SHARED_LIMITS", "on"}}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(c->limits_shared());
  c = load_shared_limits_config({{"LEADFLOW_SHARED_LIMITS", "auto"}}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_FALSE(c->limits_shared());
  EXPECT_FALSE(load_shared_limits_config({{"LEADFLOW_SHARED_LIMITS", "yes"}}, error));
  EXPECT_NE(error.find("LEADFLOW_SHARED_LIMITS"), std::string::npos) << error;
}

}  // namespace
}  // namespace leadflow
