// find_port_holder: see port_holder.h.
#include "ddplaunch/preflight/port_holder.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace ddplaunch::preflight {

namespace {

constexpr int kMaxProcesses = 100000;      // bounds the scan on a crowded machine
constexpr std::size_t kMaxCommandChars = 120;
constexpr const char* kListenState = "0A";  // TCP_LISTEN in /proc/net/tcp

// The inodes of the sockets listening on `port` in one of the kernel's tables.
void listening_inodes(const std::string& table, int port, std::set<std::string>& inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos || state != kListenState) continue;
    if (std::strtol(local.c_str() + colon + 1, nullptr, 16) == port && inode != "0") inodes.insert(inode);
  }
}

std::string command_of(const std::string& proc_root, const std::string& pid) {
  std::ifstream in(proc_root + "/" + pid + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), {});
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0') c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // printed to a terminal
  if (raw.size() > kMaxCommandChars) raw = raw.substr(0, kMaxCommandChars) + "...";
  return raw;
}

bool holds_one_of(const std::string& fd_dir, const std::set<std::string>& sockets) {
  DIR* fds = ::opendir(fd_dir.c_str());
  if (!fds) return false;  // gone, or not ours to inspect
  bool found = false;
  while (dirent* fd = ::readdir(fds)) {
    if (fd->d_name[0] == '.') continue;
    char target[64];
    const ssize_t n = ::readlinkat(::dirfd(fds), fd->d_name, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    const std::string link(target);
    // "socket:[12345]"
    if (link.rfind("socket:[", 0) == 0 && sockets.count(link.substr(8, link.size() - 9))) {
      found = true;
      break;
    }
  }
  ::closedir(fds);
  return found;
}

}  // namespace

std::optional<PortHolder> find_port_holder(int port, const std::string& proc_root) {
  std::set<std::string> sockets;
  listening_inodes(proc_root + "/net/tcp", port, sockets);
  listening_inodes(proc_root + "/net/tcp6", port, sockets);
  if (sockets.empty()) return std::nullopt;
  DIR* processes = ::opendir(proc_root.c_str());
  if (!processes) return std::nullopt;
  std::optional<PortHolder> holder;
  int scanned = 0;
  while (dirent* entry = ::readdir(processes)) {
    const std::string pid = entry->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (++scanned > kMaxProcesses) break;
    if (!holds_one_of(proc_root + "/" + pid + "/fd", sockets)) continue;
    holder = PortHolder{static_cast<pid_t>(std::atol(pid.c_str())), command_of(proc_root, pid)};
    break;
  }
  ::closedir(processes);
  return holder;
}

std::string describe_port_holder(int port) {
  auto holder = find_port_holder(port);
  if (!holder) return "";
  return "pid " + std::to_string(holder->pid) + " (" + (holder->command.empty() ? "?" : holder->command) + ")";
}

}  // namespace ddplaunch::preflight
