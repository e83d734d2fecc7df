// read_contract(): a valid torchrun/ddplaunch environment gives the expected contract;
// each kind of bad environment gives an error naming the variable, its value and the fix.
#include <gtest/gtest.h>

#include "ddplaunch/shim.h"

namespace {

using ddplaunch::shim::read_contract;
using Env = std::map<std::string, std::string>;

Env torchrun_env() {
  return {{"MASTER_ADDR", "10.1.0.5"}, {"MASTER_PORT", "29500"}, {"RANK", "5"},
          {"LOCAL_RANK", "1"},         {"WORLD_SIZE", "8"},      {"LOCAL_WORLD_SIZE", "4"},
          {"GROUP_RANK", "1"},         {"TORCHELASTIC_RUN_ID", "run-7"}};
}

std::string error_for(Env env) {
  auto r = read_contract(env);
  EXPECT_FALSE(r.contract.has_value());
  EXPECT_NE(r.error.find("start this program with ddplaunch or torchrun"), std::string::npos)
      << r.error;
  return r.error;
}

TEST(ShimContract, TorchrunEnvironmentUsesDefaultsForDdplaunchVariables) {
  auto r = read_contract(torchrun_env());
  ASSERT_TRUE(r.contract) << r.error;
  EXPECT_TRUE(r.error.empty());
  const auto& w = *r.contract;
  EXPECT_EQ(w.master_addr, "10.1.0.5");
  EXPECT_EQ(w.master_port, 29500);
  EXPECT_EQ(w.rank, 5);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.world_size, 8);
  EXPECT_EQ(w.local_world_size, 4);
  EXPECT_EQ(w.node_rank, 1);   // from GROUP_RANK
  EXPECT_EQ(w.node_count, 2);  // WORLD_SIZE / LOCAL_WORLD_SIZE
  EXPECT_EQ(w.generation, 0u);
  EXPECT_EQ(w.timeout_s, 0.0);
  EXPECT_EQ(w.status_socket, "");
  EXPECT_EQ(w.job_id, "run-7");
}

TEST(ShimContract, DdplaunchVariablesWin) {
  Env env = torchrun_env();
  env["DDPLAUNCH_NODE_RANK"] = "0";
  env["DDPLAUNCH_NODE_COUNT"] = "3";
  env["DDPLAUNCH_GENERATION"] = "4";
  env["DDPLAUNCH_TIMEOUT_S"] = "42.5";
  env["DDPLAUNCH_STATUS_SOCKET"] = "/tmp/x.sock";
  env["DDPLAUNCH_JOB_ID"] = "job-1";
  auto r = read_contract(env);
  ASSERT_TRUE(r.contract) << r.error;
  EXPECT_EQ(r.contract->node_rank, 0);
  EXPECT_EQ(r.contract->node_count, 3);
  EXPECT_EQ(r.contract->generation, 4u);
  EXPECT_DOUBLE_EQ(r.contract->timeout_s, 42.5);
  EXPECT_EQ(r.contract->status_socket, "/tmp/x.sock");
  EXPECT_EQ(r.contract->job_id, "job-1");
}

TEST(ShimContract, EmptyEnvironmentNamesEveryMissingVariable) {
  std::string e = error_for({});
  for (const char* name :
       {"MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
    EXPECT_NE(e.find(std::string(name) + " is not set"), std::string::npos) << name << ": " << e;
}

TEST(ShimContract, RankOutOfRangeNamesValueAndWorldSize) {
  Env env = torchrun_env();
  env["RANK"] = "8";
  std::string e = error_for(env);
  EXPECT_NE(e.find("RANK=8 is out of range"), std::string::npos) << e;
  EXPECT_NE(e.find("0..7 (WORLD_SIZE=8)"), std::string::npos) << e;
  env["RANK"] = "-1";
  EXPECT_NE(error_for(env).find("RANK=-1 is out of range"), std::string::npos);
}

TEST(ShimContract, LocalRankMustBeBelowLocalWorldSize) {
  Env env = torchrun_env();
  env["LOCAL_RANK"] = "4";
  std::string e = error_for(env);
  EXPECT_NE(e.find("LOCAL_RANK=4 is out of range"), std::string::npos) << e;
  EXPECT_NE(e.find("LOCAL_WORLD_SIZE=4"), std::string::npos) << e;
}

TEST(ShimContract, PortMustBeATcpPort) {
  Env env = torchrun_env();
  env["MASTER_PORT"] = "0";
  EXPECT_NE(error_for(env).find("MASTER_PORT=0 is out of range"), std::string::npos);
  env["MASTER_PORT"] = "65536";
  EXPECT_NE(error_for(env).find("MASTER_PORT=65536"), std::string::npos);
  env["MASTER_PORT"] = "65535";
  EXPECT_TRUE(read_contract(env).contract);
}

TEST(ShimContract, NonNumbersAreNamedWithTheirValue) {
  Env env = torchrun_env();
  env["WORLD_SIZE"] = "eight";
  env["MASTER_PORT"] = "29500 ";
  std::string e = error_for(env);
  EXPECT_NE(e.find("WORLD_SIZE=\"eight\" is not an integer"), std::string::npos) << e;
  EXPECT_NE(e.find("MASTER_PORT=\"29500 \" is not an integer"), std::string::npos) << e;
}

TEST(ShimContract, TimeoutMustBePositiveWhenSet) {
  Env env = torchrun_env();
  env["DDPLAUNCH_TIMEOUT_S"] = "0";
  EXPECT_NE(error_for(env).find("DDPLAUNCH_TIMEOUT_S=\"0\" must be greater than 0"),
            std::string::npos);
  env["DDPLAUNCH_TIMEOUT_S"] = "-3";
  EXPECT_NE(error_for(env).find("DDPLAUNCH_TIMEOUT_S=\"-3\""), std::string::npos);
  env["DDPLAUNCH_TIMEOUT_S"] = "soon";
  EXPECT_NE(error_for(env).find("DDPLAUNCH_TIMEOUT_S=\"soon\" is not a number"), std::string::npos);
  env["DDPLAUNCH_TIMEOUT_S"] = "inf";
  EXPECT_FALSE(read_contract(env).contract);
}

TEST(ShimContract, NodeRankMustBeBelowNodeCount) {
  Env env = torchrun_env();
  env["DDPLAUNCH_NODE_COUNT"] = "2";
  env["DDPLAUNCH_NODE_RANK"] = "2";
  std::string e = error_for(env);
  EXPECT_NE(e.find("DDPLAUNCH_NODE_RANK=2 is out of range"), std::string::npos) << e;
  env["DDPLAUNCH_GENERATION"] = "-1";
  EXPECT_NE(error_for(env).find("DDPLAUNCH_GENERATION=-1"), std::string::npos);
}

TEST(ShimContract, EmptyMasterAddrIsAnError) {
  Env env = torchrun_env();
  env["MASTER_ADDR"] = "";
  EXPECT_NE(error_for(env).find("MASTER_ADDR is set but empty"), std::string::npos);
}

TEST(ShimContract, ProcessEnvironmentOverloadReadsEnviron) {
  for (auto& [k, v] : torchrun_env()) ::setenv(k.c_str(), v.c_str(), 1);
  ::setenv("DDPLAUNCH_GENERATION", "9", 1);
  auto r = read_contract();
  ASSERT_TRUE(r.contract) << r.error;
  EXPECT_EQ(r.contract->rank, 5);
  EXPECT_EQ(r.contract->generation, 9u);
  ::unsetenv("RANK");
  EXPECT_NE(read_contract().error.find("RANK is not set"), std::string::npos);
}

}  // namespace
