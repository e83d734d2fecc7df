// BackgroundProcess: a child that keeps running while a test talks to it. A reader thread appends
// its merged output under a mutex; the test thread signals, waits for text, or waits for the exit.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "child_spawn.h"
#include "process_runner.h"

namespace ddplaunch::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kOutputGrace{500};  // see run_command: a grandchild may hold the pipe

}  // namespace

bool BackgroundProcess::start(const std::vector<std::string>& argv,
                              const std::map<std::string, std::string>& extra_env,
                              const std::vector<std::string>& unset_env) {
  if (pid_ != -1) {
    std::lock_guard lock(mutex_);
    output_ += "\nBackgroundProcess::start: already started (pid " + std::to_string(pid_) +
               "); use a new BackgroundProcess per process\n";
    return false;
  }
  detail::SpawnedChild child = detail::spawn_child(argv, extra_env, unset_env);
  if (child.pid < 0) {
    std::lock_guard lock(mutex_);
    output_ = "BackgroundProcess::start: " + child.error;
    output_ended_ = true;
    return false;
  }
  pid_ = child.pid;
  output_fd_ = child.output_fd;
  started_ = Clock::now();
  reader_ = std::thread(&BackgroundProcess::read_output, this);
  return true;
}

void BackgroundProcess::read_output() {
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stop_reader_) break;
    }
    // Wake every 50 ms to notice stop_reader_ even if a stray process keeps the pipe open.
    pollfd pfd{output_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) continue;
    std::string chunk;
    bool still_open = detail::drain_available(output_fd_, chunk);
    {
      std::lock_guard lock(mutex_);
      output_ += chunk;
      if (!still_open) output_ended_ = true;
    }
    changed_.notify_all();
    if (!still_open) break;
  }
  {
    std::lock_guard lock(mutex_);
    output_ended_ = true;
  }
  changed_.notify_all();
}

std::string BackgroundProcess::output_so_far() const {
  std::lock_guard lock(mutex_);
  return output_;
}

bool BackgroundProcess::wait_for_output(const std::string& substring, milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return output_.find(substring) != std::string::npos || output_ended_;
  });
  return output_.find(substring) != std::string::npos;
}

bool BackgroundProcess::send_signal(int sig) const {
  if (pid_ <= 0 || reaped_) return false;
  return ::kill(pid_, sig) == 0;
}

bool BackgroundProcess::send_signal_group(int sig) const {
  if (pid_ <= 0) return false;
  return ::kill(-pid_, sig) == 0;
}

RunResult BackgroundProcess::wait(milliseconds timeout) {
  if (pid_ <= 0) {
    RunResult never_started;
    never_started.output = output_so_far();
    return never_started;
  }
  if (!reaped_) {
    const auto deadline = Clock::now() + timeout;
    int status = 0;
    while (true) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0 && errno != EINTR) break;  // not our child any more: nothing to wait for
      if (Clock::now() >= deadline) {
        RunResult still_running;
        still_running.timed_out = true;
        still_running.output = output_so_far();
        still_running.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
        return still_running;
      }
      ::usleep(5 * 1000);
    }
    reaped_ = true;
    final_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    detail::set_exit_status(final_, status);
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, kOutputGrace, [&] { return output_ended_; });
  }
  final_.output = output_so_far();
  return final_;
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    if (!reaped_) {
      int status = 0;
      for (int i = 0; i < 1000; ++i) {  // retries only on EINTR
        if (::waitpid(pid_, &status, 0) == pid_ || errno != EINTR) break;
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    stop_reader_ = true;
  }
  if (reader_.joinable()) reader_.join();
  if (output_fd_ >= 0) ::close(output_fd_);
}

}  // namespace ddplaunch::testing
