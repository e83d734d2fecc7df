// run_command and the small process/port/directory probes of the test support library.
// BackgroundProcess lives in background_process.cpp; fork+exec in child_spawn.cpp.
#include "process_runner.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "child_spawn.h"

namespace ddplaunch::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After the child exits, wait this long at most for end-of-file on its output: a grandchild
// outside the process group may hold the pipe open forever.
constexpr milliseconds kOutputGrace{500};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void reap_blocking(pid_t pid, int& status) {
  for (int i = 0; i < 1000; ++i) {  // retries only on EINTR
    if (::waitpid(pid, &status, 0) == pid || errno != EINTR) return;
  }
}

}  // namespace

RunResult run_command(const std::vector<std::string>& argv, milliseconds timeout,
                      const std::map<std::string, std::string>& extra_env,
                      const std::vector<std::string>& unset_env) {
  RunResult result;
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  detail::SpawnedChild child = detail::spawn_child(argv, extra_env, unset_env);
  if (child.pid < 0) {
    result.output = child.error;
    result.seconds = seconds_since(start);
    return result;
  }

  bool output_ended = false;
  bool exited = false;
  int status = 0;
  Clock::time_point exited_at;
  while (true) {
    if (!exited) {
      pid_t r = ::waitpid(child.pid, &status, WNOHANG);
      // ECHILD: someone else in this process reaped it (a SIGCHLD handler); the status is lost.
      if (r == child.pid || (r < 0 && errno == ECHILD)) {
        exited = true;
        exited_at = Clock::now();
        if (r < 0) status = -1;
      }
    }
    const auto now = Clock::now();
    if (exited && (output_ended || now - exited_at >= kOutputGrace)) break;
    if (!exited && now >= deadline) {
      ::kill(-child.pid, SIGKILL);
      reap_blocking(child.pid, status);
      result.timed_out = true;
      if (!output_ended) detail::drain_available(child.output_fd, result.output);
      break;
    }
    // Wake at least every 20 ms to notice the exit even while a grandchild keeps the pipe open.
    auto wait_ms = std::clamp<long long>(
        std::chrono::duration_cast<milliseconds>((exited ? exited_at + kOutputGrace : deadline) - now).count(),
        1, 20);
    if (output_ended) {
      ::usleep(static_cast<useconds_t>(wait_ms * 1000));
      continue;
    }
    pollfd pfd{child.output_fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(wait_ms));
    if (ready > 0) output_ended = !detail::drain_available(child.output_fd, result.output);
  }
  // Whatever the child left behind in its process group goes with it.
  ::kill(-child.pid, SIGKILL);
  ::close(child.output_fd);
  if (!result.timed_out) detail::set_exit_status(result, status);
  result.seconds = seconds_since(start);
  return result;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;  // vanished between the two checks
  // Format: "pid (comm) S ..."; comm may contain spaces and parentheses, so find the last ')'.
  auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= line.size()) return false;
  char state = line[close_paren + 2];
  return state != 'Z' && state != 'X';
}

bool wait_until_gone(pid_t pid, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (process_alive(pid)) {
    if (Clock::now() >= deadline) return false;
    ::usleep(20 * 1000);
  }
  return true;
}

StrayKiller::~StrayKiller() {
  for (pid_t pid : pids) {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    for (const auto& name : names)
      if (process_alive(pid) && text.find(name) != std::string::npos) {
        ::kill(pid, SIGKILL);
        break;
      }
  }
}

int free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string temp_dir(const std::string& prefix) {
  std::string safe = prefix.empty() ? "ddplaunch-test-" : prefix;
  std::replace(safe.begin(), safe.end(), '/', '_');
  std::string pattern = "/tmp/" + safe + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("temp_dir: cannot create " + pattern + ": " + std::strerror(errno) +
                             " (is /tmp writable and not full?)");
  }
  return pattern;
}

}  // namespace ddplaunch::testing
