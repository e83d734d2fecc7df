// preflight: user-set torchrun variables that differ from the launcher's computed values.
#include <gtest/gtest.h>

#include "ddplaunch/preflight/env_conflicts.h"

using namespace ddplaunch::preflight;

TEST(PreflightEnvConflicts, KeysAreTheTorchrunContract) {
  EXPECT_EQ(torchrun_contract_keys(),
            (std::vector<std::string>{"RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                      "LOCAL_WORLD_SIZE", "GROUP_RANK"}));
}

TEST(PreflightEnvConflicts, OnlyDifferingValuesOfContractKeys) {
  EnvMap user = {{"MASTER_ADDR", "127.0.0.1"}, {"WORLD_SIZE", "8"}, {"RANK", "3"},
                 {"PATH", "/bin"}, {"GROUP_RANK", "0"}};
  EnvMap computed = {{"MASTER_ADDR", "10.0.0.5"}, {"WORLD_SIZE", "8"}, {"RANK", "0"},
                     {"PATH", "/usr/bin"}, {"LOCAL_RANK", "0"}};
  auto c = find_env_conflicts(user, computed);
  ASSERT_EQ(c.size(), 2u);
  // In key order: RANK before MASTER_ADDR.
  EXPECT_EQ(c[0].key, "RANK");
  EXPECT_EQ(c[0].user_value, "3");
  EXPECT_EQ(c[0].launcher_value, "0");
  EXPECT_EQ(c[1].key, "MASTER_ADDR");
  EXPECT_EQ(c[1].user_value, "127.0.0.1");
  EXPECT_EQ(c[1].launcher_value, "10.0.0.5");
  EXPECT_TRUE(find_env_conflicts(user, computed, {"PATH"}).size() == 1);
  EXPECT_TRUE(find_env_conflicts({}, computed).empty());
}

TEST(PreflightEnvConflicts, RenderedAsOneParagraph) {
  EXPECT_EQ(render_env_conflicts({}), "");
  std::string one = render_env_conflicts({{"MASTER_PORT", "29500", "29511"}});
  EXPECT_NE(one.find("MASTER_PORT=29500 (ddplaunch uses 29511)"), std::string::npos) << one;
  std::string three = render_env_conflicts(
      {{"RANK", "3", "0"}, {"WORLD_SIZE", "2", "16"}, {"MASTER_ADDR", "127.0.0.1", "10.0.0.5"}});
  EXPECT_NE(three.find("RANK=3 (ddplaunch uses 0), WORLD_SIZE=2 (ddplaunch uses 16) and MASTER_ADDR=127.0.0.1"),
            std::string::npos)
      << three;
  EXPECT_NE(three.find("Unset them"), std::string::npos);
  EXPECT_EQ(three.find('\n'), std::string::npos);
}
