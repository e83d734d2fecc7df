// Taking the stacks of this node's workers, on the master's request. Python
// frames come from the shim's faulthandler (a signal, then its file), native frames from
// eu-stack or gdb when installed, the kernel's wait channel (/proc) otherwise. Blocking but
// bounded (every tool under a deadline; the ranks in parallel): run it off the event loop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "policy/stack_report.h"

namespace ddplaunch {

struct StackTarget {
  int rank = -1;
  pid_t pid = 0;
};

struct StackToolLimits {
  std::chrono::milliseconds python_wait{1500};  // faulthandler's file to be written
  std::chrono::milliseconds native_wait{3000};  // eu-stack / gdb
};

// One RankStack per target (node and host are left for the caller to fill).
std::vector<RankStack> collect_stacks(const std::vector<StackTarget>& targets, const std::string& stack_dir,
                                      StackToolLimits limits = {});

}  // namespace ddplaunch
