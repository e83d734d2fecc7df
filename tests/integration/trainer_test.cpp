// Real training under ddplaunch: the libtorch C++ trainer and an unmodified Python DDP
// trainer, 2 loopback nodes × 2 workers, every rank ending with the same parameters;
// the Python one also under torchrun, to show the same contract gives the same result.
// Also interactive debugging: --pause-ranks starts a rank stopped until SIGCONT.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {

// The FINAL lines of `output` by the trainer's rank (a later line of a rank replaces an earlier one).
std::map<int, dt::FinalLine> final_lines_by_rank(const std::string& output) {
  std::map<int, dt::FinalLine> by_rank;
  for (auto& line : dt::final_lines(output)) by_rank[line.rank] = line;
  return by_rank;
}

bool python_has_torch() { return dt::torch_available(PYTHON_WITH_TORCH); }

// Runs `program` on two loopback nodes with 2 workers each; returns both nodes' output.
// Node 1 starts first, before node 0 hosts the rendezvous: nodes of a real job start in any order.
std::string run_two_nodes(const std::vector<std::string>& program) {
  const dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = 2, .port = dt::free_tcp_port()};
  dt::BackgroundProcess node1;
  EXPECT_TRUE(node1.start(dt::node_argv(job, 1, 2, {}, program)));
  dt::RunResult node0 = dt::run_command(dt::node_argv(job, 0, 2, {}, program), 240s);
  dt::RunResult other = node1.wait(60s);
  EXPECT_FALSE(node0.timed_out);
  EXPECT_FALSE(other.timed_out);
  EXPECT_EQ(node0.exit_code, 0) << node0.output;
  EXPECT_EQ(other.exit_code, 0) << other.output;
  return node0.output + other.output;
}

void expect_converged_identically(const std::map<int, dt::FinalLine>& finals, int world) {
  ASSERT_EQ(static_cast<int>(finals.size()), world);
  std::set<std::string> checksums;
  for (const auto& [rank, f] : finals) {
    checksums.insert(f.checksum);
    EXPECT_LT(f.loss_last, f.loss_first) << "rank " << rank << " did not learn";
  }
  EXPECT_EQ(checksums.size(), 1u) << "ranks ended with different parameters";
}

}  // namespace

#ifdef TRAIN_BINARY_BIN
TEST(Trainer, CxxTrainerOnTwoNodesTimesTwoWorkers) {
  std::string out = run_two_nodes({TRAIN_BINARY_BIN, "--steps", "30"});
  expect_converged_identically(final_lines_by_rank(out), 4);
}
#endif

TEST(Trainer, PythonDdpOnTwoNodesMatchesTorchrun) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  const std::string script = std::string(SOURCE_DIR) + "/worker_shim/examples/train_ddp.py";
  auto ours = final_lines_by_rank(run_two_nodes({PYTHON_WITH_TORCH, script, "--steps", "30"}));
  expect_converged_identically(ours, 4);

  // Debian's torchrun needs -r 1 -t 1 --log_dir on Python 3.11 (crashes on its default redirects).
  const std::string logs = dt::temp_dir("torchrun-logs");
  dt::RunResult torchrun =
      dt::run_command({TORCHRUN_BIN, "--nnodes", "1", "--nproc_per_node", "4", "-r", "1", "-t", "1", "--log_dir", logs,
                       "--master_port", std::to_string(dt::free_tcp_port()), script, "--steps", "30"},
                      240s);
  ASSERT_FALSE(torchrun.timed_out);
  ASSERT_EQ(torchrun.exit_code, 0) << torchrun.output;
  // With -r 1 -t 1 the ranks' output goes to log files under the log dir.
  std::string collected = torchrun.output;
  for (int rank = 0; rank < 4; ++rank) {
    dt::RunResult cat = dt::run_command({"sh", "-c", "cat " + logs + "/*/attempt_0/" + std::to_string(rank) + "/stdout.log"}, 10s);
    collected += cat.output;
  }
  auto theirs = final_lines_by_rank(collected);
  expect_converged_identically(theirs, 4);
  EXPECT_EQ(theirs.begin()->second.checksum, ours.begin()->second.checksum)
      << "same world size and data under torchrun and ddplaunch must give the same parameters";
}

namespace {
char proc_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close = content.rfind(')');
  return close == std::string::npos || close + 2 >= content.size() ? '?' : content[close + 2];
}
}  // namespace

TEST(PauseRanks, StartsTheRankStoppedAndResumesOnSigcont) {
  dt::BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--pause-ranks", "1", "--", FAKE_WORKER_BIN,
                              "--sleep-ms", "200"}));
  ASSERT_TRUE(launcher.wait_for_output("gdb -p ", 20s)) << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("RANK=0", 20s)) << launcher.output_so_far();
  std::smatch m;
  std::string out = launcher.output_so_far();
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(rank 1 is paused .* \(pid (\d+)\))"))) << out;
  const pid_t paused = std::stoi(m[1]);
  EXPECT_EQ(proc_state(paused), 'T') << "a paused rank is stopped (not traced: a debugger can attach)";
  EXPECT_EQ(launcher.output_so_far().find("FAKE_WORKER_PID=" + std::to_string(paused)), std::string::npos);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(launcher.output_so_far().find("RANK=1"), std::string::npos) << "rank 1 ran while paused";
  ASSERT_TRUE(launcher.send_signal(SIGCONT));
  dt::RunResult done = launcher.wait(30s);
  ASSERT_FALSE(done.timed_out);
  EXPECT_EQ(done.exit_code, 0) << done.output;
  EXPECT_NE(done.output.find("RANK=1"), std::string::npos) << done.output;
}
