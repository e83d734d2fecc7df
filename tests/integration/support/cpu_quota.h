// A cgroup with a CPU quota for the straggler tests, made and removed by the test.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

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

 private:
  static int next_serial() {
    static int serial = 0;
    return ++serial;
  }
  std::string path_;
};

}  // namespace ddplaunch::testing
