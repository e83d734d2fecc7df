// collect_stacks: see stack_collection.h.
#include "agent/stack_collection.h"
#include "supervise/own_tools.h"
#include "supervise/proc_status.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "ddplaunch/contract.h"

namespace ddplaunch {

namespace {

namespace c = contract;
constexpr std::size_t kMaxRawBytes = 256 * 1024;  // what one tool may hand back

long file_size(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

std::string read_from(const std::string& path, long offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(offset);
  std::string out(kMaxRawBytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

// Whether the process catches `signal` now (SigCgt of /proc/PID/status). The stack file
// proves the handler was registered once, not that it still is: a Python rank's interpreter
// unregisters faulthandler while it shuts down, and a rank that exec'd another program has no
// handler; the signal's default action would end either.
bool catches(pid_t pid, int signal) {
  const unsigned long long mask = std::strtoull(proc_status_field(pid, "SigCgt").c_str(), nullptr, 16);
  return signal >= 1 && signal <= 64 && ((mask >> (signal - 1)) & 1ULL) != 0;
}

// faulthandler writes the whole dump from its signal handler, at once: wait for the file to
// grow, then for two quiet polls in a row.
std::string python_frames(pid_t pid, const std::string& stack_dir, std::chrono::milliseconds wait) {
  if (stack_dir.empty()) return "";
  const std::string path = (std::filesystem::path(stack_dir) / c::stack_file_name(pid)).string();
  const long before = file_size(path);
  if (before < 0) return "";  // no handler registered: the signal would end the process
  const int stack_signal = SIGRTMIN + c::kStackSignalAboveRtMin;
  if (!catches(pid, stack_signal) || kill(pid, stack_signal) != 0) return "";
  const auto deadline = std::chrono::steady_clock::now() + wait;
  long last = before;
  int quiet = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    long now = file_size(path);
    if (now > before && now == last) {
      if (++quiet >= 2) break;
    } else {
      quiet = 0;
    }
    last = now;
  }
  return last > before ? read_from(path, before) : "";
}

// Runs a tool with stdout captured, killed at the deadline. "" when it is not installed.
std::string run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds wait) {
  if (access(argv[0].c_str(), X_OK) != 0) return "";
  std::vector<char*> args;  // built before fork: the child may only exec (other threads hold locks)
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return "";
  pid_t child = own_tools::fork_tool();  // the end-of-generation sweep leaves it alone
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return "";
  }
  if (child == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDERR_FILENO);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  char buffer[8192];
  while (out.size() < kMaxRawBytes) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  kill(child, SIGKILL);  // done or out of time: a tool left attached would hold the rank stopped
  waitpid(child, nullptr, 0);
  own_tools::forget(child);
  return out;
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The kernel's view, always available: where the main thread sleeps, its kernel stack (root).
std::string kernel_frames(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  std::string wchan = read_small_file(dir + "/wchan");
  std::string out = "wchan: " + (wchan.empty() || wchan == "0" ? std::string("(running)") : wchan) + "\n";
  std::istringstream stack(read_small_file(dir + "/stack"));
  for (std::string line; std::getline(stack, line);) {
    auto space = line.find(' ');  // "[<0>] futex_wait_queue+0x60/0x90": drop the address
    auto plus = line.find('+');
    if (space != std::string::npos) out += "  kernel " + line.substr(space + 1, plus == std::string::npos ? std::string::npos : plus - space - 1) + "\n";
  }
  return out;
}

RankStack stack_of(const StackTarget& t, const std::string& stack_dir, StackToolLimits limits) {
  RankStack s;
  s.rank = t.rank;
  s.pid = t.pid;
  if (std::string py = python_frames(t.pid, stack_dir, limits.python_wait); !py.empty()) {
    s.source = "python";
    s.text = normalise_python_stack(py);
    if (!s.text.empty()) return s;
  }
  const std::string pid = std::to_string(t.pid);
  if (std::string native = run_tool({"/usr/bin/eu-stack", "-s", "-m", "-p", pid}, limits.native_wait); !native.empty()) {
    s.source = "eu-stack";
    s.text = normalise_native_stack(native);
    if (!s.text.empty()) return s;
  }
  if (std::string native = run_tool({"/usr/bin/gdb", "-batch", "-nx", "-p", pid, "-ex", "thread apply all bt"},
                                    limits.native_wait);
      native.find("#0") != std::string::npos) {
    s.source = "gdb";
    s.text = normalise_gdb_stack(native);
    return s;
  }
  s.source = "kernel";
  s.text = kernel_frames(t.pid);
  return s;
}

}  // namespace

std::vector<RankStack> collect_stacks(const std::vector<StackTarget>& targets, const std::string& stack_dir,
                                      StackToolLimits limits) {
  std::vector<std::future<RankStack>> pending;
  for (const auto& t : targets)
    pending.push_back(std::async(std::launch::async, [t, stack_dir, limits] { return stack_of(t, stack_dir, limits); }));
  std::vector<RankStack> out;
  for (auto& p : pending) out.push_back(p.get());
  return out;
}

}  // namespace ddplaunch
