// Single-node integration tests of ddplaunch with real PyTorch (/usr/bin/python3, gloo): an
// all_reduce across two ranks, init failures (reported by the Python shim, or recognised in the
// output) with their restarts and root cause, and the example DDP trainer converging in lockstep.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "launcher_test_env.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using std::chrono::seconds;
using dt::count_of;

namespace {

constexpr auto kRunLimit = seconds(120);
const std::string kPython = PYTHON_WITH_TORCH;

std::string torch_missing_reason() { return dt::torch_missing_reason(kPython); }

#define SKIP_WITHOUT_TORCH()                                            \
  do {                                                                  \
    if (!torch_missing_reason().empty()) GTEST_SKIP() << torch_missing_reason(); \
  } while (0)

dt::RunResult run_launcher(const std::vector<std::string>& args) {
  std::vector<std::string> argv{DDPLAUNCH_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return dt::run_command(argv, kRunLimit);
}

// A script in a temporary directory, removed with it.
struct ScriptFile {
  std::string dir = dt::temp_dir("it1-py-");
  std::string path = dir + "/script.py";
  explicit ScriptFile(const std::string& text) { std::ofstream(path) << text; }
  ~ScriptFile() { fs::remove_all(dir); }
};

}  // namespace

// The basic promise: a torchrun-style script runs unchanged under ddplaunch.
TEST(PythonSingleNode, GlooAllReduceAcrossTwoRanks) {
  SKIP_WITHOUT_TORCH();
  const std::string script =
      "import torch, torch.distributed as d; d.init_process_group(\"gloo\"); "
      "t=torch.tensor([float(d.get_rank()+1)]); d.all_reduce(t); print(\"SUM\", t.item()); "
      "d.destroy_process_group()";
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--", kPython, "-c", script});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] SUM 3.0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[rank 1] SUM 3.0\n"), std::string::npos) << r.output;
}

// Rank 1 looks for the c10d store on a port nobody listens on: its init_process_group times out
// (after 3 s; rank 0 waits 30 s, so rank 1 fails first), the Python shim reports init_failed, and
// with no restarts allowed the job fails naming rank 1 and init.
TEST(PythonSingleNode, ShimReportsAnInitFailure) {
  SKIP_WITHOUT_TORCH();
  int unused_port = dt::free_tcp_port();
  ASSERT_GT(unused_port, 0);
  ScriptFile script(
      "import datetime, os, sys\n"
      "import torch.distributed as d\n"
      "seconds = 30\n"
      "if os.environ['RANK'] == '1':\n"
      "    os.environ['MASTER_PORT'] = sys.argv[1]\n"
      "    seconds = 3\n"
      "d.init_process_group('gloo', timeout=datetime.timedelta(seconds=seconds))\n"
      "print('INIT DONE', flush=True)\n"
      "d.destroy_process_group()\n");
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--shim", "python", "--max-restarts", "0", "--set",
                                  "restart.init_restarts=0", "--grace", "2",
                               "--", kPython, script.path, std::to_string(unused_port)});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("JOB FAILED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("during init"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("root cause: rank 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("restarts used: 0 of 0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("[rank 1] INIT DONE"), std::string::npos) << r.output;
}

// A script dying with an NCCL error signature before any init report is an init failure: the
// group is restarted while the init budget lasts, then the job fails with the worker's exit code.
TEST(PythonSingleNode, NcclErrorInOutputRestartsTheGroup) {
  SKIP_WITHOUT_TORCH();
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--set", "restart.init_restarts=1", "--", kPython, "-c",
                               "raise RuntimeError('NCCL error: unhandled system error')"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("restart 1 of 1"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("restart 2 of"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("during init in generation 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("restarts used: 1 of 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NCCL error: unhandled system error"), std::string::npos) << r.output;
}

// The example trainer: both ranks end with identical parameters (DDP kept them in sync) and the
// loss went down.
TEST(PythonSingleNode, ExampleDdpTrainerConvergesInLockstep) {
  SKIP_WITHOUT_TORCH();
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--", kPython,
                               std::string(SOURCE_DIR) + "/worker_shim/examples/train_ddp.py"});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::map<int, std::string> checksum;
  for (const auto& f : dt::final_lines(r.output)) {
    if (f.prefix_node >= 0 || f.prefix_rank < 0) continue;  // only "[rank R] FINAL ..." lines
    EXPECT_EQ(f.rank, f.prefix_rank) << "line of rank " << f.rank << " prefixed as rank " << f.prefix_rank;
    EXPECT_LT(f.loss_last, f.loss_first) << "rank " << f.prefix_rank << " did not learn: " << f.text;
    checksum[f.prefix_rank] = f.checksum;
  }
  ASSERT_EQ(checksum.size(), 2u) << r.output;
  EXPECT_EQ(checksum[0], checksum[1]) << "ranks diverged:\n" << r.output;
  EXPECT_EQ(count_of(r.output, "FINAL rank="), 2) << r.output;
}
