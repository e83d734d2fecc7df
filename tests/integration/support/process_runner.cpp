// run_command and the small process/port/directory probes of the test support library.
// BackgroundProcess lives in background_process.cpp; fork+exec in child_spawn.cpp.
#include "process_runner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
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

namespace {

// Ports handed to tests come from here: below the kernel's ephemeral range (32768-60999 by
// default), so no bind(0) and no outgoing connection of another process takes one, and away
// from the well-known 29400/29500 that people's own jobs use.
constexpr int kTestPortFirst = 20000;
constexpr int kTestPortCount = 9000;  // 20000-28999
constexpr const char* kPortLockDir = "/tmp/ddplaunch-test-ports";

// True when nobody holds port on any address (IPv4, and IPv6 where there is IPv6): a bind
// without SO_REUSEADDR fails on a listener and on connections still in TIME_WAIT.
bool port_unused(int port) {
  int fd4 = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd4 < 0) return false;
  sockaddr_in a4{};
  a4.sin_family = AF_INET;
  a4.sin_addr.s_addr = htonl(INADDR_ANY);
  a4.sin_port = htons(static_cast<uint16_t>(port));
  bool unused = ::bind(fd4, reinterpret_cast<sockaddr*>(&a4), sizeof a4) == 0;
  ::close(fd4);
  int fd6 = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (unused && fd6 >= 0) {
    int one = 1;
    ::setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons(static_cast<uint16_t>(port));
    unused = ::bind(fd6, reinterpret_cast<sockaddr*>(&a6), sizeof a6) == 0 || errno == EADDRNOTAVAIL;
  }
  if (fd6 >= 0) ::close(fd6);
  return unused;
}

int open_port_lock(int port) {
  ::mkdir(kPortLockDir, 01777);
  const std::string path = std::string(kPortLockDir) + "/" + std::to_string(port);
  return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
}

}  // namespace

int free_tcp_port() {
  // Tests run in parallel (ctest -j): each port is reserved by an flock on its own file,
  // held until this process exits (the descriptor is deliberately never closed), so two
  // test processes never get the same port and this one never gets a port twice.
  static std::mutex mutex;
  std::lock_guard<std::mutex> guard(mutex);
  static unsigned next = static_cast<unsigned>(::getpid()) * 7919u +
                         static_cast<unsigned>(Clock::now().time_since_epoch().count() % 100003);
  for (int tries = 0; tries < 500; ++tries) {  // bounded; each try costs a few syscalls
    const int port = kTestPortFirst + static_cast<int>(next++ % kTestPortCount);
    int fd = open_port_lock(port);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // another test process holds it
      ::close(fd);
      continue;
    }
    if (!port_unused(port)) {  // something outside the test suite uses it
      ::close(fd);
      continue;
    }
    return port;  // fd stays open: the reservation lasts as long as this process
  }
  return -1;
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
