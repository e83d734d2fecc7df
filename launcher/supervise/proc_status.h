// One field of a process's /proc/PID/status: whether a debugger traces it (TracerPid), which
// signals it catches (SigCgt).
#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>
#include <string_view>

namespace ddplaunch {

// The text after "KEY:" (leading blanks kept), or "" when the process or the field is gone.
inline std::string proc_status_field(pid_t pid, std::string_view key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':')
      return line.substr(key.size() + 1);
  return "";
}

}  // namespace ddplaunch
