// A child on a real pseudo-terminal, for tests of what a person at a terminal does: the
// debug console's prompt, its raw-mode keys, line editing. The test types bytes (Enter is
// "\r", arrows are their escape sequences) and reads the screen's bytes as written.
// The child leads its own session (the terminal is its controlling one); the destructor
// SIGKILLs its process group and reaps it. No call waits unbounded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

class TerminalProcess {
 public:
  TerminalProcess() = default;
  ~TerminalProcess();
  TerminalProcess(const TerminalProcess&) = delete;
  TerminalProcess& operator=(const TerminalProcess&) = delete;

  bool start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env = {},
             const std::vector<std::string>& unset_env = {});
  pid_t pid() const { return pid_; }
  std::string output() const;
  std::size_t output_size() const;
  // True once `substring` appears in the output after byte `from`; false at the deadline or
  // when the terminal closed without it.
  bool wait_for_output(const std::string& substring, std::chrono::milliseconds timeout, std::size_t from = 0) const;
  void type(const std::string& bytes) const;
  // Waits at most `timeout` for the child to exit (timed_out when it did not).
  RunResult wait(std::chrono::milliseconds timeout);

 private:
  void read_output();

  pid_t pid_ = -1;
  int master_fd_ = -1;
  bool reaped_ = false;
  RunResult final_;
  std::thread reader_;
  bool closed_ = false;  // guarded by mutex_
  std::string output_;   // guarded by mutex_
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
};

}  // namespace ddplaunch::testing
