// Who listens on a TCP port of this machine: the kernel's socket tables (/proc/net/tcp, tcp6)
// give the listening socket's inode, the processes' descriptors (/proc/PID/fd) its owner.
// Only processes this launcher may inspect are found (all of them as root, its own user's
// otherwise); the scan is bounded.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace ddplaunch::preflight {

struct PortHolder {
  pid_t pid = 0;
  std::string command;  // its command line, spaces between the arguments, cut to 120 characters
};

// `proc_root`: "/proc" (a test may point elsewhere).
std::optional<PortHolder> find_port_holder(int port, const std::string& proc_root = "/proc");

// "pid 4242 (python3 -m http.server 29500)", or "" when none was found.
std::string describe_port_holder(int port);

}  // namespace ddplaunch::preflight
