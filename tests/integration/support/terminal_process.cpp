// TerminalProcess: forkpty, a reader thread, typed bytes.
#include "terminal_process.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace ddplaunch::testing {

bool TerminalProcess::start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                            const std::vector<std::string>& unset_env) {
  if (pid_ > 0 || argv.empty()) return false;
  winsize size{};
  size.ws_row = 50;
  size.ws_col = 200;
  int fd = -1;
  const pid_t pid = ::forkpty(&fd, nullptr, nullptr, &size);
  if (pid < 0) return false;
  if (pid == 0) {
    for (const auto& name : unset_env) ::unsetenv(name.c_str());
    for (const auto& [k, v] : extra_env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    _exit(127);
  }
  pid_ = pid;
  master_fd_ = fd;
  reader_ = std::thread([this] { read_output(); });
  return true;
}

TerminalProcess::~TerminalProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (master_fd_ >= 0) ::close(master_fd_);  // the reader's poll sees it (bounded by its timeout)
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  if (reader_.joinable()) reader_.join();
}

void TerminalProcess::read_output() {
  char buffer[4096];
  for (int idle_rounds = 0;;) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) break;
    }
    pollfd p{master_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready == 0) {
      if (reaped_ && ++idle_rounds > 5) break;  // the child is gone and nothing more comes
      continue;
    }
    const ssize_t n = ready > 0 ? ::read(master_fd_, buffer, sizeof buffer) : -1;
    if (n <= 0) break;  // EIO once every holder of the terminal is gone
    std::lock_guard lock(mutex_);
    output_.append(buffer, static_cast<std::size_t>(n));
    changed_.notify_all();
  }
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

std::string TerminalProcess::output() const {
  std::lock_guard lock(mutex_);
  return output_;
}

std::size_t TerminalProcess::output_size() const {
  std::lock_guard lock(mutex_);
  return output_.size();
}

bool TerminalProcess::wait_for_output(const std::string& substring, std::chrono::milliseconds timeout,
                                      std::size_t from) const {
  std::unique_lock lock(mutex_);
  const auto found = [&] { return output_.size() > from && output_.find(substring, from) != std::string::npos; };
  changed_.wait_for(lock, timeout, [&] { return found() || closed_; });
  return found();
}

void TerminalProcess::type(const std::string& bytes) const {
  if (master_fd_ >= 0) (void)!::write(master_fd_, bytes.data(), bytes.size());
}

RunResult TerminalProcess::wait(std::chrono::milliseconds timeout) {
  if (reaped_) return final_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      RunResult r;
      r.timed_out = true;
      r.output = output();
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  reaped_ = true;
  final_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  final_.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(700), [&] { return closed_; });
  }
  final_.output = output();
  return final_;
}

}  // namespace ddplaunch::testing
