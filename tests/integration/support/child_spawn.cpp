// fork+exec for the test support library. Everything the child needs (argv, envp, messages) is
// built before fork, so the child only calls async-signal-safe functions until exec.
#include "child_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace ddplaunch::testing::detail {
namespace {

std::vector<std::string> build_environment(const std::map<std::string, std::string>& extra_env,
                                           const std::vector<std::string>& unset_env) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    bool drop = std::find(unset_env.begin(), unset_env.end(), key) != unset_env.end() ||
                extra_env.count(key) != 0;
    if (!drop) env.push_back(std::move(entry));
  }
  for (const auto& [key, value] : extra_env) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> as_pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0 && errno != EINTR) return;
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    }
  }
}

// Child side after fork: only async-signal-safe calls, then exec or _exit(127).
[[noreturn]] void become_child(int out_fd, int null_fd, char** argv, char** envp,
                               const std::string& exec_failed_prefix) {
  ::setpgid(0, 0);
  // Signals blocked or ignored by the test process would be inherited across exec.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2}) {
    ::signal(sig, SIG_DFL);
  }
  ::dup2(null_fd, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  ::execvpe(argv[0], argv, envp);
  int err = errno;
  write_all(STDERR_FILENO, exec_failed_prefix.data(), exec_failed_prefix.size());
  const char* reason = (err == ENOENT) ? "no such file or directory (not found on PATH?)\n"
                       : (err == EACCES) ? "permission denied (not executable?)\n"
                                         : "exec error\n";
  write_all(STDERR_FILENO, reason, std::strlen(reason));
  ::_exit(127);
}

}  // namespace

SpawnedChild spawn_child(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& extra_env,
                         const std::vector<std::string>& unset_env) {
  SpawnedChild child;
  if (argv.empty()) {
    child.error = "cannot start a process: the argument list is empty";
    return child;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs = as_pointers(args);
  std::vector<std::string> env = build_environment(extra_env, unset_env);
  std::vector<char*> env_ptrs = as_pointers(env);
  std::string exec_failed_prefix = "run_command: cannot execute '" + argv[0] + "': ";

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    child.error = std::string("pipe2 failed: ") + std::strerror(errno) + " (too many open files?)";
    return child;
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    child.error = std::string("cannot open /dev/null: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return child;
  }

  pid_t pid = ::fork();
  if (pid == 0) become_child(fds[1], null_fd, arg_ptrs.data(), env_ptrs.data(), exec_failed_prefix);
  int fork_errno = errno;
  ::close(fds[1]);
  ::close(null_fd);
  if (pid < 0) {
    ::close(fds[0]);
    child.error = std::string("fork failed: ") + std::strerror(fork_errno);
    return child;
  }
  // Also set the group from the parent, so a kill(-pid) right after fork cannot miss it.
  ::setpgid(pid, pid);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  child.pid = pid;
  child.output_fd = fds[0];
  return child;
}

void set_exit_status(RunResult& result, int wait_status) {
  if (wait_status == -1) return;  // unknown: the child was reaped elsewhere
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
    result.term_signal = 0;
  } else if (WIFSIGNALED(wait_status)) {
    result.exit_code = -1;
    result.term_signal = WTERMSIG(wait_status);
  }
}

bool drain_available(int fd, std::string& out) {
  char buffer[65536];
  for (int i = 0; i < 1024; ++i) {  // bounded: at most 64 MiB per call
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

}  // namespace ddplaunch::testing::detail
