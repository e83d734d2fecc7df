// Decoding of waitpid statuses into ExitStatus and their one-line descriptions.
#include "ddplaunch/base/exit_status.h"

#include <sys/wait.h>

#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace ddplaunch {

ExitStatus exit_status_from_wait(int wait_status) {
  ExitStatus s;
  if (WIFSIGNALED(wait_status)) {
    s.signaled = true;
    s.signal = WTERMSIG(wait_status);
    s.core_dumped = WCOREDUMP(wait_status);
  } else if (WIFEXITED(wait_status)) {
    s.code = WEXITSTATUS(wait_status);
  }
  return s;
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

std::string ExitStatus::describe() const {
  if (!signaled) return fmt::format("exit code {}", code);
  return fmt::format("killed by signal {} ({}){}", signal, signal_name(signal), core_dumped ? ", core dumped" : "");
}

}  // namespace ddplaunch
