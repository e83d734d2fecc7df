// The worker environment contract: torchrun names and values, ddplaunch's own variables,
// and which user settings survive.
#include <gtest/gtest.h>

#include "ddplaunch/contract.h"
#include "env/worker_environment.h"

using namespace ddplaunch;

namespace {
NodeAssignment two_node_assignment() {
  NodeAssignment a;
  a.node_rank = 1;
  a.node_count = 2;
  a.rank_offset = 4;
  a.world_size = 7;
  a.local_world_size = 3;
  a.master_addr = "10.0.0.5";
  a.master_port = 29500;
  a.timeout_s = 42.5;
  a.generation = 2;
  a.max_restarts = 3;
  a.run_id = "job-1";
  a.job_id = "job-1";
  a.status_socket = "/tmp/x/status.sock";
  a.socket_ifname = "eth1";
  return a;
}
}  // namespace

TEST(WorkerEnvironment, TorchrunContractForEveryLocalRank) {
  NodeAssignment a = two_node_assignment();
  for (int local = 0; local < a.local_world_size; ++local) {
    Environment env = build_worker_environment({{"PATH", "/bin"}}, a, local);
    EXPECT_EQ(env.at("RANK"), std::to_string(4 + local));
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(local));
    EXPECT_EQ(env.at("ROLE_RANK"), std::to_string(4 + local));
    EXPECT_EQ(env.at("WORLD_SIZE"), "7");
    EXPECT_EQ(env.at("ROLE_WORLD_SIZE"), "7");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "3");
    EXPECT_EQ(env.at("GROUP_RANK"), "1");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.5");
    EXPECT_EQ(env.at("MASTER_PORT"), "29500");
    EXPECT_EQ(env.at("ROLE_NAME"), "default");
    EXPECT_EQ(env.at("TORCHELASTIC_RESTART_COUNT"), "2");
    EXPECT_EQ(env.at("TORCHELASTIC_MAX_RESTARTS"), "3");
    EXPECT_EQ(env.at("TORCHELASTIC_RUN_ID"), "job-1");
    EXPECT_EQ(env.at("TORCHELASTIC_USE_AGENT_STORE"), "False");
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), "1");
    EXPECT_EQ(env.at("DDPLAUNCH_TIMEOUT_S"), "42.5");
    EXPECT_EQ(env.at("DDPLAUNCH_GENERATION"), "2");
    EXPECT_EQ(env.at("DDPLAUNCH_NODE_RANK"), "1");
    EXPECT_EQ(env.at("DDPLAUNCH_NODE_COUNT"), "2");
    EXPECT_EQ(env.at("DDPLAUNCH_STATUS_SOCKET"), "/tmp/x/status.sock");
    EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "eth1");
    EXPECT_EQ(env.at("GLOO_SOCKET_IFNAME"), "eth1");
    EXPECT_EQ(env.at("PATH"), "/bin");
  }
}

TEST(WorkerEnvironment, UserChoicesForThreadsAndInterfacesWin) {
  Environment base{{"OMP_NUM_THREADS", "8"}, {"NCCL_SOCKET_IFNAME", "ib0"}};
  Environment env = build_worker_environment(base, two_node_assignment(), 0);
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "8");
  EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "ib0");
  EXPECT_EQ(env.count("GLOO_SOCKET_IFNAME"), 0u) << "only injected when the user set neither";
}

TEST(WorkerEnvironment, LauncherValuesReplaceStaleContractVariables) {
  Environment base{{"RANK", "5"}, {"WORLD_SIZE", "99"}, {"MASTER_ADDR", "127.0.0.1"}};
  Environment env = build_worker_environment(base, two_node_assignment(), 0);
  EXPECT_EQ(env.at("RANK"), "4");
  EXPECT_EQ(env.at("WORLD_SIZE"), "7");
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.5");
}

TEST(WorkerEnvironment, NoInterfaceInjectedWhenNoneSelected) {
  NodeAssignment a = two_node_assignment();
  a.socket_ifname.clear();
  Environment env = build_worker_environment({}, a, 0);
  EXPECT_EQ(env.count("NCCL_SOCKET_IFNAME"), 0u);
  EXPECT_EQ(to_env_strings({{"A", "1"}, {"B", "x=y"}}), (std::vector<std::string>{"A=1", "B=x=y"}));
}
