// A terminal nobody reads must not stop the job: the launcher's stdout and stderr are a pipe
// whose reader stops (what `ddplaunch ... | less` at a full screen, Ctrl-S or a `tee` on a hung
// file system do). The master keeps its heartbeats and the job ends right; what did not fit
// while nobody read is counted and said once the reader is back, and the rank log files keep
// every line. Real launchers, real workers, real sockets.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "child_spawn.h"
#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"
#include "terminal_process.h"

namespace {

using namespace std::chrono_literals;
namespace dt = ddplaunch::testing;

// Reads `fd` until end of file or `bound`, waiting for `pid` meanwhile; the exit code, or -1.
int read_to_end_and_reap(pid_t pid, int fd, std::string& out, std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  bool open = true;
  int status = -1;
  bool reaped = false;
  for (int round = 0; round < 100000 && std::chrono::steady_clock::now() < until && (open || !reaped); ++round) {
    pollfd p{fd, POLLIN, 0};
    if (open) ::poll(&p, 1, 50);
    else std::this_thread::sleep_for(20ms);
    if (open) open = dt::detail::drain_available(fd, out);
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) reaped = true;
  }
  if (!reaped) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(StalledTerminal, AMasterWhoseOutputNobodyReadsKeepsTheJobAlive) {
  const std::string log_dir = dt::temp_dir("ddplaunch-stalled-");
  // A million lines at once (25 MB: far more than a pipe or the launcher's queue holds), a mark
  // once the launcher took them all (the worker blocks on its pipe until then), then 5 s.
  const std::string printed = log_dir + "/printed-";
  const std::vector<std::string> program{
      "/bin/sh", "-c", "seq 1 1000000; touch " + printed + "$RANK; sleep 5; echo FINISHED-$RANK"};
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "stalled-terminal",
                                              {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--log-dir",
                                               log_dir, "--shim", "none"});
  dt::detail::SpawnedChild master = dt::detail::spawn_child(dt::node_argv(job, 0, 1, {}, program), {}, {});
  ASSERT_GE(master.pid, 0) << master.error;
  auto node1 = dt::start_node(dt::node_argv(job, 1, 1, {}, program));
  // Nobody reads the master's output until its worker printed everything, and for 4 s at least
  // (twice the heartbeat timeout); 600 x 100 ms at most.
  const auto stalled_since = std::chrono::steady_clock::now();
  for (int i = 0; i < 600 && !std::filesystem::exists(printed + "0"); ++i) std::this_thread::sleep_for(100ms);
  std::this_thread::sleep_until(stalled_since + 4s);
  std::string master_output;
  const int master_exit = read_to_end_and_reap(master.pid, master.output_fd, master_output, 90s);
  ::close(master.output_fd);
  dt::RunResult node1_result = node1->wait(60s);
  const std::string tail = master_output.size() > 6000 ? master_output.substr(master_output.size() - 6000) : master_output;
  EXPECT_EQ(master_exit, 0) << tail;
  EXPECT_EQ(node1_result.exit_code, 0) << node1_result.output.substr(0, 4000);
  EXPECT_EQ(node1_result.output.find("lost the master"), std::string::npos) << node1_result.output.substr(0, 4000);
  EXPECT_NE(master_output.find("FINISHED-0"), std::string::npos) << tail;
  EXPECT_NE(master_output.find("was not read for a while"), std::string::npos) << tail;
  EXPECT_NE(master_output.find("--log-dir keeps every line"), std::string::npos) << tail;
  // The rank's log file has every line, the terminal did not.
  std::ifstream log(log_dir + "/rank_0.log");
  std::string line, last_number;
  int lines = 0;
  for (; std::getline(log, line) && lines < 2000000;) {
    if (line == "1000000") last_number = line;
    ++lines;
  }
  EXPECT_EQ(last_number, "1000000");
  EXPECT_GE(lines, 1000000);
  EXPECT_LT(dt::count_of(master_output, "\n"), 1000000) << "nothing was dropped: the reader never stalled?";
  std::filesystem::remove_all(log_dir);
}

// The master runs on a terminal and someone presses Ctrl-S (the terminal stops taking output)
// for 5 s, well past the heartbeat timeout, while the workers print: the job goes on and ends
// right once Ctrl-Q lets the output flow (before: the master blocked writing, node 1 lost it).
TEST(StalledTerminal, CtrlSOnTheMastersTerminalDoesNotStopTheJob) {
  const std::vector<std::string> program{"/bin/sh", "-c", "seq 1 200000; sleep 6; echo FINISHED-$RANK"};
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "stalled-tty",
                                              {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--shim",
                                               "none"});
  dt::TerminalProcess master;
  ASSERT_TRUE(master.start(dt::node_argv(job, 0, 1, {}, program)));
  master.type("\x13");  // Ctrl-S; node 1 retries until node 0 listens (its output is held by then)
  auto node1 = dt::start_node(dt::node_argv(job, 1, 1, {}, program));
  std::this_thread::sleep_for(1s);
  const std::size_t held_at = master.output_size();
  std::this_thread::sleep_for(4s);
  // The terminal really held the output (a writer on it would have blocked all this time).
  EXPECT_LT(master.output_size(), held_at + 8192) << "Ctrl-S did not stop the terminal's output";
  master.type("\x11");  // Ctrl-Q
  dt::RunResult master_result = master.wait(90s);
  dt::RunResult node1_result = node1->wait(60s);
  const std::string tail = master_result.output.size() > 4000
                               ? master_result.output.substr(master_result.output.size() - 4000)
                               : master_result.output;
  EXPECT_EQ(master_result.exit_code, 0) << tail;
  EXPECT_EQ(node1_result.exit_code, 0) << node1_result.output.substr(0, 4000);
  EXPECT_EQ(node1_result.output.find("lost the master"), std::string::npos) << node1_result.output.substr(0, 4000);
  EXPECT_NE(master_result.output.find("FINISHED-0"), std::string::npos) << tail;
}

}  // namespace
