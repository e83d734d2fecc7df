// straggler.action restart-without with real launchers and real gloo DDP workers: a node whose
// rank is CPU-starved (a cgroup CPU quota) is named a straggler, and once it held the job back
// for straggler.swap_after_s the master swaps it for the spare: the starved node is dismissed,
// the spare takes its node rank, the group restarts without spending the restart budget, and
// the job finishes on the spare.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cpu_quota.h"
#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {
const std::string kScript = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/paced_ddp.py";
}  // namespace

TEST(StragglerAction, RestartWithoutSwapsAStarvedNodeForTheSpare) {
  if (auto r = dt::CpuQuota::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (!dt::torch_available(PYTHON_WITH_TORCH)) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch.distributed";
  std::string dir = "/tmp/ddpl-straggler-action-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const dt::CpuQuota quota;
  const dt::MultiNodeJob job = dt::new_loopback_job(
      DDPLAUNCH_BIN, 2, "straggler-swap",
      {"--spares", "1", "--straggler-action", "restart-without", "--set", "straggler.swap_after_s=3",
       "--history-file", "off"});
  const std::map<std::string, std::string> env = {{"DDPL_TRAIN_S", "150"}, {"DDPL_STOP_FILE", dir + "/stop"}};
  const std::vector<std::string> program = {PYTHON_WITH_TORCH, kScript};
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  for (int rank = 0; rank < 3; ++rank) {  // node rank 2 of 2 nodes: the spare
    nodes.push_back(std::make_unique<dt::BackgroundProcess>());
    ASSERT_TRUE(nodes.back()->start(dt::node_argv(job, rank, 1, {}, program), env, dt::kLauncherEnvToUnset));
    if (rank == 0) ASSERT_TRUE(dt::wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  }
  // Node 1 starved once every rank finished init: its launcher and worker (at 5 % of a core
  // the worker's own start took ~40 s, and is no step).
  ASSERT_TRUE(nodes[0]->wait_for_output("ranks finished init (init_ok)", 120s)) << nodes[0]->output_so_far();
  ASSERT_TRUE(quota.add_with_descendants(nodes[1]->pid()));
  const bool swapped = nodes[0]->wait_for_output("swapped out: rank 1 held the job back as a straggler", 150s);
  const bool spare_runs = swapped && nodes[2]->wait_for_output("generation 1: starting", 60s);
  { std::ofstream(dir + "/stop") << "stop\n"; }  // generation 1's ranks stop after their first 10 steps
  const auto results = dt::wait_all(nodes, 120s);
  ASSERT_EQ(results.size(), 3u);
  const std::string all = "===== node 0\n" + results[0].output + "===== node 1 (starved)\n" + results[1].output +
                          "===== spare\n" + results[2].output;
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(swapped) << all;
  ASSERT_TRUE(spare_runs) << all;
  EXPECT_EQ(results[0].exit_code, 0) << all;
  EXPECT_EQ(results[2].exit_code, 0) << all;
  EXPECT_NE(results[1].exit_code, 0) << all;
  EXPECT_NE(results[0].output.find("straggler: rank 1 (node 1, host "), std::string::npos) << all;
  EXPECT_NE(results[0].output.find("a membership change: no restart budget spent"), std::string::npos) << all;
  EXPECT_NE(results[1].output.find("the master dismissed this node: node 1"), std::string::npos) << all;
  EXPECT_NE(results[2].output.find("this hot spare takes the place of node 1"), std::string::npos) << all;
  EXPECT_NE(results[2].output.find("TRAINED rank=1 "), std::string::npos) << all;
}
