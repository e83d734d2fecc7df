// Taking a rank's stacks must never end it: the stack signal goes only to a process that
// catches it now. Real child processes: one that catches it (Python's faulthandler, as the
// shim registers it) and one whose stack file exists but that does not catch it (as a rank
// whose interpreter is shutting down, or that exec'd another program).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/stack_collection.h"
#include "ddplaunch/contract.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;

struct StackDir {
  std::string path;
  StackDir() {
    char pattern[] = "/tmp/ddplaunch-stacks-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~StackDir() { std::filesystem::remove_all(path); }
  std::string file_of(pid_t pid) const { return path + "/" + contract::stack_file_name(pid); }
};

// A child running `argv`; its stdout on a pipe (read until `line` appears, bounded).
struct Child {
  pid_t pid = -1;
  int out = -1;
  explicit Child(std::vector<std::string> argv) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out = fds[0];
  }
  bool says(const std::string& line) {
    std::string seen;
    char c = 0;
    for (int i = 0; i < 4096 && ::read(out, &c, 1) == 1; ++i) {
      seen += c;
      if (seen.find(line) != std::string::npos) return true;
    }
    return false;
  }
  bool alive() const {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) == 0;
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out >= 0) ::close(out);
  }
};

const StackToolLimits kShortWaits{std::chrono::milliseconds(1500), std::chrono::milliseconds(1500)};

TEST(StackCollection, AProcessWhoseStackFileExistsButThatDoesNotCatchTheSignalIsNotEnded) {
  StackDir dir;
  Child sleeper({"/bin/sh", "-c", "echo ready; exec sleep 60"});
  ASSERT_GT(sleeper.pid, 0);
  ASSERT_TRUE(sleeper.says("ready"));
  std::ofstream(dir.file_of(sleeper.pid)) << "";  // registered once, as a shim would have
  std::this_thread::sleep_for(100ms);             // the exec into sleep is done
  const auto stacks = collect_stacks({{0, sleeper.pid}}, dir.path, kShortWaits);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_NE(stacks[0].source, "python");
  EXPECT_TRUE(sleeper.alive()) << "the stack signal ended a process that does not catch it";
}

TEST(StackCollection, APythonRankThatCatchesTheSignalGivesItsFramesAndLivesOn) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  StackDir dir;
  const int stack_signal = SIGRTMIN + contract::kStackSignalAboveRtMin;
  const std::string script =
      "import faulthandler, os, sys, time\n"
      "f = open(os.path.join(sys.argv[1], 'stack-%d.txt' % os.getpid()), 'w')\n"
      "faulthandler.register(" + std::to_string(stack_signal) + ", file=f, all_threads=True, chain=False)\n"
      "def waiting_for_the_test():\n"
      "    print('ready', flush=True)\n"  // said from inside the frame the stack must show
      "    time.sleep(60)\n"
      "waiting_for_the_test()\n";
  Child rank({"/usr/bin/python3", "-c", script, dir.path});
  ASSERT_GT(rank.pid, 0);
  ASSERT_TRUE(rank.says("ready"));
  const auto stacks = collect_stacks({{3, rank.pid}}, dir.path, kShortWaits);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0].rank, 3);
  EXPECT_EQ(stacks[0].source, "python");
  EXPECT_NE(stacks[0].text.find("waiting_for_the_test"), std::string::npos) << stacks[0].text;
  EXPECT_TRUE(rank.alive());
}

}  // namespace
}  // namespace ddplaunch
