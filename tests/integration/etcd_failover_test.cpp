// The coordinator on etcd with real launchers on 127.0.0.1 and a real etcd the
// test starts: the launchers elect a coordinator among themselves; SIGKILLing the
// coordinator's launcher (its workers die with it, by the orphan guard) makes another
// launcher win the election, load the job's state from etcd and start the next generation
// with the spare in the lost slot — a gloo DDP script resumes from its checkpoint with the same
// world size. A wrong etcd endpoint is a start-up error naming it, in seconds. Skipped, saying
// why, where /usr/bin/etcd is not installed.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "etcd_cluster.h"
#include "multi_node_job.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::EtcdCluster;
using ddplaunch::testing::RunResult;
namespace fs = std::filesystem;

constexpr auto kJobBound = 120s;   // "finished, not hung", on a busy 2-core machine
constexpr auto kStepBound = 60s;   // one expected line of output

struct Launchers {
  std::vector<std::unique_ptr<BackgroundProcess>> all;
  std::string everything() const {
    std::string out;
    for (std::size_t i = 0; i < all.size(); ++i)
      out += "===== launcher " + std::to_string(i) + "\n" + all[i]->output_so_far();
    return out;
  }
  // The launcher whose output has `text` first found, polling every 100 ms up to `bound`; -1: none.
  int which_says(const std::string& text, std::chrono::milliseconds bound, int except = -1) const {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < until) {
      for (std::size_t i = 0; i < all.size(); ++i)
        if (static_cast<int>(i) != except && all[i]->output_so_far().find(text) != std::string::npos)
          return static_cast<int>(i);
      std::this_thread::sleep_for(100ms);
    }
    return -1;
  }
  // Once a launcher but `except` started generation 1 (the group restarted after the loss the
  // test caused), the workers are told to end after their current step (spare_train.py's
  // `stop_file`): they resumed from the checkpoint, and the rest of the steps would prove
  // nothing more. Where generation 1 never starts, the job trains to its end.
  void end_training_once_restarted(const std::string& stop_file, int except = -1) const {
    if (which_says("generation 1: starting", kStepBound, except) >= 0) std::ofstream(stop_file) << "stop\n";
  }
};

std::vector<std::string> launcher_argv(const std::string& endpoints, const std::string& job_id, int nodes, int spares,
                                       const std::vector<std::string>& program) {
  return ddplaunch::testing::etcd_launcher_argv({.launcher = DDPLAUNCH_BIN, .endpoints = endpoints, .job_id = job_id,
                                                 .nodes = nodes, .spares = spares, .program = program});
}

TEST(EtcdFailover, TheCoordinatorsLauncherKilledTrainingResumesWithTheSameWorldSize) {
  if (!EtcdCluster::available()) GTEST_SKIP() << ddplaunch::testing::kNoEtcd;
  if (access(PYTHON_WITH_TORCH, X_OK) != 0) GTEST_SKIP() << PYTHON_WITH_TORCH << " not found";
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  fs::path dir = fs::temp_directory_path() / ("ddplaunch-etcd-failover-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string checkpoint = (dir / "ckpt.pt").string();
  const std::string stop_file = (dir / "stop").string();
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/spare_train.py";
  const std::string job_id = "etcd-failover-" + std::to_string(getpid());

  Launchers l;
  for (int i = 0; i < 4; ++i) {  // 3 nodes and a spare
    l.all.push_back(ddplaunch::testing::start_node(
        launcher_argv(etcd.endpoints(), job_id, 3, 1, {PYTHON_WITH_TORCH, script, checkpoint, "80", "0.1", stop_file})));
  }
  const int coordinator = l.which_says("elected the job's coordinator", kStepBound);
  ASSERT_GE(coordinator, 0) << l.everything();
  ASSERT_GE(l.which_says("STEP 6\n", kStepBound), 0) << l.everything();
  // `ddplaunch status` finds the coordinator through etcd.
  RunResult status = ddplaunch::testing::run_command({DDPLAUNCH_BIN, "status", "--rdzv-backend", "etcd",
                                                      "--rdzv-endpoint", etcd.endpoints(), "--rdzv-id", job_id},
                                                     20s);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("etcd: reachable; coordinator: this launcher (election revision"), std::string::npos)
      << status.output;
  EXPECT_TRUE(std::regex_search(status.output, std::regex(R"(\n\d+\s+\S+\s+spare\s+-\s)"))) << status.output;
  // The coordinator's hang watch learns the step interval (after 5 warm-up steps); the
  // successor must find it in etcd and start from it. Bounded: 40 x 0.5 s.
  std::smatch learnt;
  const std::regex learnt_line(R"(largest step (\d+\.\d\d) s seen in this run)");
  for (int i = 0; i < 40 && !std::regex_search(status.output, learnt, learnt_line); ++i) {
    std::this_thread::sleep_for(500ms);
    status = ddplaunch::testing::run_command({DDPLAUNCH_BIN, "status", "--rdzv-backend", "etcd", "--rdzv-endpoint",
                                              etcd.endpoints(), "--rdzv-id", job_id},
                                             20s);
  }
  ASSERT_TRUE(std::regex_search(status.output, learnt, learnt_line)) << status.output;
  std::this_thread::sleep_for(1500ms);  // the 1 s sweep writes it to etcd

  ASSERT_TRUE(l.all[coordinator]->send_signal(SIGKILL));
  RunResult killed = l.all[coordinator]->wait(10s);
  const int successor = l.which_says("elected the job's coordinator", kStepBound, coordinator);
  l.end_training_once_restarted(stop_file, coordinator);
  std::vector<RunResult> results(l.all.size());
  std::string all = "===== launcher " + std::to_string(coordinator) + " (killed coordinator)\n" + killed.output;
  for (std::size_t i = 0; i < l.all.size(); ++i) {
    if (static_cast<int>(i) == coordinator) continue;
    results[i] = l.all[i]->wait(kJobBound);
    all += "===== launcher " + std::to_string(i) + "\n" + results[i].output;
  }
  fs::remove_all(dir);
  ASSERT_GE(successor, 0) << all;
  EXPECT_NE(results[successor].output.find("took over as the job's coordinator after generation"), std::string::npos)
      << all;
  // The interval seen before the kill, as etcd kept it.
  std::smatch carried;
  ASSERT_TRUE(std::regex_search(results[successor].output, carried,
                                std::regex(R"(the largest step interval the previous coordinator learnt \((\d+\.\d\d) s\) )"
                                           R"(carried over; .*largest step \d+\.\d\d s, learnt by the previous coordinator)")))
      << all;
  // etcd gets the interval when it grew by more than a tenth since the last save, so the one
  // carried over may be up to a tenth below the live one status showed (both printed to 0.01 s).
  EXPECT_GE(std::stod(carried[1]) * 1.1 + 0.01, std::stod(learnt[1])) << all;
  int done = 0;
  for (std::size_t i = 0; i < l.all.size(); ++i) {
    if (static_cast<int>(i) == coordinator) continue;
    EXPECT_FALSE(results[i].timed_out) << "launcher " << i << "\n" << all;
    EXPECT_EQ(results[i].exit_code, 0) << "launcher " << i << "\n" << all;
    // Same world size after the move, resumed from the checkpoint written before the kill.
    std::smatch m;
    if (std::regex_search(results[i].output, m,
                          std::regex(R"(DONE rank=\d world=3 generation=(\d+) resumed_from=(\d+))"))) {
      ++done;
      EXPECT_GE(std::stoi(m[1]), 1) << all;
      EXPECT_GE(std::stoi(m[2]), 6) << all;
    }
  }
  EXPECT_EQ(done, 3) << all;
}

// While etcd does not answer, running workers keep running and a change waits: a node lost
// then is replaced (a new generation) only once etcd confirms the coordinator still leads.
TEST(EtcdFailover, WhileEtcdIsDownANodesLossWaitsForItThenTheSpareTakesTheSlot) {
  if (!EtcdCluster::available()) GTEST_SKIP() << ddplaunch::testing::kNoEtcd;
  if (access(PYTHON_WITH_TORCH, X_OK) != 0) GTEST_SKIP() << PYTHON_WITH_TORCH << " not found";
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  fs::path dir = fs::temp_directory_path() / ("ddplaunch-etcd-down-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string checkpoint = (dir / "ckpt.pt").string();
  const std::string stop_file = (dir / "stop").string();
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/spare_train.py";
  const std::string job_id = "etcd-down-" + std::to_string(getpid());
  Launchers l;
  for (int i = 0; i < 4; ++i)
    l.all.push_back(ddplaunch::testing::start_node(
        launcher_argv(etcd.endpoints(), job_id, 3, 1, {PYTHON_WITH_TORCH, script, checkpoint, "120", "0.1", stop_file})));
  const int coordinator = l.which_says("elected the job's coordinator", kStepBound);
  const int spare = l.which_says("is a hot spare of this job", kStepBound);
  ASSERT_GE(coordinator, 0) << l.everything();
  ASSERT_GE(spare, 0) << l.everything();
  ASSERT_GE(l.which_says("STEP 4\n", kStepBound), 0) << l.everything();

  etcd.kill(0);
  ASSERT_TRUE(l.all[coordinator]->wait_for_output("etcd is unreachable", 20s)) << l.everything();
  int victim = 0;
  while (victim == coordinator || victim == spare) ++victim;
  ASSERT_TRUE(l.all[victim]->send_signal(SIGKILL));
  l.all[victim]->wait(10s);
  ASSERT_TRUE(l.all[coordinator]->wait_for_output("was lost", 20s)) << l.everything();
  // The replacement is decided but not ordered while etcd is down.
  EXPECT_FALSE(l.all[coordinator]->wait_for_output("generation 1: 3 node(s)", 4s)) << l.everything();

  ASSERT_EQ(etcd.restart(0), "");
  l.end_training_once_restarted(stop_file, victim);
  std::vector<RunResult> results(l.all.size());
  std::string all;
  for (std::size_t i = 0; i < l.all.size(); ++i) {
    if (static_cast<int>(i) == victim) continue;
    results[i] = l.all[i]->wait(kJobBound);
    all += "===== launcher " + std::to_string(i) + "\n" + results[i].output;
  }
  fs::remove_all(dir);
  EXPECT_NE(results[coordinator].output.find("etcd answers again"), std::string::npos) << all;
  EXPECT_NE(results[coordinator].output.find("generation 1: 3 node(s), world size 3"), std::string::npos) << all;
  EXPECT_EQ(results[coordinator].output.find("took over"), std::string::npos) << all;  // no new election
  for (std::size_t i = 0; i < l.all.size(); ++i) {
    if (static_cast<int>(i) == victim) continue;
    EXPECT_EQ(results[i].exit_code, 0) << "launcher " << i << "\n" << all;
  }
  EXPECT_TRUE(std::regex_search(results[spare].output, std::regex(R"(DONE rank=\d world=3 generation=1 resumed_from=\d+)")))
      << all;
}

TEST(EtcdFailover, AWrongEtcdEndpointIsAStartUpErrorNamingItInSeconds) {
  const int nothing_there = ddplaunch::testing::free_tcp_port();
  const std::string endpoint = "127.0.0.1:" + std::to_string(nothing_there);
  RunResult r = ddplaunch::testing::run_command(
      launcher_argv(endpoint, "etcd-wrong-endpoint", 2, 0, {FAKE_WORKER_BIN}), 30s);
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(endpoint), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--rdzv-endpoint"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 15) << r.output;
}

}  // namespace
