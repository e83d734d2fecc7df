// ddplaunch --slurm under a REAL two-node Slurm cluster on loopback, started and stopped by this
// test: srun and launcher/tools/ddplaunch-srun each start one ddplaunch per Slurm node, the workers get a
// consistent contract (ranks, world size, master, node rank = SLURM_NODEID, job id "<job>.<step>"),
// a real gloo DDP job trains to identical checksums, and a cancelled step leaves no process behind.
//
// Recipe (what SetUpTestSuite does; /work/shared/recipes/slurm-loopback.md has the details):
//   bash scripts/install-deps.sh --with-slurm        # slurmctld slurmd slurm-client munge (root)
//   tests/clusters/slurm-test-cluster.sh start DIR   # munged (unless running), slurmctld, slurmd -N n1/-N n2
//   export SLURM_CONF=DIR/slurm.conf                 # both nodes: NodeAddr=127.0.0.1, ports 17001/17002
//   srun -N 2 --ntasks-per-node=1 ddplaunch --slurm --nproc-per-node 1 -- fake_worker --print-env
//   tests/clusters/slurm-test-cluster.sh stop DIR    # kills only the daemons it started
// Both "nodes" are this machine, so both ddplaunch run here. Slurm node 0 of the step is n1, whose
// name does not resolve: ddplaunch maps it to 127.0.0.1 through `scontrol show node` (NodeAddr) and
// the ddplaunch with SLURM_NODEID=0 hosts the rendezvous. Task output goes to files named by srun's
// --output pattern task.%j.%s.%n.%t.log (job id, step id, node id, task id), so the test knows
// exactly which Slurm node and step wrote what.
// Skips only when not root, or Slurm is missing and install-deps cannot install it. The cluster's
// fixed ports (16817, 17001, 17002) allow one such cluster per machine: a busy port is waited for.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher_test_env.h"
#include "output_parsing.h"
#include "process_runner.h"

extern char** environ;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::run_command;
using ddplaunch::testing::RunResult;

namespace {

const std::string kSource = SOURCE_DIR;
const std::string kClusterScript = kSource + "/tests/clusters/slurm-test-cluster.sh";
const std::string kSrunWrapper = kSource + "/launcher/tools/ddplaunch-srun";
const std::string kTrainScript = kSource + "/worker_shim/examples/train_ddp.py";

std::string last_lines(const std::string& text, std::size_t count) {
  std::size_t pos = text.size();
  for (std::size_t n = 0; n <= count && pos != std::string::npos && pos > 0; ++n) pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos ? text : text.substr(pos + 1);
}

RunResult run_shell(const std::string& script, std::chrono::milliseconds timeout) {
  return run_command({"/bin/bash", "-c", script}, timeout);
}

bool slurm_installed() {
  return run_shell("for b in munged slurmctld slurmd srun sinfo scancel scontrol; do "
                   "command -v $b >/dev/null || exit 1; done", 10s)
             .exit_code == 0;
}

// Every SLURM_* variable of this process, so a test run from inside a Slurm job does not
// make srun join that job instead of the test cluster.
std::vector<std::string> inherited_slurm_variables() {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    if (entry.rfind("SLURM_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
  }
  return names;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One process started under our cluster (its environment holds our SLURM_CONF).
struct StepProcess {
  pid_t pid;
  std::string comm;
};

std::string describe(const std::vector<StepProcess>& processes) {
  std::string out;
  for (const auto& p : processes) out += (out.empty() ? "" : ", ") + p.comm + " (pid " + std::to_string(p.pid) + ")";
  return out.empty() ? "none" : out;
}

// One task's output file, named by srun's --output=task.%j.%s.%n.%t.log pattern.
struct TaskLog {
  long job = -1, step = -1, node = -1, task = -1;
  std::string text;
  fs::path path;
};

std::vector<TaskLog> read_task_logs(const fs::path& dir, const std::string& prefix) {
  std::vector<TaskLog> logs;
  const std::regex name(prefix + R"(\.(\d+)\.(\d+)\.(\d+)\.(\d+)\.log)");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    std::string file = entry.path().filename().string();
    if (!std::regex_match(file, m, name)) continue;
    TaskLog log;
    log.job = std::stol(m[1]);
    log.step = std::stol(m[2]);
    log.node = std::stol(m[3]);
    log.task = std::stol(m[4]);
    log.text = read_file(entry.path());
    log.path = entry.path();
    logs.push_back(std::move(log));
  }
  std::sort(logs.begin(), logs.end(), [](const TaskLog& a, const TaskLog& b) { return a.node < b.node; });
  return logs;
}

// "[node N rank R] ENV NAME=value" lines of one worker, as NAME -> value ("unset" lines skipped).
std::map<std::string, std::string> worker_env(const std::string& text, long node, long rank) {
  std::map<std::string, std::string> env;
  for (const auto& line : ddplaunch::testing::env_lines(text))
    if (line.node == node && line.rank == rank && line.value) env[line.name] = *line.value;
  return env;
}

std::string all_logs(const std::vector<TaskLog>& logs) {
  std::string out;
  for (const auto& l : logs) out += "---- " + l.path.string() + "\n" + last_lines(l.text, 40);
  return out;
}

}  // namespace

class SlurmJobTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      skip_reason_ = "needs root: munged, slurmctld and slurmd run as root here (SlurmUser=root)";
      return;
    }
    if (!slurm_installed()) {
      RunResult install = run_command({"bash", kSource + "/scripts/install-deps.sh", "--with-slurm"}, 600s);
      if (!slurm_installed()) {
        skip_reason_ = "Slurm is not installed and `bash scripts/install-deps.sh --with-slurm` could not install it "
                       "(exit " + std::to_string(install.exit_code) + "):\n" + last_lines(install.output, 15);
        return;
      }
    }
    cluster_dir_ = ddplaunch::testing::temp_dir("ddplaunch-slurm-job.");
    slurm_conf_ = cluster_dir_ + "/slurm.conf";
    // The cluster's ports are fixed: wait (bounded) for another test's cluster to go away.
    RunResult start;
    for (int attempt = 0; attempt < 12; ++attempt) {
      start = run_command({kClusterScript, "start", cluster_dir_}, 90s);
      if (start.exit_code == 0 || start.output.find("already in use") == std::string::npos) break;
      std::this_thread::sleep_for(5s);
    }
    if (start.exit_code != 0) {
      RunResult holders = run_shell("ss -Hltnp '( sport = :16817 or sport = :17001 or sport = :17002 )'", 10s);
      start_error_ = "the Slurm test cluster did not start (" + kClusterScript + " start " + cluster_dir_ +
                     ", exit " + std::to_string(start.exit_code) + "):\n" + start.output +
                     "\nlisteners on the cluster's ports (a stale cluster? stop it with `" + kClusterScript +
                     " stop DIR`, DIR from its slurmctld -f argument):\n" + holders.output;
      return;
    }
    cluster_started_ = true;
  }

  static void TearDownTestSuite() {
    if (cluster_dir_.empty()) return;
    if (cluster_started_) {
      RunResult stop = run_command({kClusterScript, "stop", cluster_dir_}, 90s);
      if (stop.exit_code != 0)
        ADD_FAILURE() << "stopping the Slurm test cluster failed (exit " << stop.exit_code << "):\n" << stop.output;
      // Nothing started under this cluster may outlive it: daemons, slurmstepd, ddplaunch, workers.
      auto left = wait_for_no_step_processes(30s, /*include_daemons=*/true);
      if (!left.empty()) {
        ADD_FAILURE() << "processes of the test cluster still run after stop: " << describe(left)
                      << "; killing them";
        for (const auto& p : left) ::kill(p.pid, SIGKILL);
      }
    }
    std::error_code ignored;
    fs::remove_all(cluster_dir_, ignored);
    cluster_dir_.clear();
    cluster_started_ = false;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(start_error_.empty()) << start_error_;
    ASSERT_TRUE(cluster_started_);
    out_dir_ = fs::path(cluster_dir_) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(out_dir_);
  }

  // Every step must have ended with its processes; leftovers fail the test and are killed.
  void TearDown() override {
    if (!cluster_started_) return;
    auto left = wait_for_no_step_processes(30s, /*include_daemons=*/false);
    if (!left.empty()) {
      ADD_FAILURE() << "processes of a finished Slurm step are still running 30 s later: " << describe(left)
                    << "; killing them";
      for (const auto& p : left) ::kill(p.pid, SIGKILL);
    }
  }

  // Processes whose environment carries SLURM_CONF=<our conf>: everything slurmd started for a
  // step (slurmstepd, ddplaunch, its guard, workers) and, with include_daemons, the daemons
  // (munged, slurmctld and its slurmscriptd, slurmd), which the cluster script exports it to.
  static std::vector<StepProcess> step_processes(bool include_daemons) {
    const std::string needle = "SLURM_CONF=" + slurm_conf_;
    const std::set<std::string> daemons = {"munged", "slurmctld", "slurmscriptd", "slurmd"};
    std::vector<StepProcess> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = static_cast<pid_t>(std::stol(name));
      if (pid == ::getpid()) continue;
      std::string env = read_file(entry.path() / "environ");
      std::size_t pos = 0;
      bool ours = false;
      while (!ours && (pos = env.find(needle, pos)) != std::string::npos) {
        const std::size_t end = pos + needle.size();
        ours = (pos == 0 || env[pos - 1] == '\0') && (end == env.size() || env[end] == '\0');
        pos = end;
      }
      if (!ours || !ddplaunch::testing::process_alive(pid)) continue;
      std::string comm = read_file(entry.path() / "comm");
      if (!comm.empty() && comm.back() == '\n') comm.pop_back();
      if (!include_daemons && daemons.count(comm) != 0) continue;
      found.push_back({pid, comm});
    }
    return found;
  }

  static std::vector<StepProcess> wait_for_no_step_processes(std::chrono::milliseconds timeout,
                                                             bool include_daemons) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto left = step_processes(include_daemons);
    while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(200ms);
      left = step_processes(include_daemons);
    }
    return left;
  }

  // Runs argv (srun or the wrapper) against our cluster, with a hard bound.
  RunResult run_on_cluster(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                           std::map<std::string, std::string> extra_env = {}) const {
    extra_env["SLURM_CONF"] = slurm_conf_;
    return run_command(argv, timeout, extra_env, inherited_slurm_variables());
  }

  std::string output_pattern(const std::string& prefix) const {
    return "--output=" + (out_dir_ / (prefix + ".%j.%s.%n.%t.log")).string();
  }

  // The fake worker's environment on both Slurm nodes, read from the step's task logs.
  void expect_fake_worker_step(const RunResult& run, const std::string& what) const {
    SCOPED_TRACE(what);
    auto logs = read_task_logs(out_dir_, "task");
    ASSERT_EQ(run.exit_code, 0) << what << " failed (srun exits with the highest task exit code):\n"
                                << run.output << all_logs(logs);
    EXPECT_EQ(run.output.find("srun: error"), std::string::npos) << run.output;
    ASSERT_EQ(logs.size(), 2u) << "expected one task log per node in " << out_dir_ << "\n" << all_logs(logs);
    EXPECT_EQ(logs[0].job, logs[1].job) << "the two tasks belong to different jobs";
    EXPECT_EQ(logs[0].step, logs[1].step) << "the two tasks belong to different steps";
    const std::string job_id = std::to_string(logs[0].job) + "." + std::to_string(logs[0].step);

    std::set<std::string> master_addrs, master_ports;
    for (const TaskLog& log : logs) {
      SCOPED_TRACE("SLURM_NODEID " + std::to_string(log.node) + " (" + log.path.string() + ")");
      const long node = log.node;
      EXPECT_EQ(log.task, node) << "with one task per node, task t should run on node t";
      auto env = worker_env(log.text, node, node);
      ASSERT_FALSE(env.empty()) << "no '[node " << node << " rank " << node << "] ENV' lines:\n" << log.text;
      EXPECT_EQ(env["RANK"], std::to_string(node));
      EXPECT_EQ(env["GROUP_RANK"], std::to_string(node));
      EXPECT_EQ(env["DDPLAUNCH_NODE_RANK"], std::to_string(node)) << "node rank must be SLURM_NODEID";
      EXPECT_EQ(env["LOCAL_RANK"], "0");
      EXPECT_EQ(env["WORLD_SIZE"], "2");
      EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "1");
      EXPECT_EQ(env["DDPLAUNCH_NODE_COUNT"], "2");
      EXPECT_EQ(env["DDPLAUNCH_JOB_ID"], job_id);
      EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], job_id);
      EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1") << "n1's NodeAddr";
      EXPECT_TRUE(std::regex_match(env["MASTER_PORT"], std::regex("[1-9][0-9]*"))) << env["MASTER_PORT"];
      master_addrs.insert(env["MASTER_ADDR"]);
      master_ports.insert(env["MASTER_PORT"]);
      EXPECT_NE(log.text.find("master: n1 = 127.0.0.1 (scontrol NodeAddr=127.0.0.1)"), std::string::npos)
          << "n1 should be resolved through scontrol's NodeAddr:\n" << log.text;
      // Only SLURM_NODEID 0 (n1, the first host of the step) hosts the rendezvous.
      const bool hosts = log.text.find("hosting the rendezvous") != std::string::npos;
      EXPECT_EQ(hosts, node == 0) << log.text;
      EXPECT_NE(log.text.find("[node " + std::to_string(node) + " rank " + std::to_string(node) + "] FAKE_WORKER_PID="),
                std::string::npos)
          << log.text;
    }
    EXPECT_EQ(master_addrs.size(), 1u) << "MASTER_ADDR differs between nodes";
    EXPECT_EQ(master_ports.size(), 1u) << "MASTER_PORT differs between nodes";
    EXPECT_NE(logs[0].text.find("job succeeded: 2 node(s)"), std::string::npos) << logs[0].text;
  }

  // Whether the step's master ran with a token (authentication on) or warned that it had none.
  void expect_token_use(bool with_token) const {
    auto logs = read_task_logs(out_dir_, "task");
    ASSERT_EQ(logs.size(), 2u) << all_logs(logs);
    const TaskLog& master = logs[0].node == 0 ? logs[0] : logs[1];
    const TaskLog& other = logs[0].node == 0 ? logs[1] : logs[0];
    EXPECT_EQ(master.text.find("authentication on") != std::string::npos, with_token) << master.text;
    EXPECT_EQ(master.text.find("no rendezvous token: anyone who can reach port") != std::string::npos, !with_token)
        << master.text;
    EXPECT_EQ(other.text.find("no rendezvous token"), std::string::npos) << other.text;
  }

  static inline std::string skip_reason_;
  static inline std::string start_error_;
  static inline std::string cluster_dir_;
  static inline std::string slurm_conf_;
  static inline bool cluster_started_ = false;
  fs::path out_dir_;
};

TEST_F(SlurmJobTest, SrunStartsOneLauncherPerNodeWithSlurmContract) {
  RunResult run = run_on_cluster({"srun", "-N", "2", "--ntasks-per-node=1", output_pattern("task"), DDPLAUNCH_BIN,
                                  "--slurm", "--nproc-per-node", "1", "--", FAKE_WORKER_BIN, "--print-env",
                                  "--report-init"},
                                 120s);
  expect_fake_worker_step(run, "srun -N 2 --ntasks-per-node=1 ddplaunch --slurm --nproc-per-node 1 -- fake_worker");
  // Plain srun passes no token: the master says once that anyone can join.
  expect_token_use(false);
}

TEST_F(SlurmJobTest, DdplaunchSrunWrapperStartsOneLauncherPerNode) {
  RunResult run = run_on_cluster({kSrunWrapper, "-N", "2", output_pattern("task"),
                                  "--ddplaunch-opt=--nproc-per-node=1", "--", FAKE_WORKER_BIN, "--print-env",
                                  "--report-init"},
                                 120s, {{"DDPLAUNCH", DDPLAUNCH_BIN}});
  expect_fake_worker_step(run, "DDPLAUNCH=ddplaunch launcher/tools/ddplaunch-srun -N 2 -- fake_worker");
  // The wrapper made a token for the step and handed it to both nodes: joins were authenticated.
  expect_token_use(true);
}

// Slurm's cancellation path: srun gets SIGTERM while the workers sleep; every process of the
// step (slurmstepd, both ddplaunch and their guards, both workers) must be gone afterwards.
// Also proves that step_processes() sees the step's processes, so TearDown's check can fail.
TEST_F(SlurmJobTest, TerminatedSrunLeavesNoProcessOfTheStep) {
  BackgroundProcess srun;
  std::vector<std::string> unset = inherited_slurm_variables();
  ASSERT_TRUE(srun.start({"srun", "-N", "2", "--ntasks-per-node=1", output_pattern("task"), DDPLAUNCH_BIN, "--slurm",
                          "--grace", "2", "--", FAKE_WORKER_BIN, "--report-init", "--sleep-ms", "120000"},
                         {{"SLURM_CONF", slurm_conf_}}, unset))
      << srun.output_so_far();

  auto count = [](const std::vector<StepProcess>& ps, const std::string& comm) {
    return std::count_if(ps.begin(), ps.end(), [&](const StepProcess& p) { return p.comm == comm; });
  };
  std::vector<StepProcess> running;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    running = step_processes(false);
    if (count(running, "ddplaunch") == 2 && count(running, "fake_worker") == 2) break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(count(running, "fake_worker"), 2) << "both workers should be running; found " << describe(running)
                                              << "\nsrun output:\n" << srun.output_so_far()
                                              << all_logs(read_task_logs(out_dir_, "task"));
  ASSERT_EQ(count(running, "ddplaunch"), 2) << describe(running);

  ASSERT_TRUE(srun.send_signal(SIGTERM));
  RunResult ended = srun.wait(60s);
  ASSERT_FALSE(ended.timed_out) << "srun did not end within 60 s of SIGTERM:\n" << ended.output;
  EXPECT_NE(ended.exit_code, 0) << "a terminated step should not report success:\n" << ended.output;
  auto left = wait_for_no_step_processes(30s, false);
  EXPECT_TRUE(left.empty()) << "after srun got SIGTERM these still run: " << describe(left);
}

// scancel while each worker's descendants hide from its process group (setsid, setpgid, a
// double-forked daemon, an `env -i` daemon without the job tag): Slurm's SIGTERM reaches the
// launchers, and none of those descendants may remain.
TEST_F(SlurmJobTest, ScancelLeavesNoEscapedDescendant) {
  BackgroundProcess srun;
  ASSERT_TRUE(srun.start({"srun", "-N", "2", "--ntasks-per-node=1", output_pattern("tree"), DDPLAUNCH_BIN, "--slurm",
                          "--grace", "2", "--", "/usr/bin/python3",
                          kSource + "/tests/integration/support/hostile_tree_worker.py", "escape", "hang"},
                         {{"SLURM_CONF", slurm_conf_}}, inherited_slurm_variables()))
      << srun.output_so_far();
  std::vector<TaskLog> logs;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    logs = read_task_logs(out_dir_, "tree");
    if (logs.size() == 2 && std::all_of(logs.begin(), logs.end(), [](const TaskLog& l) {
          return l.text.find("ESCAPEES_READY") != std::string::npos;
        }))
      break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(logs.size(), 2u) << srun.output_so_far() << all_logs(logs);
  std::vector<pid_t> escaped;
  for (const auto& log : logs) {
    ASSERT_NE(log.text.find("ESCAPEES_READY"), std::string::npos) << all_logs(logs);
    for (const char* tag : {"ESCAPED_PID", "UNTAGGED_PID"})
      for (pid_t pid : ddplaunch::testing::pids_after(log.text, tag)) escaped.push_back(pid);
  }
  ASSERT_EQ(escaped.size(), 8u) << all_logs(logs);

  RunResult cancel = run_command({"scancel", std::to_string(logs[0].job)}, 30s, {{"SLURM_CONF", slurm_conf_}},
                                 inherited_slurm_variables());
  EXPECT_EQ(cancel.exit_code, 0) << cancel.output;
  RunResult ended = srun.wait(60s);
  ASSERT_FALSE(ended.timed_out) << "srun did not end within 60 s of scancel:\n" << ended.output;
  for (pid_t pid : escaped)
    EXPECT_TRUE(ddplaunch::testing::wait_until_gone(pid, 30s))
        << "pid " << pid << " survived scancel\n" << all_logs(read_task_logs(out_dir_, "tree"));
  for (pid_t pid : escaped)
    if (ddplaunch::testing::process_alive(pid)) ::kill(pid, SIGKILL);  // a failed test leaves nothing behind
}

// A common mistake: two tasks per node start two ddplaunch per node. Every one must refuse at
// once (configuration error, exit 2), saying to use --ntasks-per-node=1, and start no worker.
TEST_F(SlurmJobTest, TwoTasksPerNodeAreRefusedWithTheFix) {
  RunResult run = run_on_cluster({"srun", "-N", "2", "--ntasks-per-node=2", output_pattern("task"), DDPLAUNCH_BIN,
                                  "--slurm", "--join-timeout", "20", "--", FAKE_WORKER_BIN, "--print-env"},
                                 120s);
  auto logs = read_task_logs(out_dir_, "task");
  EXPECT_EQ(run.exit_code, 2) << "srun should report the launchers' configuration error:\n"
                              << run.output << all_logs(logs);
  ASSERT_EQ(logs.size(), 4u) << all_logs(logs);
  for (const TaskLog& log : logs) {
    SCOPED_TRACE(log.path.string());
    EXPECT_NE(log.text.find("runs 4 tasks on 2 node(s)"), std::string::npos) << log.text;
    EXPECT_NE(log.text.find("srun --ntasks-per-node=1"), std::string::npos) << log.text;
    EXPECT_EQ(log.text.find("FAKE_WORKER_PID="), std::string::npos) << "a worker started:\n" << log.text;
  }
}

// A real PyTorch DDP job over gloo on the two Slurm nodes: every rank ends with the same checksum.
TEST_F(SlurmJobTest, GlooTrainingUnderSrunGivesIdenticalChecksums) {
  if (!ddplaunch::testing::torch_available(PYTHON_WITH_TORCH))
    GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (apt install python3-torch)";
  RunResult run = run_on_cluster({"srun", "-N", "2", "--ntasks-per-node=1", output_pattern("train"), DDPLAUNCH_BIN,
                                  "--slurm", "--", PYTHON_WITH_TORCH, kTrainScript, "--steps", "10"},
                                 300s);
  auto logs = read_task_logs(out_dir_, "train");
  ASSERT_EQ(run.exit_code, 0) << run.output << all_logs(logs);
  ASSERT_EQ(logs.size(), 2u) << all_logs(logs);

  std::map<long, std::string> checksums;
  for (const TaskLog& log : logs) {
    SCOPED_TRACE("SLURM_NODEID " + std::to_string(log.node));
    const auto finals = ddplaunch::testing::final_lines(log.text);
    auto f = std::find_if(finals.begin(), finals.end(), [](const auto& l) { return l.prefix_node >= 0; });
    ASSERT_TRUE(f != finals.end()) << "no FINAL line:\n" << log.text;
    EXPECT_EQ(f->prefix_node, log.node) << f->text;
    EXPECT_EQ(f->prefix_rank, log.node) << f->text;
    EXPECT_EQ(f->rank, log.node) << "torch's rank differs from the launcher's: " << f->text;
    EXPECT_LT(f->loss_last, f->loss_first) << "training did not reduce the loss: " << f->text;
    checksums[log.node] = f->checksum;
  }
  ASSERT_EQ(checksums.size(), 2u);
  EXPECT_EQ(checksums[0], checksums[1]) << "ranks disagree after DDP training:\n" << all_logs(logs);
}

// Slurm's checkpoint-before-preemption (#SBATCH --signal=USR1@120, here sent at once with
// `scancel --signal=USR1 JOB`, which signals the job's steps but not the batch shell): a batch
// job started with sbatch runs ddplaunch-srun as configs/ddplaunch.sbatch does; the Python
// workers save a checkpoint on SIGUSR1 and exit 0, and the job ends COMPLETED with exit 0:0.
TEST_F(SlurmJobTest, SbatchJobSignalledWithUsr1CheckpointsAndCompletes) {
  const fs::path checkpoints = out_dir_ / "checkpoints";
  fs::create_directories(checkpoints);
  const fs::path script = out_dir_ / "usr1.sbatch";
  std::ofstream(script) << "#!/bin/bash\n"
                        << "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                        << "#SBATCH --output=" << (out_dir_ / "batch.%j.log").string() << "\n"
                        << "set -euo pipefail\n"
                        << "export DDPLAUNCH=" << DDPLAUNCH_BIN << "\n"
                        << "exec " << kSrunWrapper << " " << output_pattern("usr1")
                        << " --ddplaunch-opt=--nproc-per-node=1 -- /usr/bin/python3 " << kSource
                        << "/tests/integration/compat_scripts/usr1_checkpoint.py " << checkpoints.string() << "\n";
  RunResult submitted = run_on_cluster({"sbatch", "--parsable", script.string()}, 30s);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  std::string job = submitted.output.substr(0, submitted.output.find_first_of(";\n"));
  ASSERT_TRUE(std::regex_match(job, std::regex("[0-9]+"))) << submitted.output;

  auto both_ready = [&] {
    auto logs = read_task_logs(out_dir_, "usr1");
    return logs.size() == 2 && logs[0].text.find("READY rank 0") != std::string::npos &&
           logs[1].text.find("READY rank 1") != std::string::npos;
  };
  auto job_state = [&] {
    RunResult show = run_on_cluster({"scontrol", "show", "job", job}, 30s);
    std::smatch m;
    return std::regex_search(show.output, m, std::regex(R"(JobState=(\S+))")) ? m[1].str() : show.output;
  };
  const auto ready_deadline = std::chrono::steady_clock::now() + 90s;
  while (!both_ready() && std::chrono::steady_clock::now() < ready_deadline) std::this_thread::sleep_for(200ms);
  ASSERT_TRUE(both_ready()) << "job " << job << " state " << job_state() << "\n"
                            << all_logs(read_task_logs(out_dir_, "usr1"))
                            << read_file(out_dir_ / ("batch." + job + ".log"));

  RunResult signalled = run_on_cluster({"scancel", "--signal=USR1", job}, 30s);
  ASSERT_EQ(signalled.exit_code, 0) << signalled.output;

  std::string state = job_state();
  const auto end_deadline = std::chrono::steady_clock::now() + 60s;
  while ((state == "RUNNING" || state == "COMPLETING" || state == "PENDING") &&
         std::chrono::steady_clock::now() < end_deadline) {
    std::this_thread::sleep_for(200ms);
    state = job_state();
  }
  auto logs = read_task_logs(out_dir_, "usr1");
  const std::string batch_log = read_file(out_dir_ / ("batch." + job + ".log"));
  EXPECT_EQ(state, "COMPLETED") << all_logs(logs) << batch_log;
  RunResult show = run_on_cluster({"scontrol", "show", "job", job}, 30s);
  EXPECT_NE(show.output.find("ExitCode=0:0"), std::string::npos) << show.output;
  ASSERT_EQ(logs.size(), 2u) << all_logs(logs) << batch_log;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string& text = logs[static_cast<std::size_t>(rank)].text;
    EXPECT_NE(text.find("received SIGUSR1: forwarded to 1 worker process(es)"), std::string::npos) << text;
    EXPECT_NE(text.find("CHECKPOINT rank " + std::to_string(rank) + " saved"), std::string::npos) << text;
    const std::string checkpoint = read_file(checkpoints / ("rank" + std::to_string(rank) + ".ckpt"));
    EXPECT_TRUE(std::regex_match(checkpoint, std::regex("step=[0-9]+\n"))) << "rank " << rank << ": '" << checkpoint
                                                                           << "'";
  }
}
