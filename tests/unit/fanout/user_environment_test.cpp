// The fan-out's user variables: -x VAR (its value here), -x VAR=VALUE, --env-file lines;
// later ones win; mistakes are named with the file and line or the -x.
#include <gtest/gtest.h>

#include "fanout/remote_command.h"

namespace ddplaunch::fanout {
namespace {

using Vars = std::vector<std::pair<std::string, std::string>>;

TEST(UserEnvironment, DashXAndTheEnvFileAddVariablesAndDashXWins) {
  const Environment here{{"WANDB_PROJECT", "llm"}, {"HOME", "/root"}};
  auto vars = user_environment({"BP_RANK=3", "WANDB_PROJECT", "SAME=from-x"},
                               "# job settings\nexport FROM_FILE=a b c\n\n  SAME=from-file\r\n", "job.env", here);
  ASSERT_TRUE(vars) << vars.error;
  EXPECT_EQ(*vars, (Vars{{"FROM_FILE", "a b c"}, {"BP_RANK", "3"}, {"WANDB_PROJECT", "llm"}, {"SAME", "from-x"}}));
  // The user's win over the forwarded families too.
  EXPECT_EQ(with_user_environment({{"NCCL_DEBUG", "WARN"}, {"OMP_NUM_THREADS", "1"}}, {{"NCCL_DEBUG", "INFO"}}),
            (Vars{{"OMP_NUM_THREADS", "1"}, {"NCCL_DEBUG", "INFO"}}));
}

TEST(UserEnvironment, MistakesAreNamedWithTheFixBeforeAnythingStarts) {
  const Environment here{{"HOME", "/root"}};
  auto unset = user_environment({"NOT_HERE"}, "", "", here);
  ASSERT_FALSE(unset);
  EXPECT_EQ(unset.error, "-x NOT_HERE: NOT_HERE is not set here; export it or give -x NOT_HERE=VALUE");
  auto bad_name = user_environment({"2FAST=1"}, "", "", here);
  ASSERT_FALSE(bad_name);
  EXPECT_NE(bad_name.error.find("'2FAST' is not a variable name"), std::string::npos) << bad_name.error;
  auto owned = user_environment({"DDPLAUNCH_TOKEN=guess"}, "", "", here);
  ASSERT_FALSE(owned);
  EXPECT_NE(owned.error.find("DDPLAUNCH_TOKEN is the fan-out's own"), std::string::npos) << owned.error;
  auto no_equals = user_environment({}, "A=1\nJUST_A_NAME\n", "job.env", here);
  ASSERT_FALSE(no_equals);
  EXPECT_EQ(no_equals.error, "job.env:2: 'JUST_A_NAME' has no '=': write JUST_A_NAME=VALUE");
  auto nul = user_environment({}, std::string_view("A=1\nKEY=x\0y\n", 12), "job.env", here);
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error, "job.env:2: KEY's value holds a NUL byte, which no environment variable can hold");
}

}  // namespace
}  // namespace ddplaunch::fanout
