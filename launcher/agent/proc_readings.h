// The kernel's texts a node reads to explain a slow rank, parsed: the CPU line of /proc/stat,
// a /proc/pressure file, a cgroup's cpu.stat (v1 and v2), a process's /proc/PID/stat, and
// where a process's CPU cgroup lies (/proc/PID/cgroup against /proc/self/mountinfo). Pure:
// texts in, figures out; a malformed text gives none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddplaunch {

// The aggregate "cpu" line of /proc/stat, in clock ticks: all of the CPU time, and the part
// the hypervisor stole.
struct CpuTimes {
  unsigned long long total = 0;
  unsigned long long steal = 0;
};
std::optional<CpuTimes> parse_cpu_times(std::string_view proc_stat);

// "some avg10" of a /proc/pressure/{cpu,memory,io} file, as a share in [0, 1].
std::optional<double> parse_pressure_some_avg10(std::string_view pressure);

// A cgroup's CFS bandwidth counters (cpu.stat: nr_periods and nr_throttled, the same keys in
// cgroup v1 and v2). None where the cgroup has no quota accounting (v2 without the cpu
// controller).
struct ThrottleCounts {
  unsigned long long periods = 0;
  unsigned long long throttled = 0;
};
std::optional<ThrottleCounts> parse_cpu_stat(std::string_view cpu_stat);

// utime + stime of /proc/PID/stat, in clock ticks (the command name may hold spaces and ')').
std::optional<unsigned long long> parse_process_cpu_ticks(std::string_view pid_stat);

// A cgroup file system mounted here (a line of /proc/self/mountinfo): v1 with its
// controllers, or the unified v2 hierarchy; `root` is the cgroup the mount shows at its top.
struct CgroupMount {
  std::string mount_point;
  std::string root;
  bool unified = false;
  std::vector<std::string> controllers;  // v1 only
};
std::vector<CgroupMount> parse_cgroup_mounts(std::string_view mountinfo);

// The directory of the process's CPU cgroup (the one whose cpu.stat counts its throttling),
// from its /proc/PID/cgroup: the v1 hierarchy with the cpu controller where one is mounted,
// else the v2 one. None when that cgroup is not visible under a mount here (the launcher in
// another mount namespace, as `ip netns exec` makes).
struct CpuCgroup {
  std::string name;       // as /proc/PID/cgroup says it ("/batch/job7")
  std::string directory;  // where its files are ("/sys/fs/cgroup/cpu/batch/job7")
};
std::optional<CpuCgroup> cpu_cgroup_of(std::string_view proc_pid_cgroup, const std::vector<CgroupMount>& mounts);

}  // namespace ddplaunch
