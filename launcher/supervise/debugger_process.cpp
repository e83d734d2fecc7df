// The process of a rank's tree that reads its debugger's keyboard, found in /proc.
#include "supervise/debugger_process.h"

#include <sys/syscall.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "supervise/descendant_sweep.h"

namespace ddplaunch {

namespace {
constexpr int kTries = 10;  // the stopped process reads right after its prompt: a few ms at most
constexpr auto kBetweenTries = std::chrono::milliseconds(2);

std::string link_of(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::read_symlink(path, ignored).string();
}

// The file descriptor `pid` is blocked reading (read(2) in /proc/PID/syscall), if it is.
std::optional<int> fd_being_read(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/syscall", pid));
  long number = -1;
  std::string first_argument;
  if (!(in >> number >> first_argument) || number != SYS_read) return std::nullopt;
  return static_cast<int>(std::strtol(first_argument.c_str(), nullptr, 16));
}
}  // namespace

pid_t process_in_debugger(pid_t rank_pid, int pipe_write_fd) {
  const std::string pipe = link_of(fmt::format("/proc/self/fd/{}", pipe_write_fd));
  if (rank_pid <= 0 || pipe.rfind("pipe:", 0) != 0) return rank_pid;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kBetweenTries);
    std::vector<pid_t> tree{rank_pid};
    for (pid_t child : descendants_of(rank_pid, {})) tree.push_back(child);
    for (pid_t pid : tree)
      if (auto fd = fd_being_read(pid); fd && link_of(fmt::format("/proc/{}/fd/{}", pid, *fd)) == pipe) return pid;
  }
  return rank_pid;
}

}  // namespace ddplaunch
