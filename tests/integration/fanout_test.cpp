// ddplaunch --hosts over real OpenSSH: three network-namespace hosts, each running its own sshd
// with keys the test made. A real gloo DDP job over ssh; Ctrl-C stops every node and leaves
// nothing behind; an unreachable host, a host without ddplaunch and one with another version
// are named before anything starts. The fan-out runs on host 1, as a user would run it there.
#include <gtest/gtest.h>

#include <dirent.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher_test_env.h"
#include "netns_cluster.h"
#include "output_parsing.h"
#include "process_runner.h"
#include "ssh_servers.h"
#include "terminal_process.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono;

namespace {

// Variables of the test's own environment that would change what the launcher does.
const std::vector<std::string> kUnsetEnv = {
    "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK",
    "SLURM_JOB_ID", "SLURM_NODEID", "SLURM_STEP_ID", "PET_NNODES", "DDPLAUNCH_TOKEN", "PYTHONUNBUFFERED"};

std::string skip_reason() {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) return r;
  return dt::SshServers::skip_reason();
}

bool torch_available() { return dt::torch_available(PYTHON_WITH_TORCH); }

// `ddplaunch --hosts h1,...,hN FLAGS -- PROGRAM` in host 1's namespace, ssh through the test's config.
std::vector<std::string> fanout_argv(const dt::NetnsCluster& cluster, int hosts, const std::vector<std::string>& flags,
                                     const std::vector<std::string>& program) {
  std::string list;
  for (int h = 1; h <= hosts; ++h) list += (h > 1 ? "," : "") + dt::SshServers::host_name(h);
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--hosts", list, "--nproc-per-node", "1", "--join-timeout", "60",
                                "--grace", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return cluster.exec_argv(1, argv);
}

// Starts the fan-out in the background and waits until every node's worker printed its rank.
void start_and_wait_for_workers(dt::BackgroundProcess& fanout, const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& env, int nodes) {
  ASSERT_TRUE(fanout.start(argv, env, kUnsetEnv)) << fanout.output_so_far();
  for (int node = 0; node < nodes; ++node)
    ASSERT_TRUE(fanout.wait_for_output("[node " + std::to_string(node) + " rank " + std::to_string(node) + "] ENV RANK=",
                                       seconds(90)))
        << fanout.output_so_far();
}

// A process's command line, arguments separated by spaces ("" once it is gone).
std::string command_line(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(in)), {});
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  return cmd;
}

std::string command_lines(const std::set<pid_t>& pids) {
  std::string out;
  for (pid_t pid : pids) out += std::to_string(pid) + ": " + command_line(std::to_string(pid)) + "\n";
  return out;
}

// Every host's namespace holds nothing but its sshd listener (within `timeout`).
void expect_nothing_left(const dt::NetnsCluster& cluster, const dt::SshServers& ssh, milliseconds timeout) {
  for (int host = 1; host <= cluster.hosts(); ++host) {
    auto left = cluster.processes_left(host, timeout, ssh.listener_pids());  // its sshd listener stays
    EXPECT_EQ(left, std::set<pid_t>{}) << "processes left on host " << host << ":\n" << command_lines(left);
  }
}

// Every process command line on this machine that contains `text` (the test's pid namespace
// is the hosts' too).
std::vector<std::string> command_lines_containing(const std::string& text) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string cmd = command_line(entry->d_name);
    if (cmd.find(text) != std::string::npos) found.push_back(cmd);
  }
  closedir(proc);
  return found;
}

}  // namespace

TEST(FanOut, GlooTrainingOverSshOnThreeHosts) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (!torch_available()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch.distributed";
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fgl"), 3);
  dt::SshServers ssh(cluster, {1, 2, 3});
  dt::RunResult r = dt::run_command(
      fanout_argv(cluster, 3, {},
                  {PYTHON_WITH_TORCH, std::string(SOURCE_DIR) + "/worker_shim/examples/train_ddp.py", "--steps", "20"}),
      seconds(240), {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("master: node 0 = h1 at " + cluster.address(1)), std::string::npos) << r.output;
  // Every rank trained on its own host, with the same parameters at the end.
  std::vector<dt::FinalLine> finals = dt::final_lines(r.output);
  ASSERT_EQ(finals.size(), 3u) << r.output;
  std::set<int> ranks;
  for (const auto& f : finals) {
    ranks.insert(f.rank);
    EXPECT_EQ(f.checksum, finals.front().checksum) << "rank " << f.rank << "\n" << r.output;
    EXPECT_LT(f.loss_last, f.loss_first) << "rank " << f.rank << " did not learn";
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
  // One prefix per line: a node's worker lines name node and rank once.
  for (int node = 0; node < 3; ++node) {
    const std::string prefix = "[node " + std::to_string(node) + " rank " + std::to_string(node) + "] FINAL";
    EXPECT_NE(r.output.find(prefix), std::string::npos) << prefix << "\n" << r.output;
  }
  EXPECT_EQ(r.output.find("] [node"), std::string::npos) << "a line was prefixed twice\n" << r.output;
  expect_nothing_left(cluster, ssh, seconds(10));
}

// A breakpoint on node 1's rank: its pdb is answered at the fan-out's terminal (a real
// pseudo-terminal), relayed from node 1 to the master over the rendezvous and from the master
// to the fan-out over ssh; the console's `:list` and `:help` answer there and the prompt comes
// back after them; `c` lets the job succeed on every host.
TEST(FanOut, BreakpointOnAnotherHostIsAnsweredAtTheFanoutTerminal) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (!torch_available()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch.distributed";
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fdb"), 2);
  dt::SshServers ssh(cluster, {1, 2});
  dt::TerminalProcess terminal;
  ASSERT_TRUE(terminal.start(
      fanout_argv(cluster, 2, {"--history-file", "off"},
                  {PYTHON_WITH_TORCH, std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/ddp_breakpoint.py",
                   "BP_RANKS=1"}),
      {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv));
  ASSERT_TRUE(terminal.wait_for_output("rank 1 (Pdb) ", seconds(120))) << terminal.output();
  EXPECT_TRUE(std::regex_search(terminal.output(),
                                std::regex(R"(rank 1 \(local 0, node 1, host \S+, pid \d+\) stopped at ddp_breakpoint\.py:\d+)")))
      << terminal.output();
  const std::size_t mark = terminal.output_size();
  terminal.type("p secret\r");
  EXPECT_TRUE(terminal.wait_for_output("1012", seconds(20), mark)) << terminal.output();
  // The console's own commands answer at the fan-out's terminal, and rank 1's prompt comes back
  // below their answer.
  for (const auto& [command, answer] : {std::pair<std::string, std::string>{":list", "stopped for"},
                                        std::pair<std::string, std::string>{":help", "anything else"}}) {
    const std::size_t before = terminal.output_size();
    terminal.type(command + "\r");
    ASSERT_TRUE(terminal.wait_for_output(answer, seconds(20), before)) << command << "\n" << terminal.output();
    const std::size_t answered = terminal.output().find(answer, before) + answer.size();
    EXPECT_TRUE(terminal.wait_for_output("rank 1 (Pdb) ", seconds(20), answered))
        << "no prompt after `" << command << "`:\n" << terminal.output().substr(before);
  }
  terminal.type("c\r");
  dt::RunResult r = terminal.wait(seconds(90));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[node 1 rank 1] rank 1 finished"), std::string::npos) << r.output;
  expect_nothing_left(cluster, ssh, seconds(10));
}

TEST(FanOut, CtrlCStopsEveryNodeAndLeavesNothing) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fci"), 3);
  dt::SshServers ssh(cluster, {1, 2, 3});
  // A token of the user's own: it must reach every node, and appear in no command line.
  const std::string token = "fanout-test-token-4f1c9a";
  dt::BackgroundProcess fanout;
  start_and_wait_for_workers(fanout, fanout_argv(cluster, 3, {}, {FAKE_WORKER_BIN, "--print-env", "--hang"}),
                             {{"DDPLAUNCH_SSH", ssh.ssh_command()}, {"DDPLAUNCH_TOKEN", token}}, 3);
  if (HasFatalFailure()) return;
  EXPECT_EQ(command_lines_containing(token), std::vector<std::string>{}) << "the token is visible to ps";
  EXPECT_GE(command_lines_containing("--token-stdin").size(), 6u)  // each node: ssh here, ddplaunch there
      << fanout.output_so_far();

  ASSERT_TRUE(fanout.send_signal(SIGINT));  // what Ctrl-C sends the terminal's foreground process
  dt::RunResult r = fanout.wait(seconds(60));
  ASSERT_FALSE(r.timed_out) << "the fan-out did not stop\n" << r.output;
  EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.output;
  EXPECT_NE(r.output.find("received SIGINT: stopping every node"), std::string::npos) << r.output;
  // Each node stopped its workers and said so (by the SIGINT line, or by the master's stop
  // order when that came first).
  for (int node = 0; node < 3; ++node) {
    const std::string n = std::to_string(node);
    const auto at = r.output.find("ddplaunch[node " + n + "] error: node " + n + " (");
    ASSERT_NE(at, std::string::npos) << "node " << node << " did not stop\n" << r.output;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    EXPECT_NE(line.find("job failed, exit code 130"), std::string::npos) << line;
  }
  expect_nothing_left(cluster, ssh, seconds(20));
}

TEST(FanOut, UnreachableHostIsNamedAndNothingStarts) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fun"), 3);
  dt::SshServers ssh(cluster, {1, 3});  // no sshd on host 2: connections are refused
  dt::RunResult r = dt::run_command(fanout_argv(cluster, 3, {}, {FAKE_WORKER_BIN, "--print-env"}), seconds(120),
                                    {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("1 of 3 host(s) cannot run their node; nothing was started"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("h2 (node 1): ssh could not run a command there"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Connection refused"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("h1 (node 0)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("ENV RANK="), std::string::npos) << "a worker was started\n" << r.output;
  expect_nothing_left(cluster, ssh, seconds(10));
}

TEST(FanOut, HostWithoutDdplaunchOrWithAnotherVersionIsNamed) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fnd"), 3);
  const std::string launcher_dir = std::filesystem::path(DDPLAUNCH_BIN).parent_path().string();
  // Host 2 does not have the build tree's ddplaunch (nor one on PATH); host 3 has another version there.
  dt::SshServers ssh(cluster, {1, 2, 3},
                     {{2, {launcher_dir, ""}}, {3, {launcher_dir, "ddplaunch 0.0.1-other"}}});
  dt::RunResult r = dt::run_command(fanout_argv(cluster, 3, {}, {FAKE_WORKER_BIN, "--print-env"}), seconds(120),
                                    {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("2 of 3 host(s) cannot run their node; nothing was started"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("h2 (node 1): ddplaunch is not installed there: neither " + std::string(DDPLAUNCH_BIN)),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("h3 (node 2): " + std::string(DDPLAUNCH_BIN) + " is 'ddplaunch 0.0.1-other'"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("ENV RANK="), std::string::npos) << "a worker was started\n" << r.output;
}

// The terminal's ddplaunch dies without a word (SIGKILL): its ssh processes die with it, every
// node sees its stdin end (--stop-on-stdin-eof) and stops, and nothing is left on any host.
TEST(FanOut, KilledFanoutLeavesNothingOnAnyHost) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fki"), 3);
  dt::SshServers ssh(cluster, {1, 2, 3});
  dt::BackgroundProcess fanout;
  start_and_wait_for_workers(fanout, fanout_argv(cluster, 3, {}, {FAKE_WORKER_BIN, "--print-env", "--hang"}),
                             {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, 3);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(fanout.send_signal(SIGKILL));
  dt::RunResult r = fanout.wait(seconds(30));
  EXPECT_EQ(r.term_signal, SIGKILL);
  expect_nothing_left(cluster, ssh, seconds(30));
}

// A DeepSpeed hostfile: each host runs as many workers as its slots, ranks numbered across
// hosts in order; --exclude drops a host.
TEST(FanOut, HostfileSlotsSetEachHostsWorkers) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fhf"), 3);
  dt::SshServers ssh(cluster, {1, 2});  // host 3 is excluded, so it is never contacted
  const std::string hostfile = ssh.dir() + "/hostfile";
  std::ofstream(hostfile) << "# test hosts\nh1 slots=2\nh2 slots=1\nh3 slots=4\n";
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--hostfile", hostfile, "--exclude", "h3", "--join-timeout", "60",
                                "--", FAKE_WORKER_BIN, "--print-env"};
  dt::RunResult r = dt::run_command(cluster.exec_argv(1, argv), seconds(120), {{"DDPLAUNCH_SSH", ssh.ssh_command()}},
                                    kUnsetEnv);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const std::string& line : {std::string("[node 0 rank 0] ENV WORLD_SIZE=3"), std::string("[node 0 rank 1] ENV LOCAL_RANK=1"),
                                  std::string("[node 1 rank 2] ENV LOCAL_WORLD_SIZE=1"),
                                  "[node 1 rank 2] ENV MASTER_ADDR=" + cluster.address(1)})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  EXPECT_EQ(r.output.find("[node 2"), std::string::npos) << r.output;
}

// The user's own variables reach every host's workers only when passed: -x VAR (its value on
// the fan-out's terminal), -x VAR=VALUE, and --env-file lines (-x wins over the file); one not
// passed stays behind (an ssh session starts with a bare environment).
TEST(FanOut, UserVariablesPassWithDashXAndAnEnvFileOthersStayBehind) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fux"), 2);
  dt::SshServers ssh(cluster, {1, 2});
  const std::string env_file = ssh.dir() + "/job.env";
  std::ofstream(env_file) << "# the job's settings\nexport FROM_FILE=file-value\n\nMY_FLAG=overridden-by-x\n";
  dt::RunResult r = dt::run_command(
      fanout_argv(cluster, 2, {"-x", "MY_FLAG=from-x", "-x", "FANOUT_TEST_VAR", "--env-file", env_file},
                  {"/bin/sh", "-c", "echo \"USERENV flag=$MY_FLAG here=$FANOUT_TEST_VAR file=$FROM_FILE stray=$STRAY_VAR\""}),
      seconds(120),
      {{"DDPLAUNCH_SSH", ssh.ssh_command()}, {"FANOUT_TEST_VAR", "from-the-terminal"}, {"STRAY_VAR", "not-passed"}},
      kUnsetEnv);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (int node = 0; node < 2; ++node)
    EXPECT_NE(r.output.find("[node " + std::to_string(node) + " rank " + std::to_string(node) +
                            "] USERENV flag=from-x here=from-the-terminal file=file-value stray="),
              std::string::npos)
        << r.output;
  EXPECT_EQ(r.output.find("not-passed"), std::string::npos) << r.output;
  // Mistakes are named before anything starts.
  dt::RunResult unset = dt::run_command(fanout_argv(cluster, 2, {"-x", "NOT_SET_ANYWHERE"}, {"/bin/true"}), seconds(60),
                                        {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv);
  EXPECT_EQ(unset.exit_code, 2) << unset.output;
  EXPECT_NE(unset.output.find("-x NOT_SET_ANYWHERE: NOT_SET_ANYWHERE is not set here"), std::string::npos) << unset.output;
}

// The ranks a printed line names: "[ranks 0-3]", "[node 1 ranks 2,3]" or "[node 1 rank 3]".
std::vector<int> ranks_named_by(const std::string& line) {
  std::smatch m;
  std::vector<int> ranks;
  if (std::regex_search(line, m, std::regex(R"(\brank (\d+)\])"))) return {std::stoi(m[1])};
  if (!std::regex_search(line, m, std::regex(R"(\branks ([0-9,-]+)\])"))) return ranks;
  std::stringstream list(m[1].str());
  for (std::string part; std::getline(list, part, ',');) {
    const auto dash = part.find('-');
    const int first = std::stoi(part.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int r = first; r <= last; ++r) ranks.push_back(r);
  }
  return ranks;
}

// With --collapse-output on, the fan-out's terminal merges identical lines of ranks on different
// hosts into one naming the ranks; lines that differ keep their own "[node N rank R]".
// The merge is a timing rule (lines that reach the fan-out within its window): on a loaded
// machine ssh may deliver one host's line later, so the job runs up to 3 times and one run must
// merge all four; every run must show each rank's line exactly once, merged or not.
TEST(FanOut, IdenticalLinesOfRanksOnDifferentHostsPrintOnceWhenCollapsing) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fcl"), 2);
  dt::SshServers ssh(cluster, {1, 2});
  bool merged = false;
  std::string outputs;
  for (int attempt = 0; attempt < 3 && !merged; ++attempt) {
    const std::string go = ssh.dir() + "/go" + std::to_string(attempt);
    // Every rank says it is ready, waits (bounded) for the test's go, then prints the same line
    // and runs on a moment, as a trainer does: a node's end is said at once, and what the
    // launcher says about a node goes out after every line waiting before it (the other host's
    // line too, were it still on its way).
    const std::string script = "echo \"ready $RANK\"; i=0; while [ ! -e " + go +
                               " ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; echo 'Training finished'; "
                               "echo \"bye from $RANK\"; sleep 1";
    dt::BackgroundProcess fanout;
    ASSERT_TRUE(fanout.start(fanout_argv(cluster, 2, {"--nproc-per-node", "2", "--collapse-output", "on"},
                                         {"/bin/sh", "-c", script}),
                             {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv));
    for (int rank = 0; rank < 4; ++rank)
      ASSERT_TRUE(fanout.wait_for_output("rank " + std::to_string(rank) + "] ready " + std::to_string(rank), seconds(90)))
          << fanout.output_so_far();
    std::ofstream(go) << "go\n";
    dt::RunResult r = fanout.wait(seconds(90));
    outputs += "===== run " + std::to_string(attempt + 1) + "\n" + r.output;
    ASSERT_FALSE(r.timed_out) << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("[node 1 rank 3] bye from 3"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[node 0 rank 0] ready 0"), std::string::npos) << r.output;
    std::multiset<int> finished_by;
    std::stringstream lines(r.output);
    for (std::string line; std::getline(lines, line);)
      if (line.find("] Training finished") != std::string::npos)
        for (int rank : ranks_named_by(line)) finished_by.insert(rank);
    EXPECT_EQ(finished_by, (std::multiset<int>{0, 1, 2, 3})) << "each rank's line once:\n" << r.output;
    merged = dt::count_of(r.output, "Training finished") == 1 &&
             r.output.find("[ranks 0-3] Training finished") != std::string::npos;
  }
  EXPECT_TRUE(merged) << "no run merged the four identical lines into one:\n" << outputs;
}

// Node 0 cannot start (the endpoint given is another host's address, so it refuses to host the
// rendezvous): the fan-out does not leave the other nodes waiting for their join timeout but
// stops them, and ends with node 0's status.
TEST(FanOut, NodeThatCannotStartStopsTheOthers) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("fns"), 3);
  dt::SshServers ssh(cluster, {1, 2, 3});
  dt::RunResult r = dt::run_command(
      fanout_argv(cluster, 3, {"--join-timeout", "600", "--rdzv-endpoint", cluster.address(2) + ":29400"},
                  {FAKE_WORKER_BIN, "--print-env"}),
      seconds(180), {{"DDPLAUNCH_SSH", ssh.ssh_command()}}, kUnsetEnv);
  ASSERT_FALSE(r.timed_out) << "the other nodes were left waiting\n" << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("node 0 (h1) ended: exit code 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stopping every node"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("ENV RANK="), std::string::npos) << r.output;
  expect_nothing_left(cluster, ssh, seconds(20));
}
