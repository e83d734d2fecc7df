// How a worker ended, as a value, classified in one place (ninja's ExitStatus habit).
#pragma once

#include <string>

namespace ddplaunch {

struct ExitStatus {
  bool signaled = false;
  int code = 0;     // exit code when !signaled
  int signal = 0;   // terminating signal when signaled
  bool core_dumped = false;

  bool success() const { return !signaled && code == 0; }
  // The status a shell would report: the code, or 128 + signal.
  int shell_code() const { return signaled ? 128 + signal : code; }
  // "exit code 3" / "killed by signal 9 (SIGKILL)" / "... (core dumped)".
  std::string describe() const;
};

ExitStatus exit_status_from_wait(int wait_status);

std::string signal_name(int signal);  // "SIGKILL"

}  // namespace ddplaunch
