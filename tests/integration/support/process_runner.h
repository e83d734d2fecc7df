// Process running for integration tests: run a command to completion with a hard timeout, or
// keep one running in the background while its merged stdout+stderr is collected.
// Every child runs in its own process group and is killed as a group; no call waits unbounded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ddplaunch::testing {

// How a child ended. exit_code is -1 when it did not exit normally (signal or timeout);
// term_signal is 0 unless a signal ended it. A program that could not be executed exits 127
// with the reason in output (as a shell does).
struct RunResult {
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;
  std::string output;  // stdout and stderr merged, in the order written
  double seconds = 0.0;
};

// Runs argv (PATH lookup via execvp rules) with stdin from /dev/null and waits at most `timeout`.
// On timeout the child's whole process group gets SIGKILL and timed_out is set.
// extra_env adds/overrides variables; unset_env removes them (applied before extra_env).
// Processes the child leaves behind in its process group are killed when it returns.
RunResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::map<std::string, std::string>& extra_env = {},
                      const std::vector<std::string>& unset_env = {});

// A child kept running while a test talks to it. Output is read by a thread of its own.
// The destructor SIGKILLs the process group and reaps the child.
class BackgroundProcess {
 public:
  BackgroundProcess() = default;
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // False (with the reason in output_so_far()) when already started or fork/pipe failed.
  // A program that cannot be executed starts fine and exits 127.
  bool start(const std::vector<std::string>& argv,
             const std::map<std::string, std::string>& extra_env = {},
             const std::vector<std::string>& unset_env = {});

  pid_t pid() const { return pid_; }  // -1 before start
  std::string output_so_far() const;
  // True once `substring` appears in the output; false at the deadline or when output ended without it.
  bool wait_for_output(const std::string& substring, std::chrono::milliseconds timeout) const;
  bool send_signal(int sig) const;        // to the child only; false if not running
  bool send_signal_group(int sig) const;  // to its whole process group
  // Waits at most `timeout` for the child to exit and reaps it. On timeout the child is left
  // running (timed_out = true, exit_code = -1): kill it, or let the destructor do so.
  // After the exit, output is collected until end-of-file or 500 ms more, whichever is first.
  RunResult wait(std::chrono::milliseconds timeout);

 private:
  void read_output();  // reader thread body

  pid_t pid_ = -1;
  bool reaped_ = false;
  RunResult final_;
  std::chrono::steady_clock::time_point started_;
  int output_fd_ = -1;
  std::thread reader_;
  bool stop_reader_ = false;  // guarded by mutex_
  bool output_ended_ = false;  // guarded by mutex_
  std::string output_;        // guarded by mutex_
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
};

// True while pid exists and is not a zombie (an exited child not yet reaped counts as gone).
bool process_alive(pid_t pid);
// Polls every 20 ms until pid is gone (see process_alive); false if still alive at the deadline.
bool wait_until_gone(pid_t pid, std::chrono::milliseconds timeout);

// A TCP port free on every address right now and reserved for this test process until it exits:
// from 20000-28999 (below the kernel's ephemeral range, so no other process is handed it by
// bind(0) or connect), with an flock per port in /tmp/ddplaunch-test-ports so that tests
// running in parallel (ctest -j) never share one. -1 when none is free.
int free_tcp_port();

// Kills, when it goes out of scope, every process of `pids` still alive whose command line
// contains one of `names` (pids get reused): a failed test must not leave processes behind.
struct StrayKiller {
  explicit StrayKiller(std::vector<std::string> names) : names(std::move(names)) {}
  ~StrayKiller();
  StrayKiller(const StrayKiller&) = delete;
  StrayKiller& operator=(const StrayKiller&) = delete;
  std::vector<pid_t> pids;
  std::vector<std::string> names;
};

// Creates a new unique directory /tmp/<prefix>XXXXXX and returns its path.
// Throws std::runtime_error (a failed test, with the reason) if it cannot.
std::string temp_dir(const std::string& prefix);

}  // namespace ddplaunch::testing
