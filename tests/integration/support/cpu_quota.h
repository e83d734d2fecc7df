// A cgroup with a CPU quota for the straggler tests, made and removed by the test.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddplaunch::testing {

// A cgroup (v1 cpu controller) whose processes together get at most 5 % of one CPU: created
// by the test, emptied into its parent and removed at the end (also on failure). So small a
// share keeps the starved rank the slowest even when the suite's other tests load the machine.
class CpuQuota {
 public:
  static constexpr const char* kRoot = "/sys/fs/cgroup/cpu";
  static std::string skip_reason() {
    if (::geteuid() != 0) return "needs root to make a cgroup with a CPU quota";
    if (!std::filesystem::exists(std::string(kRoot) + "/cpu.cfs_quota_us")) return "no cgroup v1 cpu controller at /sys/fs/cgroup/cpu";
    return "";
  }
  CpuQuota() : path_(std::string(kRoot) + "/ddpl-quota-" + std::to_string(::getpid()) + "-" + std::to_string(next_serial())) {
    std::filesystem::create_directory(path_);
    std::ofstream(path_ + "/cpu.cfs_period_us") << 100000;
    std::ofstream(path_ + "/cpu.cfs_quota_us") << 5000;
  }
  ~CpuQuota() {
    std::ifstream procs(path_ + "/cgroup.procs");
    for (std::string pid; std::getline(procs, pid);) std::ofstream(std::string(kRoot) + "/cgroup.procs") << pid;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  bool add(pid_t pid) const {
    std::ofstream procs(path_ + "/cgroup.procs");
    procs << pid;
    procs.flush();
    return static_cast<bool>(procs);
  }
  // `root` and every process below it (a launcher with its orphan guard and workers), for a
  // quota that starts once they run: at 5 % of a core a worker's own start (importing torch,
  // ~2 s of CPU) would take ~40 s. False when one could not be added (it may have ended).
  bool add_with_descendants(pid_t root) const {
    bool all_added = true;
    for (pid_t pid : descendants_and_self(root)) all_added = add(pid) && all_added;
    return all_added;
  }

 private:
  // `root` and its descendants, from each process's parent in /proc/<pid>/stat.
  static std::set<pid_t> descendants_and_self(pid_t root) {
    std::multimap<pid_t, pid_t> children;  // parent -> child
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string text;
      std::getline(stat, text);
      const auto close = text.rfind(')');  // the command may hold spaces and parentheses
      if (close == std::string::npos || close + 4 >= text.size()) continue;
      // After ") ": the state, then the parent's pid.
      const pid_t parent = static_cast<pid_t>(std::atoi(text.c_str() + text.find(' ', close + 2) + 1));
      children.emplace(parent, static_cast<pid_t>(std::atoi(name.c_str())));
    }
    std::set<pid_t> found{root};
    std::vector<pid_t> todo{root};
    while (!todo.empty()) {
      const pid_t parent = todo.back();
      todo.pop_back();
      for (auto [it, end] = children.equal_range(parent); it != end; ++it)
        if (found.insert(it->second).second) todo.push_back(it->second);
    }
    return found;
  }
  static int next_serial() {
    static int serial = 0;
    return ++serial;
  }
  std::string path_;
};

}  // namespace ddplaunch::testing
