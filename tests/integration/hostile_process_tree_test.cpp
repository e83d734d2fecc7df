// Hostile workers against the real launcher: descriptors a worker must not inherit,
// descendants that leave their process group (setsid, setpgid, double fork, a cleared
// environment) and must still not outlive a job end, Ctrl-C, SIGTERM, a group restart or
// a SIGKILLed launcher; the launcher's temporary folder after SIGKILL; a low descriptor
// limit; a log directory replaced by a symlink.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto kRunLimit = 120s;
constexpr auto kGoneBound = 10s;  // a swept process is gone well within this, even on a busy machine

// The hostile worker (its modes are described at its top).
const std::string kWorkerScript = std::string(SOURCE_DIR) + "/tests/integration/support/hostile_tree_worker.py";
std::string value_after(const std::string& output, const std::string& key) {
  auto at = output.find(key + "=");
  if (at == std::string::npos) return {};
  at += key.size() + 1;
  return output.substr(at, output.find('\n', at) - at);
}

// True when a listener can bind 127.0.0.1:port right now (as the next master would).
bool port_is_free(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return ok;
}

std::vector<std::string> launcher_argv(int port, const std::vector<std::string>& flags,
                                       const std::vector<std::string>& program) {
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--nodes", "1", "--node-rank", "0", "--master",
                                "127.0.0.1:" + std::to_string(port), "--nproc-per-node", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

}  // namespace

TEST(HostileProcessTree, WorkersAndTheirChildrenInheritOnlyStdioAndTheRendezvousPortIsFreedAtOnce) {
  const std::string& script = kWorkerScript;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  dt::StrayKiller strays({"hostile_tree_worker", "sleep"});
  dt::RunResult r = dt::run_command(launcher_argv(port, {}, {PYTHON_WITH_TORCH, script, "fds"}), kRunLimit);
  strays.pids = dt::pids_after(r.output, "ESCAPED_PID");
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Nothing but stdin, stdout and stderr: no rendezvous socket, status socket, log file or
  // launcher pipe, in the worker or in a program it executes.
  EXPECT_EQ(value_after(r.output, "WORKER_FDS"), "0,1,2") << r.output;
  EXPECT_EQ(value_after(r.output, "GRANDCHILD_FDS"), "0,1,2") << r.output;
  EXPECT_TRUE(port_is_free(port)) << "the rendezvous port " << port << " is still held after the job\n" << r.output;
  ASSERT_EQ(strays.pids.size(), 1u) << r.output;
  EXPECT_TRUE(dt::wait_until_gone(strays.pids[0], kGoneBound)) << "the escaped grandchild survived the job";
}

// How the job is ended while four escapees run.
enum class Ending { NormalEnd, CtrlC, Sigterm, GroupRestart, LauncherSigkilled };

class EscapedDescendants : public ::testing::TestWithParam<Ending> {};

TEST_P(EscapedDescendants, NoneRemains) {
  const Ending ending = GetParam();
  const std::string& script = kWorkerScript;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  const std::string after = ending == Ending::NormalEnd      ? "exit0"
                            : ending == Ending::GroupRestart ? "fail_gen0"
                                                             : "hang";
  dt::BackgroundProcess launcher;
  dt::StrayKiller strays({"hostile_tree_worker", "sleep"});
  ASSERT_TRUE(launcher.start(
      launcher_argv(port, {"--max-restarts", "1", "--grace", "2"}, {PYTHON_WITH_TORCH, script, "escape", after})))
      << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("ESCAPEES_READY gen=0", 60s)) << launcher.output_so_far();
  std::string seen = launcher.output_so_far();
  std::vector<pid_t> tagged = dt::pids_after(seen, "ESCAPED_PID");
  std::vector<pid_t> untagged = dt::pids_after(seen, "UNTAGGED_PID");
  strays.pids = tagged;
  strays.pids.insert(strays.pids.end(), untagged.begin(), untagged.end());
  ASSERT_EQ(tagged.size(), 3u) << seen;
  ASSERT_EQ(untagged.size(), 1u) << seen;

  dt::RunResult r;
  switch (ending) {
    case Ending::NormalEnd:
      r = launcher.wait(kRunLimit);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      break;
    case Ending::CtrlC:
      ASSERT_TRUE(launcher.send_signal(SIGINT));
      r = launcher.wait(30s);
      EXPECT_EQ(r.exit_code, 130) << r.output;
      break;
    case Ending::Sigterm:
      ASSERT_TRUE(launcher.send_signal(SIGTERM));
      r = launcher.wait(30s);
      EXPECT_NE(r.exit_code, 0) << r.output;
      break;
    case Ending::GroupRestart:
      // Generation 0's escapees must be gone while generation 1 still runs.
      ASSERT_TRUE(launcher.wait_for_output("ESCAPEES_READY gen=1", 60s)) << launcher.output_so_far();
      for (pid_t pid : tagged)
        EXPECT_TRUE(dt::wait_until_gone(pid, kGoneBound)) << "pid " << pid << " survived the restart";
      for (pid_t pid : untagged)
        EXPECT_TRUE(dt::wait_until_gone(pid, kGoneBound)) << "untagged pid " << pid << " survived the restart";
      seen = launcher.output_so_far();
      for (pid_t pid : dt::pids_after(seen, "ESCAPED_PID")) strays.pids.push_back(pid);
      for (pid_t pid : dt::pids_after(seen, "UNTAGGED_PID")) strays.pids.push_back(pid);
      tagged = dt::pids_after(seen, "ESCAPED_PID");  // both generations'
      untagged = dt::pids_after(seen, "UNTAGGED_PID");
      ASSERT_TRUE(launcher.send_signal(SIGTERM));
      r = launcher.wait(30s);
      break;
    case Ending::LauncherSigkilled:
      ASSERT_TRUE(launcher.send_signal(SIGKILL));  // the launcher only, not its process group
      r = launcher.wait(30s);
      EXPECT_EQ(r.term_signal, SIGKILL);
      break;
  }
  ASSERT_FALSE(r.timed_out) << r.output;
  for (pid_t pid : tagged) EXPECT_TRUE(dt::wait_until_gone(pid, kGoneBound)) << "pid " << pid << " survived\n" << r.output;
  // Without the tag only the subreaper tree finds a process, and that dies with the launcher:
  // after a SIGKILL such a process is out of reach (docs/ARCHITECTURE.md says so).
  if (ending != Ending::LauncherSigkilled) {
    for (pid_t pid : untagged)
      EXPECT_TRUE(dt::wait_until_gone(pid, kGoneBound)) << "untagged pid " << pid << " survived\n" << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(HostileProcessTree, EscapedDescendants,
                         ::testing::Values(Ending::NormalEnd, Ending::CtrlC, Ending::Sigterm, Ending::GroupRestart,
                                           Ending::LauncherSigkilled),
                         [](const ::testing::TestParamInfo<Ending>& info) {
                           switch (info.param) {
                             case Ending::NormalEnd: return std::string("NormalEnd");
                             case Ending::CtrlC: return std::string("CtrlC");
                             case Ending::Sigterm: return std::string("Sigterm");
                             case Ending::GroupRestart: return std::string("GroupRestart");
                             case Ending::LauncherSigkilled: return std::string("LauncherSigkilled");
                           }
                           return std::string("Unknown");
                         });

TEST(HostileProcessTree, KilledLauncherLeavesNoTempFolder) {
  const std::string& script = kWorkerScript;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  dt::BackgroundProcess launcher;
  dt::StrayKiller strays({"hostile_tree_worker", "sleep"});
  ASSERT_TRUE(launcher.start(launcher_argv(port, {}, {PYTHON_WITH_TORCH, script, "escape", "hang"})))
      << launcher.output_so_far();
  ASSERT_TRUE(launcher.wait_for_output("ESCAPEES_READY gen=0", 60s)) << launcher.output_so_far();
  const std::string seen = launcher.output_so_far();
  strays.pids = dt::pids_after(seen, "ESCAPED_PID");
  for (pid_t pid : dt::pids_after(seen, "UNTAGGED_PID")) strays.pids.push_back(pid);
  const std::string status_dir = value_after(seen, "STATUS_DIR");
  ASSERT_NE(status_dir.find("ddplaunch-"), std::string::npos) << seen;
  ASSERT_TRUE(fs::is_directory(status_dir)) << status_dir;

  ASSERT_TRUE(launcher.send_signal(SIGKILL));
  dt::RunResult r = launcher.wait(30s);
  ASSERT_FALSE(r.timed_out);
  bool removed = false;
  for (int i = 0; i < 500 && !removed; ++i) {  // bounded: 500 × 20 ms
    removed = !fs::exists(status_dir);
    if (!removed) ::usleep(20 * 1000);
  }
  EXPECT_TRUE(removed) << status_dir << " left behind by a SIGKILLed launcher";
}

TEST(HostileProcessTree, SoftDescriptorLimitIsRaisedToTheHardOne) {
  const std::string& script = kWorkerScript;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  std::vector<std::string> argv{"/usr/bin/prlimit", "--nofile=512:4096"};
  for (const auto& arg : launcher_argv(port, {}, {PYTHON_WITH_TORCH, script, "limits"})) argv.push_back(arg);
  dt::RunResult r = dt::run_command(argv, kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("NOFILE soft=4096 hard=4096"), std::string::npos) << r.output;
}

TEST(HostileProcessTree, SpawnOutOfDescriptorsIsNamedAndRestarted) {
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  // Enough descriptors for the launcher and its rendezvous, not for 16 workers' pipes.
  std::vector<std::string> argv{"/usr/bin/prlimit", "--nofile=32:32"};
  for (const auto& arg : launcher_argv(port, {"--nproc-per-node", "16"}, {"/bin/true"})) argv.push_back(arg);
  dt::RunResult r = dt::run_command(argv, kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("out of file descriptors (EMFILE)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("program path or permissions are wrong"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("restarting the whole group"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not restartable"), std::string::npos) << r.output;
}

TEST(HostileProcessTree, LogDirThatIsASymlinkIsRefused) {
  const std::string dir = dt::temp_dir("hostile-logdir-");
  const std::string victim = dir + "/victim";
  fs::create_directories(victim);
  const std::string link = dir + "/logs";
  fs::create_directory_symlink(victim, link);
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  dt::RunResult r = dt::run_command(launcher_argv(port, {"--log-dir", link}, {"/bin/echo", "hello"}), kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.output.find("refusing log directory '" + link + "'"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(victim)) << "wrote through the planted symlink\n" << r.output;
}

TEST(HostileProcessTree, LogFileThatIsASymlinkIsRefused) {
  const std::string dir = dt::temp_dir("hostile-logfile-");
  const std::string logs = dir + "/logs";
  fs::create_directories(logs);
  const std::string victim = dir + "/victim.txt";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, logs + "/rank_0.log");
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  dt::RunResult r = dt::run_command(launcher_argv(port, {"--log-dir", logs}, {"/bin/echo", "hello"}), kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.output.find("refusing log file '" + logs + "/rank_0.log'"), std::string::npos) << r.output;
  std::ifstream in(victim);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "precious\n") << r.output;
}

// A FIFO planted as a rank's log file (no reader, or a reader that never reads) blocked the
// launcher's one loop; it is refused like a symlink, and the job still runs and ends.
TEST(HostileProcessTree, LogFileThatIsAFifoIsRefusedWithoutBlocking) {
  const std::string dir = dt::temp_dir("hostile-logfifo-");
  const std::string logs = dir + "/logs";
  fs::create_directories(logs);
  ASSERT_EQ(::mkfifo((logs + "/rank_0.log").c_str(), 0600), 0);
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  dt::RunResult r = dt::run_command(launcher_argv(port, {"--log-dir", logs}, {"/bin/echo", "hello"}), kRunLimit);
  ASSERT_FALSE(r.timed_out) << "blocked on the FIFO\n" << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("refusing log file '" + logs + "/rank_0.log': it is not a regular file"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("hello"), std::string::npos) << "the worker's output was lost\n" << r.output;
}

// Any process of the user can write to the status socket, so a report for one rank may come
// from another. Rank 1 forges "rank 0's init failed": the launcher names the foreign sender
// and the job succeeds.
TEST(HostileProcessTree, AStatusReportForgedByAnotherRankIsIgnored) {
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/support/hostile_forged_report.py";
  dt::RunResult r =
      dt::run_command(launcher_argv(port, {"--nproc-per-node", "2"}, {"/usr/bin/python3", script}), kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_NE(r.output.find("FORGED"), std::string::npos) << "the forging rank did not run\n" << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ignored a status report for rank 0 from pid"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("forged by rank 1"), std::string::npos) << "the forged detail was believed\n" << r.output;
}
