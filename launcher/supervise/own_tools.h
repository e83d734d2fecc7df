// Processes the launcher runs for itself (eu-stack and gdb in a stack round, on the stacks
// thread). They are children of the launcher, so the end-of-generation sweep (which kills
// every descendant) and the reaping of adopted orphans would take them for the job's: a tool
// killed mid-attach can leave a rank stopped. Every tool is forked through here, and every
// sweep runs while the registry is held, so a tool is never between fork and registration
// when a sweep looks.
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

namespace ddplaunch::own_tools {

// fork(); the parent registers the child before anyone else can look. The child may only exec.
pid_t fork_tool();
// The tool was reaped by its runner.
void forget(pid_t pid);
// Runs `fn` with the registered tools' pids while no tool can be forked or forgotten.
void while_held(const std::function<void(const std::vector<pid_t>& tools)>& fn);

}  // namespace ddplaunch::own_tools
