// /proc walks for the job sweep: the subreaper's own descendants while the launcher lives,
// environment tags of every process only without that tree (the guard, after the launcher
// died), zombie states.
#include "supervise/descendant_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <random>
#include <set>

#include <fmt/format.h>

#include "ddplaunch/contract.h"
#include "supervise/proc_file.h"

namespace ddplaunch {

namespace {

constexpr std::size_t kMaxEnvironBytes = 4 << 20;  // bound on what one process's environment costs us
constexpr int kSweepRounds = 50;
constexpr auto kDeathWait = std::chrono::milliseconds(100);  // per round, for SIGKILLed processes to exit

std::vector<pid_t> numeric_entries(const std::string& dir_path) {
  std::vector<pid_t> out;
  DIR* dir = ::opendir(dir_path.c_str());
  if (!dir) return out;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long value = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && value > 0) out.push_back(static_cast<pid_t>(value));
  }
  ::closedir(dir);
  return out;
}

// Children of every thread of `pid` (orphans reparent to any thread of a subreaper).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  const std::string task_dir = fmt::format("/proc/{}/task", pid);
  for (pid_t tid : numeric_entries(task_dir)) {
    std::string text = read_proc_file(fmt::format("{}/{}/children", task_dir, tid), 1 << 20);
    const char* p = text.c_str();
    char* end = nullptr;
    for (long child = std::strtol(p, &end, 10); end != p; child = std::strtol(p, &end, 10)) {
      out.push_back(static_cast<pid_t>(child));
      p = end;
    }
  }
  return out;
}

// The parent's pid from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold ')').
pid_t parent_of(pid_t pid) {
  std::string stat = read_proc_file(fmt::format("/proc/{}/stat", pid), 4096);
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 4 >= stat.size()) return 0;
  return static_cast<pid_t>(std::strtol(stat.c_str() + paren + 4, nullptr, 10));
}

bool is_zombie_or_gone(pid_t pid) {
  std::string stat = read_proc_file(fmt::format("/proc/{}/stat", pid), 4096);
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

bool carries_tag(pid_t pid, const std::string& entry) {
  std::string environ = read_proc_file(fmt::format("/proc/{}/environ", pid), kMaxEnvironBytes);
  for (std::size_t start = 0; start < environ.size();) {
    std::size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(start, end - start, entry) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Until every one of `pids` has exited (a pidfd polls readable then, Linux 5.3), at most
// kDeathWait; without pidfds, one short sleep as before.
void wait_until_dead(const std::vector<pid_t>& pids) {
  std::vector<pollfd> fds;
  for (pid_t pid : pids)
    if (int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); fd >= 0) fds.push_back({fd, POLLIN, 0});
  if (fds.size() < pids.size()) ::usleep(1000);  // some were gone already, or no pidfd_open
  const auto deadline = std::chrono::steady_clock::now() + kDeathWait;
  for (std::size_t open = fds.size(); open > 0;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(fds.data(), fds.size(), static_cast<int>(left.count()) + 1) < 0) break;
    for (auto& p : fds)
      if (p.fd >= 0 && p.revents != 0) ::close(p.fd), p.fd = -1, --open;  // negative fds are skipped by poll
  }
  for (auto& p : fds)
    if (p.fd >= 0) ::close(p.fd);
}

}  // namespace

bool descends_from(pid_t pid, pid_t ancestor) {
  if (pid <= 0 || ancestor <= 0) return false;
  for (int step = 0; step < 64 && pid > 1; ++step, pid = parent_of(pid))
    if (pid == ancestor) return true;
  return false;
}

// getrandom, not std::random_device: the statically linked libstdc++'s random_device needs
// glibc 2.36 (arc4random), which the GPU machines' bundle must not (bench/run gpu-bundle).
std::string new_job_tag() {
  unsigned char bytes[16] = {};
  for (std::size_t got = 0; got < sizeof bytes;) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // no kernel randomness: still unique enough to tell this job's processes apart
      std::snprintf(reinterpret_cast<char*>(bytes), sizeof bytes, "%x-%lx", ::getpid(), static_cast<long>(::time(nullptr)));
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  std::string tag;
  for (unsigned char b : bytes) tag += fmt::format("{:02x}", b);
  return tag;
}

std::string become_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return std::strerror(errno);
  return {};
}

bool is_subreaper() {
  int value = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &value) == 0 && value != 0;
}

std::vector<pid_t> descendants_of(pid_t root, const std::vector<pid_t>& pruned) {
  std::vector<pid_t> found;
  std::set<pid_t> seen;
  std::vector<pid_t> pending = children_of(root);
  for (std::size_t i = 0; i < pending.size() && i < 100000; ++i) {
    pid_t pid = pending[i];
    if (std::find(pruned.begin(), pruned.end(), pid) != pruned.end() || !seen.insert(pid).second) continue;
    found.push_back(pid);
    for (pid_t child : children_of(pid)) pending.push_back(child);
  }
  return found;
}

std::vector<pid_t> find_job_processes(const std::string& tag, const std::vector<pid_t>& spared) {
  const pid_t self = ::getpid();
  std::set<pid_t> found;
  auto excluded = [&](pid_t pid) {
    return pid == self || std::find(spared.begin(), spared.end(), pid) != spared.end();
  };
  if (is_subreaper()) {
    // Every process the job started is in this tree while we live: orphans reparent to us,
    // whatever session or group they moved to. Nothing else on the machine is read.
    for (pid_t pid : descendants_of(self, spared)) found.insert(pid);
  } else if (!tag.empty()) {
    const std::string entry = std::string(contract::kJobTag) + "=" + tag;
    for (pid_t pid : numeric_entries("/proc"))
      if (!excluded(pid) && carries_tag(pid, entry)) found.insert(pid);
  }
  std::vector<pid_t> alive;
  for (pid_t pid : found)
    if (!is_zombie_or_gone(pid)) alive.push_back(pid);
  return alive;
}

int sweep_job_processes(const std::string& tag, const std::vector<pid_t>& spared) {
  int kills = 0;
  for (int round = 0; round < kSweepRounds; ++round) {
    std::vector<pid_t> alive = find_job_processes(tag, spared);
    if (alive.empty()) break;
    // Stop them all first so none forks a new child between our look and our kill.
    for (pid_t pid : alive) ::kill(pid, SIGSTOP);
    for (pid_t pid : alive) kills += ::kill(pid, SIGKILL) == 0;
    wait_until_dead(alive);  // a SIGKILLed process takes a moment to become a zombie
  }
  return kills;
}

void reap_adopted_children(const std::vector<pid_t>& keep) {
  for (pid_t child : children_of(::getpid()))
    if (std::find(keep.begin(), keep.end(), child) == keep.end()) ::waitpid(child, nullptr, WNOHANG);
}

}  // namespace ddplaunch
