// Single-node integration tests of the real ddplaunch binary with fake_worker: the environment
// contract of every rank, exit-status propagation, Ctrl-C and SIGKILL leaving no process behind,
// output prefixing under heavy output, --log-dir across a restart, --dry-run, and bad input.
#include <gtest/gtest.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "output_parsing.h"
#include "launcher_test_env.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using dt::count_of;

namespace {

constexpr auto kRunLimit = seconds(120);
const std::string kFake = FAKE_WORKER_BIN;

// Runs ddplaunch with `args`, bounded by kRunLimit.
dt::RunResult run_launcher(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& extra_env = {},
                        const std::vector<std::string>& unset_env = {}) {
  std::vector<std::string> argv{DDPLAUNCH_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return dt::run_command(argv, kRunLimit, extra_env, unset_env);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "[rank R] ENV NAME=value" → env[R][NAME] = value; "[rank R] ENV NAME unset" → not in the map,
// but in unset[R].
struct RankEnv {
  std::map<int, std::map<std::string, std::string>> set;
  std::map<int, std::set<std::string>> unset;
};

RankEnv parse_rank_env(const std::string& output) {
  RankEnv env;
  for (const auto& line : dt::env_lines(output)) {
    if (line.node >= 0) continue;  // a "[node N rank R] " line: not a single-node job's
    if (line.value) env.set[line.rank][line.name] = *line.value;
    else env.unset[line.rank].insert(line.name);
  }
  return env;
}

// True once /proc/<pid>/status shows SIGTERM ignored (fake_worker sets it after printing its pid).
bool wait_sigterm_ignored(pid_t pid, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  do {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigIgn:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1)
        return true;
    }
    ::usleep(20 * 1000);
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

// A shell command line for one worker: rank 1 runs `rank1_args`, the others `other_args`.
std::vector<std::string> per_rank_program(const std::string& rank1_args, const std::string& other_args) {
  return {"/bin/sh", "-c",
          "if [ \"$RANK\" = 1 ]; then exec \"$0\" " + rank1_args + "; else exec \"$0\" " + other_args + "; fi",
          kFake};
}

template <typename T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(SingleNode, EveryRankGetsTheEnvironmentContract) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "3", "--", kFake, "--print-env"}, {},
                              {"OMP_NUM_THREADS", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  RankEnv env = parse_rank_env(r.output);
  ASSERT_EQ(env.set.size(), 3u) << r.output;

  const std::string port = env.set[0]["MASTER_PORT"];
  const std::string run_id = env.set[0]["TORCHELASTIC_RUN_ID"];
  ASSERT_FALSE(port.empty()) << r.output;
  EXPECT_GE(std::stol(port), 1);
  EXPECT_LE(std::stol(port), 65535);
  EXPECT_FALSE(run_id.empty());
  for (int rank = 0; rank < 3; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    auto& e = env.set[rank];
    const std::string r_str = std::to_string(rank);
    EXPECT_EQ(e["RANK"], r_str);
    EXPECT_EQ(e["LOCAL_RANK"], r_str);
    EXPECT_EQ(e["WORLD_SIZE"], "3");
    EXPECT_EQ(e["LOCAL_WORLD_SIZE"], "3");
    EXPECT_EQ(e["GROUP_RANK"], "0");
    EXPECT_EQ(e["ROLE_RANK"], r_str);
    EXPECT_EQ(e["ROLE_WORLD_SIZE"], "3");
    EXPECT_EQ(e["ROLE_NAME"], "default");
    EXPECT_EQ(e["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(e["MASTER_PORT"], port) << "every rank must use one c10d store port";
    EXPECT_EQ(e["TORCHELASTIC_RESTART_COUNT"], "0");
    EXPECT_EQ(e["TORCHELASTIC_MAX_RESTARTS"], "0");  // torchrun's default --max-restarts
    EXPECT_EQ(e["TORCHELASTIC_USE_AGENT_STORE"], "False");
    EXPECT_EQ(e["TORCHELASTIC_RUN_ID"], run_id);
    EXPECT_EQ(e["OMP_NUM_THREADS"], "1");
    ASSERT_FALSE(e["DDPLAUNCH_TIMEOUT_S"].empty());
    EXPECT_GT(std::stod(e["DDPLAUNCH_TIMEOUT_S"]), 0.0);
    EXPECT_EQ(e["DDPLAUNCH_GENERATION"], "0");
    EXPECT_EQ(e.count("NCCL_SOCKET_IFNAME"), 0u) << "set on a single node: " << e["NCCL_SOCKET_IFNAME"];
    EXPECT_EQ(env.unset[rank].count("NCCL_SOCKET_IFNAME"), 1u);
  }
}

TEST(SingleNode, KeepsTheUsersOmpNumThreads) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--", kFake, "--print-env"}, {{"OMP_NUM_THREADS", "4"}});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  RankEnv env = parse_rank_env(r.output);
  ASSERT_EQ(env.set.size(), 2u) << r.output;
  for (int rank = 0; rank < 2; ++rank) EXPECT_EQ(env.set[rank]["OMP_NUM_THREADS"], "4") << "rank " << rank;
}

// Started with stdout and stderr closed (`>&- 2>&-`, as a careless daemon script does): the
// launcher puts /dev/null there first, so that none of its own pipes or sockets becomes fd 1
// or 2 (every log line would be written into it); the job runs and the worker sees that.
TEST(SingleNode, ClosedStdioIsReplacedByDevNullBeforeAnythingOpens) {
  const std::string dir = dt::temp_dir("closed-stdio-");
  const std::string out = dir + "/launcher-fds";
  const std::string shell = "exec " + std::string(DDPLAUNCH_BIN) +
                            " --nproc-per-node 1 --history-file off -- /bin/sh -c 'readlink /proc/$PPID/fd/1 "
                            "/proc/$PPID/fd/2 > " + out + "' >&- 2>&-";
  dt::RunResult r = dt::run_command({"/bin/sh", "-c", shell}, std::chrono::seconds(60), {}, dt::kLauncherEnvToUnset);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out);
  std::string fd1, fd2;
  std::getline(in, fd1);
  std::getline(in, fd2);
  EXPECT_EQ(fd1, "/dev/null");
  EXPECT_EQ(fd2, "/dev/null");
}

TEST(SingleNode, PropagatesAWorkersExitCode) {
  dt::RunResult r = run_launcher(concat<std::string>({"--nproc-per-node", "2", "--grace", "2", "--"},
                                     per_rank_program("--exit 7", "--hang")));
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 7) << r.output;
  EXPECT_NE(r.output.find("JOB FAILED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("root cause: rank 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exit code 7"), std::string::npos) << r.output;
}

TEST(SingleNode, PropagatesAWorkersDeathBySignal) {
  dt::RunResult r = run_launcher(concat<std::string>({"--nproc-per-node", "2", "--grace", "2", "--"},
                                     per_rank_program("--signal 9", "--hang")));
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.output;
  EXPECT_NE(r.output.find("root cause: rank 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SIGKILL"), std::string::npos) << r.output;
}

TEST(SingleNode, ExitsZeroWhenEveryWorkerDoes) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "3", "--", kFake, "--exit", "0"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dt::pids_after(r.output, "FAKE_WORKER_PID").size(), 3u) << r.output;
  EXPECT_EQ(r.output.find("JOB FAILED"), std::string::npos) << r.output;
}

TEST(SingleNode, CtrlCStopsWorkersThatIgnoreSigterm) {
  dt::BackgroundProcess launcher;
  dt::StrayKiller strays({"fake_worker"});
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--grace", "1", "--", kFake,
                              "--ignore-sigterm", "--hang"}))
      << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("[rank 0] FAKE_WORKER_PID=", seconds(30))) << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("[rank 1] FAKE_WORKER_PID=", seconds(30))) << launcher.output_so_far();
  strays.pids = dt::pids_after(launcher.output_so_far(), "FAKE_WORKER_PID");
  ASSERT_EQ(strays.pids.size(), 2u) << launcher.output_so_far();
  for (pid_t pid : strays.pids) ASSERT_TRUE(wait_sigterm_ignored(pid, seconds(10))) << "worker " << pid;

  ASSERT_TRUE(launcher.send_signal(SIGINT));
  dt::RunResult r = launcher.wait(seconds(10));
  ASSERT_FALSE(r.timed_out) << "ddplaunch did not exit within 10 s of SIGINT:\n" << r.output;
  EXPECT_EQ(r.exit_code, 130) << r.output;
  for (pid_t pid : strays.pids)
    EXPECT_TRUE(dt::wait_until_gone(pid, seconds(5))) << "worker " << pid << " survived Ctrl-C\n" << r.output;
}

TEST(SingleNode, KilledLauncherLeavesNoWorkerOrGrandchild) {
  dt::BackgroundProcess launcher;
  dt::StrayKiller strays({"fake_worker"});
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--", kFake, "--fork-grandchild", "--hang"}))
      << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("[rank 0] GRANDCHILD_PID=", seconds(30))) << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("[rank 1] GRANDCHILD_PID=", seconds(30))) << launcher.output_so_far();
  const std::string seen = launcher.output_so_far();
  std::vector<pid_t> workers = dt::pids_after(seen, "FAKE_WORKER_PID");
  std::vector<pid_t> grandchildren = dt::pids_after(seen, "GRANDCHILD_PID");
  ASSERT_EQ(workers.size(), 2u) << seen;
  ASSERT_EQ(grandchildren.size(), 2u) << seen;
  strays.pids = concat(workers, grandchildren);
  for (pid_t pid : strays.pids) ASSERT_TRUE(dt::process_alive(pid)) << "pid " << pid << " gone too early";

  ASSERT_TRUE(launcher.send_signal(SIGKILL));  // the launcher only, not its process group
  dt::RunResult r = launcher.wait(seconds(10));
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  for (pid_t pid : workers) EXPECT_TRUE(dt::wait_until_gone(pid, seconds(5))) << "worker " << pid << " survived";
  for (pid_t pid : grandchildren)
    EXPECT_TRUE(dt::wait_until_gone(pid, seconds(5))) << "grandchild " << pid << " survived";
}

// Where a core dump of the launcher kills only the launcher (Linux >= 5.16), its
// orphan guard shares the launcher's memory instead of being a forked copy of it (a copy costs
// every start ~3 ms on a VM). What the guard does is the tests above.
TEST(SingleNode, TheGuardSharesTheLaunchersMemoryWhereTheKernelAllowsIt) {
  utsname u{};
  int major = 0, minor = 0;
  ASSERT_EQ(::uname(&u), 0);
  std::sscanf(u.release, "%d.%d", &major, &minor);
  if (major < 5 || (major == 5 && minor < 16)) GTEST_SKIP() << "Linux " << u.release << ": the guard is a forked copy";
  dt::BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", "1", "--", "/bin/sleep", "30"}));
  ASSERT_TRUE(launcher.wait_for_output("starting 1 worker", seconds(30))) << launcher.output_so_far();
  pid_t guard = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {  // "pid (comm) state ppid ..."
    if (entry.path().filename().string().find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat;
    try {  // a process that exits while it is read throws ("No such process"): it is not the guard
      std::ifstream in(entry.path() / "stat");
      stat.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
      continue;
    }
    const auto close = stat.rfind(')');
    if (close == std::string::npos || stat.find("(ddplaunch-guard)") == std::string::npos) continue;
    if (std::atoi(stat.c_str() + close + 4) == launcher.pid()) guard = std::atoi(stat.c_str());
  }
  ASSERT_GT(guard, 0) << "no ddplaunch-guard child of " << launcher.pid();
  EXPECT_EQ(::syscall(SYS_kcmp, launcher.pid(), guard, KCMP_VM, 0, 0), 0) << "the guard has memory of its own";
  ASSERT_TRUE(launcher.send_signal(SIGTERM));
  EXPECT_FALSE(launcher.wait(seconds(30)).timed_out);
}

TEST(SingleNode, PrefixesEveryLineWholeUnderHeavyOutput) {
  constexpr int kRanks = 4, kLines = 5000, kBytes = 200;
  // ddplaunch's stdout alone: its stderr (launcher log, workers' stderr) goes to a file.
  const std::string dir = dt::temp_dir("it1-flood-");
  const std::string err_file = dir + "/stderr.txt";
  dt::RunResult r = dt::run_command(
      {"/bin/sh", "-c", "f=$1; shift; exec \"$@\" 2>\"$f\"", "sh", err_file, DDPLAUNCH_BIN, "--nproc-per-node",
       std::to_string(kRanks), "--", kFake, "--lines", std::to_string(kLines), "--line-bytes",
       std::to_string(kBytes)},
      kRunLimit);
  std::ifstream err_in(err_file);
  std::string err((std::istreambuf_iterator<char>(err_in)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  ASSERT_FALSE(r.timed_out) << err;
  ASSERT_EQ(r.exit_code, 0) << err;

  static const std::regex kLine(R"(^\[rank (\d)\] rank (\d) line (\d+) (x*)$)");
  static const std::regex kOther(R"(^\[rank (\d)\] (FAKE_WORKER_PID=\d+ RANK=(\d)|rank (\d) err \d+)$)");
  std::vector<long> next(kRanks, 0);
  std::size_t bad = 0;
  for (const auto& line : lines_of(r.output)) {
    std::smatch m;
    if (std::regex_match(line, m, kLine)) {
      int rank = std::stoi(m[1]);
      long i = std::stol(m[3]);
      // The payload is the worker's whole line: same rank, full length, in the worker's order.
      bool whole = rank < kRanks && m[2] == m[1] && line.size() - (8 + m[1].length()) == kBytes - 1;
      if (whole && i == next[rank]) {
        ++next[rank];
        continue;
      }
    } else if (std::regex_match(line, m, kOther) && (m[3] == m[1] || m[4] == m[1])) {
      continue;
    }
    if (++bad <= 5) ADD_FAILURE() << "not one whole prefixed worker line: '" << line.substr(0, 300) << "'";
  }
  EXPECT_EQ(bad, 0u);
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(next[rank], kLines) << "lines of rank " << rank;
}

// rank_<R>.log holds the current generation; the one before it moved to rank_<R>.gen0.log.
TEST(SingleNode, LogDirKeepsEveryGenerationOfARank) {
  const std::string dir = dt::temp_dir("it1-logs-");
  // --ignore-sigterm: the launcher SIGTERMs a worker as soon as it reports init_failed, which
  // without it kills fake_worker before its error line in about 1 run of 10 (see the report).
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--log-dir", dir, "--", kFake, "--ignore-sigterm",
                                  "--fail-init-on-gen", "0", "--fail-rank", "1", "--report-init"});
  auto read = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string gen0 = read("rank_1.gen0.log"), gen1 = read("rank_1.log");
  bool rank0_logs = fs::exists(dir + "/rank_0.log") && fs::exists(dir + "/rank_0.gen0.log");
  fs::remove_all(dir);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("restart 1 of 3"), std::string::npos) << r.output;
  EXPECT_TRUE(rank0_logs);

  // Each file: its generation's header, then that generation's own lines (stdout and stderr).
  EXPECT_EQ(gen0.rfind("===== ddplaunch generation 0 | rank 1", 0), 0u) << gen0;
  EXPECT_EQ(count_of(gen0, "===== ddplaunch generation"), 1) << gen0;
  EXPECT_NE(gen0.find("FAKE_WORKER_PID="), std::string::npos) << gen0;
  EXPECT_NE(gen0.find("fake init failure on generation 0"), std::string::npos) << "stderr line missing:\n" << gen0;
  EXPECT_EQ(gen1.rfind("===== ddplaunch generation 1 | rank 1", 0), 0u) << gen1;
  EXPECT_EQ(count_of(gen1, "===== ddplaunch generation"), 1) << gen1;
  EXPECT_EQ(count_of(gen1, "FAKE_WORKER_PID="), 1) << gen1;
  EXPECT_EQ(count_of(gen1, "RANK=1\n"), 1) << gen1;
  EXPECT_EQ(gen1.find("fake init failure"), std::string::npos) << gen1;
}

TEST(SingleNode, DryRunPrintsConfigAndEnvironmentsAndStartsNothing) {
  dt::RunResult r = run_launcher({"--dry-run", "--nproc-per-node", "2", "--", "/bin/false"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << "/bin/false must not have run:\n" << r.output;
  EXPECT_NE(r.output.find("nproc_per_node: 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nRANK=0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nRANK=1\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nWORLD_SIZE=2\n"), std::string::npos) << r.output;
  // What ddplaunch sets is listed apart from what the worker inherits (PATH is inherited).
  const auto set_at = r.output.find("# set by ddplaunch\n");
  const auto inherited_at = r.output.find("# inherited unchanged", set_at);
  ASSERT_NE(inherited_at, std::string::npos) << r.output;
  EXPECT_LT(r.output.find("\nRANK=0\n", set_at), inherited_at) << r.output;
  EXPECT_GT(r.output.find("\nPATH=", set_at), inherited_at) << r.output;

  const std::string dir = dt::temp_dir("it1-dry-");
  const std::string marker = dir + "/ran";
  r = run_launcher({"--dry-run", "--nproc-per-node", "1", "--", "/bin/sh", "-c", "touch " + marker});
  bool ran = fs::exists(marker);
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(ran) << "--dry-run started a worker";
}

TEST(SingleNodeBadInput, UnknownFlagIsNamed) {
  dt::RunResult r = run_launcher({"--no-such-flag", "--", kFake});
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--no-such-flag"), std::string::npos) << r.output;
}

TEST(SingleNodeBadInput, ConfigErrorsNameTheKeyLineAndPath) {
  const std::string dir = dt::temp_dir("it1-cfg-");
  std::ofstream(dir + "/unknown.yaml") << "nodes: 1\nnproc_per_node: 2\nno_such_key: 3\n";
  std::ofstream(dir + "/badvalue.yaml") << "nproc_per_node: 2\nnodes: abc\n";
  dt::RunResult unknown = run_launcher({"--config", dir + "/unknown.yaml", "--", kFake});
  dt::RunResult bad_value = run_launcher({"--config", dir + "/badvalue.yaml", "--", kFake});
  dt::RunResult missing = run_launcher({"--config", dir + "/missing.yaml", "--", kFake});
  fs::remove_all(dir);

  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no_such_key"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown.yaml:3"), std::string::npos) << "line number missing:\n" << unknown.output;
  EXPECT_EQ(bad_value.exit_code, 2) << bad_value.output;
  EXPECT_NE(bad_value.output.find("'nodes'"), std::string::npos) << bad_value.output;
  EXPECT_NE(bad_value.output.find("abc"), std::string::npos) << bad_value.output;
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find(dir + "/missing.yaml"), std::string::npos) << missing.output;
  EXPECT_EQ(unknown.output.find("FAKE_WORKER_PID"), std::string::npos) << "a worker ran despite the error";
}

// Checked before any worker starts: a start-up error (exit 2) naming the program, not an init
// failure of every rank with exit 127 (before: exit 127 and a paragraph about the restart budget).
TEST(SingleNodeBadInput, ProgramNotFoundIsReported) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "1", "--", "ddpl-it1-no-such-program"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("was not found on this node's PATH"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ddpl-it1-no-such-program"), std::string::npos) << r.output;

  r = run_launcher({"--nproc-per-node", "1", "--", "/nonexistent/ddpl-it1-prog"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the program '/nonexistent/ddpl-it1-prog' does not exist on this node"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("restart"), std::string::npos) << "a missing program is not worth a restart";
  EXPECT_EQ(r.output.find("init failure"), std::string::npos) << r.output;

  // torchrun's --no-python: a file that is not executable cannot run as it is.
  const std::string plain = dt::temp_dir("ddplaunch-noexec-") + "/not-executable";
  { std::ofstream(plain) << "#!/bin/sh\necho hi\n"; }
  r = run_launcher({"--nproc-per-node", "1", "--no-python", "--", plain});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not executable: chmod +x it"), std::string::npos) << r.output;
  std::filesystem::remove_all(std::filesystem::path(plain).parent_path());
}

// 1024 workers on one node (the most --nproc-per-node allows) start, run and end cleanly, and
// SIGTERM stops them all (before, at 512: every worker exited 0 but the job failed, "peer is not
// reading its messages", as each exit sent the whole rank table in one loop turn).
TEST(SingleNode, AThousandWorkersOnOneNodeStartRunEndAndStopOnSigterm) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "1024", "--shim", "none", "--", FAKE_WORKER_BIN});
  ASSERT_FALSE(r.timed_out) << r.output.substr(0, 4000);
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0);
  EXPECT_EQ(r.output.find("not reading its messages"), std::string::npos);
  EXPECT_EQ(dt::count_of(r.output, "FAKE_WORKER_PID="), 1024);

  dt::BackgroundProcess node;
  ASSERT_TRUE(node.start({DDPLAUNCH_BIN, "--nproc-per-node", "1024", "--shim", "none", "--grace", "5", "--",
                          FAKE_WORKER_BIN, "--sleep-ms", "600000"}));
  bool all_started = false;  // every worker printed its pid: 600 x 100 ms at most
  for (int i = 0; i < 600 && !all_started; ++i) {
    all_started = dt::count_of(node.output_so_far(), "FAKE_WORKER_PID=") == 1024;
    if (!all_started) std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(all_started) << dt::count_of(node.output_so_far(), "FAKE_WORKER_PID=") << " workers started";
  ASSERT_TRUE(node.send_signal(SIGTERM));
  dt::RunResult stopped = node.wait(seconds(60));
  EXPECT_FALSE(stopped.timed_out);
  EXPECT_EQ(stopped.exit_code, 143) << stopped.output.substr(stopped.output.size() > 4000 ? stopped.output.size() - 4000 : 0);
  std::vector<pid_t> pids;
  for (const auto& line : lines_of(stopped.output))
    if (auto at = line.find("FAKE_WORKER_PID="); at != std::string::npos)
      pids.push_back(static_cast<pid_t>(std::stol(line.substr(at + 16))));
  ASSERT_EQ(pids.size(), 1024u);
  int alive = 0;
  for (pid_t pid : pids) alive += dt::process_alive(pid) ? 1 : 0;
  EXPECT_EQ(alive, 0);
}

TEST(SingleNodeBadInput, ZeroWorkersIsAConfigError) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "0", "--", kFake});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nproc_per_node"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAKE_WORKER_PID"), std::string::npos) << r.output;
}

// Slurm's `--signal=USR1@120` / `scancel --signal=USR1`: ddplaunch forwards SIGUSR1 to every
// worker and keeps going; workers that checkpoint and exit 0 end the job with 0.
TEST(SingleNode, SigUsr1IsForwardedToEveryWorkerForACheckpointBeforePreemption) {
  dt::BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--", "/usr/bin/python3",
                              std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/usr1_checkpoint.py"}))
      << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("READY rank 0", seconds(60))) << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("READY rank 1", seconds(60))) << launcher.output_so_far();
  ASSERT_TRUE(launcher.send_signal(SIGUSR1));
  dt::RunResult r = launcher.wait(seconds(30));
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("received SIGUSR1: forwarded to 2 worker process(es)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CHECKPOINT rank 0 saved"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CHECKPOINT rank 1 saved"), std::string::npos) << r.output;
}

// --shutdown-timeout (torchrun's SIGTERM -> SIGKILL grace): a worker whose SIGTERM handler
// takes 4 s to save finishes within a 60 s grace, and is SIGKILLed in the middle with 1 s.
TEST(SingleNode, ShutdownTimeoutIsTheGraceBetweenSigtermAndSigkill) {
  const std::string slow_save = "trap 'sleep 4; echo SAVED-$RANK; exit 0' TERM; echo READY-$RANK; "
                                "while :; do sleep 0.1; done";
  for (const char* grace : {"60", "1"}) {
    SCOPED_TRACE(std::string("--shutdown-timeout ") + grace);
    dt::BackgroundProcess launcher;
    ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--shutdown-timeout", grace, "--", "/bin/sh",
                                "-c", slow_save}))
        << launcher.output_so_far();
    ASSERT_TRUE(launcher.wait_for_output("[rank 0] READY-0", seconds(30))) << launcher.output_so_far();
    ASSERT_TRUE(launcher.send_signal(SIGTERM));
    dt::RunResult r = launcher.wait(seconds(90));
    ASSERT_FALSE(r.timed_out) << r.output;
    const bool saved = r.output.find("[rank 0] SAVED-0") != std::string::npos;
    if (std::string(grace) == "60") EXPECT_TRUE(saved) << "the worker was not given its grace:\n" << r.output;
    else EXPECT_FALSE(saved) << "the worker outlived a 1 s grace:\n" << r.output;
  }
}
