// Drop-in compatibility with torchrun: each small PyTorch script of compat_scripts/ (gloo on CPU,
// two local workers) runs under Debian's torchrun and under ddplaunch with the same torchrun-style
// launch line; ddplaunch must end the same way or better, and must never kill a healthy job
// (slow setup, a rank-0 pause, buffered or directly executed programs) while still catching a
// real init hang. The environment case compares the torchrun contract variables of both.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using std::chrono::seconds;
using dt::count_of;

namespace {

constexpr auto kRunLimit = seconds(120);  // one launcher run, torch imports on a loaded machine included
const std::string kPython = PYTHON_WITH_TORCH;
const std::string kTorchrun = TORCHRUN_BIN;

// The ddplaunch under test: this build's, or the program named by TORCHRUN_COMPAT_DDPLAUNCH
// (an installed ddplaunch, or a wrapper around another build).
std::string ddplaunch_bin() {
  const char* other = std::getenv("TORCHRUN_COMPAT_DDPLAUNCH");
  return other && *other ? other : DDPLAUNCH_BIN;
}

// The short init deadline, on the ddplaunch side only, for the cases where a deadline that
// started too early (or was handed to PyTorch) would kill a healthy job.
const std::vector<std::string> kShortDeadline{"--set", "timeout.base_s=3",     "--set", "timeout.min_s=3",
                                              "--set", "timeout.per_node_s=0", "--set", "timeout.max_s=3"};
// A workload outlasts the short deadline by this much.
const std::string kLongerThanDeadline = "8";

// Empty when torchrun and torch are usable, else why not.
std::string missing_reason() {
  static const std::string reason = [] {
    if (!fs::exists(kTorchrun)) return kTorchrun + " is missing (Debian package python3-torch); nothing to compare with";
    dt::RunResult r = dt::run_command({kPython, "-c", "import torch, torch.distributed"}, seconds(60));
    if (r.exit_code == 0) return std::string();
    return kPython + " cannot import torch (exit " + std::to_string(r.exit_code) + "): " + r.output.substr(0, 300);
  }();
  return reason;
}

#define SKIP_WITHOUT_TORCHRUN()                                        \
  do {                                                                 \
    if (!missing_reason().empty()) GTEST_SKIP() << missing_reason();   \
  } while (0)

// A fresh copy of compat_scripts/ (modes kept) in a temporary directory, with a bin/ folder whose
// python and python3 are the torch interpreter: `python train.py` finds torch whatever PATH
// held before (this machine's pyenv python has none). Removed with the object.
struct Workspace {
  std::string dir = dt::temp_dir("compat-");
  std::string scripts = dir + "/scripts";
  Workspace() {
    fs::copy(std::string(SOURCE_DIR) + "/tests/integration/compat_scripts", scripts, fs::copy_options::recursive);
    for (const char* exe : {"buffered_wrapper.sh", "direct_train.py"})
      fs::permissions(scripts + "/" + exe, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add);
    fs::create_directories(dir + "/bin");
    fs::create_symlink(kPython, dir + "/bin/python");
    fs::create_symlink(kPython, dir + "/bin/python3");
  }
  ~Workspace() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string script(const std::string& name) const { return scripts + "/" + name; }
  std::string fresh_dir(const std::string& name) const {
    fs::create_directories(dir + "/" + name);
    return dir + "/" + name;
  }
};

// One launch line, split where the two launchers differ: flags both take, flags only ddplaunch
// gets (the short deadline), and the program with its arguments.
struct LaunchLine {
  std::vector<std::string> flags;            // torchrun flags, given to both unchanged
  std::vector<std::string> ddplaunch_only;   // after `flags`, before the program
  std::vector<std::string> program;          // script (or module / executable) and its arguments
  std::map<std::string, std::string> env;    // extra environment for both launchers
};

struct BothRuns {
  dt::RunResult torchrun, ddplaunch;
  std::vector<std::string> torchrun_argv, ddplaunch_argv;

  // Both command lines and outputs, for the failure messages (SCOPED_TRACE).
  std::string report() const {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
      return s;
    };
    auto one = [&](const char* label, const std::vector<std::string>& argv, const dt::RunResult& r) {
      if (argv.empty()) return std::string();  // this launcher was not run
      return std::string("===== ") + label + ": " + join(argv) + "\n===== exit " + std::to_string(r.exit_code) +
             (r.term_signal ? " signal " + std::to_string(r.term_signal) : "") + (r.timed_out ? " (TIMED OUT)" : "") +
             " after " + std::to_string(r.seconds) + " s\n" + r.output + "\n";
    };
    return one("torchrun", torchrun_argv, torchrun) + one("ddplaunch", ddplaunch_argv, ddplaunch);
  }
};

// Prints both command lines and outputs once, when the test has failed by the time it ends
// (an ASSERT's early return included).
class ReportOnFailure {
 public:
  explicit ReportOnFailure(const BothRuns& b) : b_(b) {}
  ~ReportOnFailure() {
    if (::testing::Test::HasFailure()) std::cout << b_.report() << std::flush;
  }

 private:
  const BothRuns& b_;
};

// Both launchers get PYTHONUNBUFFERED unset (this machine exports it), no inherited contract
// variables, and the workspace's bin/ first on PATH.
dt::RunResult run_launcher(const Workspace& ws, const std::vector<std::string>& argv, const LaunchLine& line) {
  std::map<std::string, std::string> env = line.env;
  const char* path = std::getenv("PATH");
  env["PATH"] = ws.dir + "/bin:/usr/bin:/bin" + (path ? std::string(":") + path : "");
  const std::vector<std::string> unset{"PYTHONUNBUFFERED", "OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT",
                                       "RANK",             "WORLD_SIZE",      "LOCAL_RANK"};
  return dt::run_command(argv, kRunLimit, env, unset);
}

// torchrun gets what Debian's 1.13 needs to run at all (-r 1 -t 1 --log_dir: its default
// redirects crash) and a 1 s monitor interval (5 s in 1.13) to keep the test short.
void run_torchrun(const Workspace& ws, const LaunchLine& line, BothRuns& b) {
  b.torchrun_argv = {kTorchrun, "-r", "1", "-t", "1", "--log_dir", ws.fresh_dir("torchrun-logs"),
                     "--monitor_interval", "1"};
  b.torchrun_argv.insert(b.torchrun_argv.end(), line.flags.begin(), line.flags.end());
  b.torchrun_argv.insert(b.torchrun_argv.end(), line.program.begin(), line.program.end());
  b.torchrun = run_launcher(ws, b.torchrun_argv, line);
}

void run_ddplaunch(const Workspace& ws, const LaunchLine& line, BothRuns& b) {
  b.ddplaunch_argv = {ddplaunch_bin()};
  b.ddplaunch_argv.insert(b.ddplaunch_argv.end(), line.flags.begin(), line.flags.end());
  b.ddplaunch_argv.insert(b.ddplaunch_argv.end(), line.ddplaunch_only.begin(), line.ddplaunch_only.end());
  b.ddplaunch_argv.insert(b.ddplaunch_argv.end(), line.program.begin(), line.program.end());
  b.ddplaunch = run_launcher(ws, b.ddplaunch_argv, line);
}

// The launch line under torchrun, then under ddplaunch (one after the other: two cores).
BothRuns run_both(const Workspace& ws, const LaunchLine& line) {
  BothRuns b;
  run_torchrun(ws, line, b);
  run_ddplaunch(ws, line, b);
  return b;
}

// torchrun's own spelling of a single-node, two-worker job.
std::vector<std::string> standalone_two_workers() {
  return {"--standalone", "--nnodes", "1", "--nproc_per_node", "2"};
}

// Both runs ended within the bound, and ddplaunch ended as torchrun did or better (0 where
// torchrun failed).
void expect_same_or_better(const BothRuns& b) {
  EXPECT_FALSE(b.torchrun.timed_out) << "torchrun ran past " << kRunLimit.count() << " s";
  EXPECT_FALSE(b.ddplaunch.timed_out) << "ddplaunch ran past " << kRunLimit.count() << " s";
  if (b.ddplaunch.exit_code != 0) {
    EXPECT_EQ(b.ddplaunch.exit_code, b.torchrun.exit_code) << "ddplaunch ended worse";
  }
}

// Lines of `output` containing `marker` (anywhere: torchrun prints "[default0]:"-style or bare
// lines, ddplaunch "[rank R] ").
int lines_with(const std::string& output, const std::string& marker) { return count_of(output, marker); }

// True when some line of `output` contains `needle` but not `unless` ("restarting the group",
// not "not restarting").
bool has_line_with(const std::string& output, const std::string& needle, const std::string& unless) {
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    if (line.find(needle) != std::string::npos && line.find(unless) == std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

// The text from ddplaunch's root-cause report on ("" when it printed none).
std::string root_cause_section(const std::string& output) {
  auto at = output.find("root cause");
  return at == std::string::npos ? std::string() : output.substr(at);
}

// NAME=VALUE lines of env_dump.py's file.
std::map<std::string, std::string> read_env_file(const std::string& path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace

// 1. Every rank spends longer in setup than ddplaunch's init deadline before it calls
// init_process_group: setup is unbounded, the deadline starts only once the last rank is in init.
TEST(TorchrunCompat, SlowSetupOnEveryRankIsNotAnInitHang) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("slow_setup.py"), "all", kLongerThanDeadline}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "RESULT rank="), 2);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "sum=3.0"), 2);
}

// 2. Only rank 1 is slow in setup; rank 0 waits in init (the store) for it longer than the
// deadline. A rank waiting for a peer still in setup is healthy.
TEST(TorchrunCompat, SlowSetupOnOneRankWhileTheOtherWaitsInInit) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("slow_setup.py"), "1", kLongerThanDeadline}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "sum=3.0"), 2);
}

// 3. Rank 0 pauses (evaluation, checkpoint) between two all_reduces for longer than the init
// deadline while rank 1 waits inside the collective: the deadline never shortens a collective.
TEST(TorchrunCompat, RankZeroPauseBetweenCollectivesDoesNotFail) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("rank0_pause.py"), kLongerThanDeadline}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "sum=4.0"), 2);
}

// 4. A bash wrapper execs python with PYTHONUNBUFFERED unset; the program prints nothing until it
// exits, after ~6 s of DDP training. Silence is not a hang, and the shim is loaded into python
// even though the launcher started bash.
TEST(TorchrunCompat, BufferedWrapperScriptSucceeds) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("--no_python");
  BothRuns b = run_both(ws, {flags, kShortDeadline, {ws.script("buffered_wrapper.sh"), "6"}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "TRAINED rank="), 2);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "loading data"), 2);
}

// 5. A `#!/usr/bin/python3` script run directly (--no_python): it succeeds under both, and under
// ddplaunch the Python shim was loaded into it (the script prints whether module ddplaunch_shim
// is in sys.modules; there is no stable marker in ddplaunch's own output to check instead).
TEST(TorchrunCompat, ShebangScriptRunDirectlySucceeds) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("--no_python");
  BothRuns b = run_both(ws, {flags, kShortDeadline, {ws.script("direct_train.py"), "5"}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "TRAINED rank="), 2);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "SHIM_LOADED rank=0 True"), 1) << "shim not loaded into rank 0";
  EXPECT_EQ(lines_with(b.ddplaunch.output, "SHIM_LOADED rank=1 True"), 1) << "shim not loaded into rank 1";
}

// 6. `-m compatpkg.train`: the program is a module found on PYTHONPATH, run as python -m.
TEST(TorchrunCompat, ModuleLaunchWithDashM) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("-m");
  BothRuns b = run_both(ws, {flags, {}, {"compatpkg.train"}, {{"PYTHONPATH", ws.scripts}}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.torchrun.output, "sum=3.0 module=compatpkg.train"), 2);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "sum=3.0 module=compatpkg.train"), 2);
}

// 7. @record writes rank 1's ValueError to TORCHELASTIC_ERROR_FILE; its stderr is closed, so
// only the error file carries the message. Both launchers fail alike, stop rank 0, and name the
// exception in the root cause.
TEST(TorchrunCompat, RecordedExceptionIsTheRootCause) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), {}, {ws.script("record_error.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 1);
  EXPECT_EQ(b.ddplaunch.exit_code, b.torchrun.exit_code);
  EXPECT_NE(b.torchrun.output.find("bad batch 42"), std::string::npos) << "the script did not work under torchrun";
  EXPECT_LT(b.ddplaunch.seconds, 50.0) << "rank 0 was not stopped after rank 1 failed";
  const std::string cause = root_cause_section(b.ddplaunch.output);
  ASSERT_FALSE(cause.empty()) << "ddplaunch printed no root cause";
  EXPECT_NE(cause.find("rank 1"), std::string::npos) << cause;
  EXPECT_NE(cause.find("ValueError"), std::string::npos) << cause;
  EXPECT_NE(cause.find("bad batch 42"), std::string::npos) << cause;
}

// 8. torchrun's --max_restarts: rank 1 SIGKILLs itself at step 5 of the first run (a runtime
// failure, after init); the group restarts and resumes from the checkpoint to the planned 10 steps.
TEST(TorchrunCompat, MaxRestartsResumesFromCheckpoint) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.insert(flags.end(), {"--max_restarts", "2"});
  // Each launcher its own checkpoint: a shared one would let the second start from the first's end.
  BothRuns b;
  run_torchrun(ws, {flags, {}, {ws.script("checkpoint_resume.py"), ws.fresh_dir("ckpt-torchrun") + "/ckpt.pt", "10"}, {}},
               b);
  run_ddplaunch(ws,
                {flags, {}, {ws.script("checkpoint_resume.py"), ws.fresh_dir("ckpt-ddplaunch") + "/ckpt.pt", "10"}, {}},
                b);
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  for (const auto* r : {&b.torchrun, &b.ddplaunch}) {
    EXPECT_EQ(lines_with(r->output, "restart=1 resumed_from=5 steps=10"), 2) << "no resume from step 5";
    EXPECT_EQ(lines_with(r->output, "restart=0 resumed_from=0 steps=10"), 0) << "the first run was not killed";
  }
}

// 9. Launch lines as the PyTorch docs print them. Debian's torchrun (1.13) takes only the
// underscore spellings; ddplaunch must take those and the dashed ones of torchrun 2.x.
namespace {
void expect_hello_from_two_ranks(const BothRuns& b) {
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.torchrun.output, "world=2 sum=3.0"), 2);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "HELLO rank=0 world=2 sum=3.0"), 1);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "HELLO rank=1 world=2 sum=3.0"), 1);
}
}  // namespace

TEST(TorchrunCompat, DocsStandaloneLine) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {{"--standalone", "--nnodes=1", "--nproc_per_node=2"}, {}, {ws.script("hello.py")}, {}});
  ReportOnFailure report(b);
  expect_hello_from_two_ranks(b);
}

TEST(TorchrunCompat, DocsC10dRendezvousLine) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  const std::string endpoint = "localhost:" + std::to_string(port);
  BothRuns b = run_both(ws, {{"--nnodes=1", "--nproc_per_node=2", "--rdzv_backend=c10d", "--rdzv_endpoint=" + endpoint,
                              "--rdzv_id=compat42"},
                             {},
                             {ws.script("hello.py")},
                             {}});
  ReportOnFailure report(b);
  expect_hello_from_two_ranks(b);
}

TEST(TorchrunCompat, DocsC10dRendezvousLineWithDashesForDdplaunch) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  const std::string endpoint = "localhost:" + std::to_string(port);
  BothRuns b;
  run_ddplaunch(ws, {{"--nnodes=1", "--nproc-per-node=2", "--rdzv-backend=c10d", "--rdzv-endpoint=" + endpoint,
                      "--rdzv-id=compat42"},
                     {},
                     {ws.script("hello.py")},
                     {}},
                b);
  ReportOnFailure report(b);
  ASSERT_FALSE(b.ddplaunch.timed_out);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "HELLO rank=0 world=2 sum=3.0"), 1);
  EXPECT_EQ(lines_with(b.ddplaunch.output, "HELLO rank=1 world=2 sum=3.0"), 1);
}

TEST(TorchrunCompat, DocsStaticMasterAddrPortLine) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  BothRuns b = run_both(ws, {{"--nnodes=1", "--node_rank=0", "--nproc_per_node=2", "--master_addr=127.0.0.1",
                              "--master_port=" + std::to_string(port)},
                             {},
                             {ws.script("hello.py")},
                             {}});
  ReportOnFailure report(b);
  expect_hello_from_two_ranks(b);
}

// 10. A real init hang: both ranks are inside init_process_group, rank 1 on a port nobody
// listens on (first run only). PyTorch's own timeout is 15 s, so torchrun fails then; ddplaunch's
// 3 s group init deadline catches it, restarts the group, and the second generation succeeds.
TEST(TorchrunCompat, RealInitHangIsCaughtByTheInitDeadline) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int unused_port = dt::free_tcp_port();
  ASSERT_GT(unused_port, 0);
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("init_hang.py"), std::to_string(unused_port)}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_NE(b.torchrun.output.find("INIT TIMED OUT rank=1 run=0"), std::string::npos)
      << "the script did not hang in init under torchrun";
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.output.find("INIT TIMED OUT"), std::string::npos)
      << "ddplaunch let PyTorch's 15 s timeout expire instead of its own 3 s deadline";
  EXPECT_NE(b.ddplaunch.output.find("init deadline"), std::string::npos);
  EXPECT_TRUE(has_line_with(b.ddplaunch.output, "restarting", "not restarting")) << "no restart announced";
  EXPECT_EQ(lines_with(b.ddplaunch.output, "sum=3.0"), 2) << "no generation succeeded";
  EXPECT_EQ(lines_with(b.ddplaunch.output, "run=0 sum="), 0) << "generation 0 did not hang";
}

// The worker environment: the torchrun contract variables of ranks 0 and 1 under both
// launchers. Values are compared except where they must differ (ports, run ids, file paths);
// those are compared by presence, error files also by per-rank distinctness.
TEST(TorchrunCompat, WorkerEnvironmentMatchesTorchrun) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const std::string torchrun_out = ws.fresh_dir("env-torchrun");
  const std::string ddplaunch_out = ws.fresh_dir("env-ddplaunch");
  BothRuns b;
  run_torchrun(ws, {standalone_two_workers(), {}, {ws.script("env_dump.py"), torchrun_out}, {}}, b);
  run_ddplaunch(ws, {standalone_two_workers(), {}, {ws.script("env_dump.py"), ddplaunch_out}, {}}, b);
  ReportOnFailure report(b);
  expect_same_or_better(b);
  ASSERT_EQ(b.torchrun.exit_code, 0);
  ASSERT_EQ(b.ddplaunch.exit_code, 0);

  const std::vector<std::string> by_value{"RANK",
                                          "LOCAL_RANK",
                                          "WORLD_SIZE",
                                          "LOCAL_WORLD_SIZE",
                                          "GROUP_RANK",
                                          "GROUP_WORLD_SIZE",
                                          "ROLE_RANK",
                                          "ROLE_WORLD_SIZE",
                                          "ROLE_NAME",
                                          "TORCHELASTIC_RESTART_COUNT",
                                          "TORCHELASTIC_MAX_RESTARTS",
                                          "TORCHELASTIC_USE_AGENT_STORE",
                                          "OMP_NUM_THREADS",
                                          "NCCL_ASYNC_ERROR_HANDLING",
                                          "TORCH_NCCL_ASYNC_ERROR_HANDLING"};
  const std::vector<std::string> by_presence{"MASTER_ADDR", "MASTER_PORT", "PYTHON_EXEC", "TORCHELASTIC_RUN_ID",
                                             "TORCHELASTIC_ERROR_FILE"};
  std::map<std::string, std::string> torchrun_env[2], ddplaunch_env[2];
  for (int rank : {0, 1}) {
    const std::string file = "/env_rank" + std::to_string(rank) + ".txt";
    torchrun_env[rank] = read_env_file(torchrun_out + file);
    ddplaunch_env[rank] = read_env_file(ddplaunch_out + file);
    ASSERT_FALSE(torchrun_env[rank].empty()) << "no environment from torchrun's rank " << rank;
    ASSERT_FALSE(ddplaunch_env[rank].empty()) << "no environment from ddplaunch's rank " << rank;
    EXPECT_EQ(torchrun_env[rank]["RANK"], std::to_string(rank)) << "torchrun sanity";
  }
  for (int rank : {0, 1}) {
    auto& tenv = torchrun_env[rank];
    auto& denv = ddplaunch_env[rank];
    for (const auto& name : by_value) {
      if (!tenv.count(name)) continue;
      if (!denv.count(name)) {
        ADD_FAILURE() << name << " missing for rank " << rank << " (torchrun: " << tenv[name] << ")";
        continue;
      }
      EXPECT_EQ(denv[name], tenv[name]) << name << " of rank " << rank;
    }
    for (const auto& name : by_presence) {
      if (!tenv.count(name)) continue;
      EXPECT_TRUE(denv.count(name)) << name << " missing for rank " << rank << " (torchrun: " << tenv[name] << ")";
    }
  }
  // Shared by the ranks of one launcher: the store address; distinct per rank: the error file.
  for (auto* envs : {torchrun_env, ddplaunch_env}) {
    const bool is_torchrun = envs == torchrun_env;
    const std::string who = is_torchrun ? "torchrun" : "ddplaunch";
    EXPECT_EQ(envs[0]["MASTER_ADDR"], envs[1]["MASTER_ADDR"]) << who;
    EXPECT_EQ(envs[0]["MASTER_PORT"], envs[1]["MASTER_PORT"]) << who;
    EXPECT_EQ(envs[0]["TORCHELASTIC_RUN_ID"], envs[1]["TORCHELASTIC_RUN_ID"]) << who;
    if (envs[0].count("TORCHELASTIC_ERROR_FILE") && envs[1].count("TORCHELASTIC_ERROR_FILE")) {
      EXPECT_NE(envs[0]["TORCHELASTIC_ERROR_FILE"], envs[1]["TORCHELASTIC_ERROR_FILE"])
          << who << " gives both ranks the same error file";
    }
  }
}
