// Internal to the test support library: fork+exec one child in its own process group with
// merged stdout/stderr on a pipe, and turn a wait status into a RunResult.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing::detail {

struct SpawnedChild {
  pid_t pid = -1;      // -1 when the spawn failed
  int output_fd = -1;  // read end of the merged stdout+stderr pipe (close-on-exec)
  std::string error;   // why the spawn failed
};

SpawnedChild spawn_child(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& extra_env,
                         const std::vector<std::string>& unset_env);

// Fills exit_code / term_signal from a waitpid status; -1 (status unknown) leaves them as they are.
void set_exit_status(RunResult& result, int wait_status);

// Reads what is available on a non-blocking fd into `out`; returns false at end-of-file or error.
bool drain_available(int fd, std::string& out);

}  // namespace ddplaunch::testing::detail
