// own_tools: see own_tools.h.
#include "supervise/own_tools.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>

namespace ddplaunch::own_tools {

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<pid_t>& registry() {
  static std::vector<pid_t> pids;
  return pids;
}
}  // namespace

pid_t fork_tool() {
  std::lock_guard hold(registry_mutex());
  const pid_t child = ::fork();  // the child inherits the held mutex but only execs
  if (child > 0) registry().push_back(child);
  return child;
}

void forget(pid_t pid) {
  std::lock_guard hold(registry_mutex());
  auto& pids = registry();
  pids.erase(std::remove(pids.begin(), pids.end(), pid), pids.end());
}

void while_held(const std::function<void(const std::vector<pid_t>& tools)>& fn) {
  std::lock_guard hold(registry_mutex());
  fn(registry());
}

}  // namespace ddplaunch::own_tools
