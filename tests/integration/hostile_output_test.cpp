// What a worker printed, and what the launcher knows, never lost without a word. A node whose
// stdout is a pipe nobody reads until the launcher exited (`ddplaunch ... | less` left on its
// first page, a stalled `tee`) still gets every line and the job's verdict, and the launcher's
// exit status does not wait for the reader. A job record folder another user planted is named
// by `ddplaunch status`, not taken for "no job is running". Real launchers, real workers.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "child_spawn.h"
#include "launcher_test_env.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
namespace dt = ddplaunch::testing;
using Clock = std::chrono::steady_clock;

// The exit code of `pid` once it ended within `bound` (its output pipe is not read meanwhile),
// or -1 (then its process group is killed).
int reap_within(pid_t pid, std::chrono::milliseconds bound) {
  const auto until = Clock::now() + bound;
  int status = 0;
  for (int round = 0; round < 100000 && Clock::now() < until; ++round) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(20ms);
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Everything on `fd` until end of file (every writer closed it), or until `bound`.
std::string read_until_closed(int fd, std::chrono::milliseconds bound, bool& closed) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  const auto until = Clock::now() + bound;
  std::string out;
  closed = false;
  for (int round = 0; round < 100000 && !closed && Clock::now() < until; ++round) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 50);
    closed = !dt::detail::drain_available(fd, out);
  }
  return out;
}

// The numbers n of the lines "numbered-line n" in `output`, in order.
std::vector<int> numbered_lines(const std::string& output) {
  std::vector<int> numbers;
  const std::string mark = "numbered-line ";
  for (std::size_t at = output.find(mark); at != std::string::npos; at = output.find(mark, at + 1))
    numbers.push_back(std::atoi(output.c_str() + at + mark.size()));
  return numbers;
}

// A rank prints 4,000 numbered lines (about 110 KB with their prefixes: more than a pipe
// holds) into a pipe the test does not read until the launcher exited. The launcher's exit
// status comes at once; what the reader had not taken follows after it: every line, in order,
// and the job's verdict (before: the queue was dropped 2 s after the end: 539 of 4,000 lines
// reached the reader, without the verdict or a count of what was missing).
TEST(HostileOutput, EveryLineAndTheVerdictReachAReaderThatCameBackAfterTheLauncherExited) {
  const std::string program = "i=1; while [ $i -le 4000 ]; do echo \"numbered-line $i\"; i=$((i+1)); done";
  const auto started = Clock::now();
  dt::detail::SpawnedChild launcher = dt::detail::spawn_child(
      {DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", "1", "--history-file", "off", "--", "/bin/sh", "-c", program},
      {}, dt::kLauncherEnvToUnset);
  ASSERT_GE(launcher.pid, 0) << launcher.error;
  const int exit_code = reap_within(launcher.pid, 90s);
  const double exit_after_s = std::chrono::duration<double>(Clock::now() - started).count();
  bool closed = false;
  const std::string output = read_until_closed(launcher.output_fd, 60s, closed);
  ::close(launcher.output_fd);
  const std::string tail = output.size() > 3000 ? output.substr(output.size() - 3000) : output;

  EXPECT_EQ(exit_code, 0) << tail;
  EXPECT_LT(exit_after_s, 60) << "the launcher's exit waited for the reader";
  EXPECT_TRUE(closed) << "the output did not end within 60 s of the launcher's exit\n" << tail;
  const std::vector<int> numbers = numbered_lines(output);
  EXPECT_EQ(numbers.size(), 4000u) << tail;
  for (std::size_t i = 0; i < numbers.size() && i < 4000; ++i)
    if (numbers[i] != static_cast<int>(i) + 1) {
      ADD_FAILURE() << "line " << i + 1 << " is numbered " << numbers[i] << "\n" << tail;
      break;
    }
  EXPECT_NE(output.find("job succeeded"), std::string::npos) << tail;
  EXPECT_EQ(output.find("were not shown here"), std::string::npos) << tail;
}

// Runs `argv` as user `uid` (its group the same number, no other group).
dt::RunResult run_as(int uid, std::vector<std::string> argv) {
  std::vector<std::string> full{"setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
                                "--clear-groups", "env", "-u", "XDG_RUNTIME_DIR", "HOME=/tmp"};
  full.insert(full.end(), argv.begin(), argv.end());
  return dt::run_command(full, 30s);
}

// Another local user makes the victim's job record folder /tmp/ddplaunch-jobs-<uid> before
// the victim does (or puts a symbolic link there). The victim's `ddplaunch status` names that
// folder, why it was refused and what to do (before: "no ddplaunch job is running on this
// node", as if there were nothing to find).
TEST(HostileOutput, AJobRecordFolderPlantedByAnotherUserIsNamedByStatus) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (runs the attacker and the victim as two other users)";
  const int attacker = 65534;
  const int victim = 20000 + ::getpid() % 10000;  // a user of its own: root's records are not disturbed
  const std::string folder = "/tmp/ddplaunch-jobs-" + std::to_string(victim);
  const std::string elsewhere = "/tmp/ddplaunch-planted-" + std::to_string(::getpid());
  std::filesystem::remove_all(folder);
  std::filesystem::remove_all(elsewhere);

  dt::RunResult planted = run_as(attacker, {"mkdir", "-m", "0755", folder});
  ASSERT_EQ(planted.exit_code, 0) << planted.output;
  dt::RunResult status = run_as(victim, {DDPLAUNCH_BIN, "status"});
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_EQ(status.output.find("no ddplaunch job is running on this node"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("refusing the job record folder " + folder), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("belongs to another user (uid 65534)"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("rm -r " + folder), std::string::npos) << status.output;
  std::filesystem::remove_all(folder);

  ASSERT_EQ(run_as(attacker, {"mkdir", "-m", "0777", elsewhere}).exit_code, 0);
  planted = run_as(attacker, {"ln", "-s", elsewhere, folder});
  ASSERT_EQ(planted.exit_code, 0) << planted.output;
  status = run_as(victim, {DDPLAUNCH_BIN, "status"});
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_EQ(status.output.find("no ddplaunch job is running on this node"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("it is a symbolic link (to '" + elsewhere + "')"), std::string::npos) << status.output;
  std::filesystem::remove(folder);
  std::filesystem::remove_all(elsewhere);
}

}  // namespace
