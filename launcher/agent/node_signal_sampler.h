// NodeSignalSampler: what this node measures of itself for the master's straggler line, taken
// with each rank-state report: the CPU steal of /proc/stat, the throttling of the workers' CPU
// cgroups (cpu.stat, v1 or v2), the pressure stall figures of /proc/pressure, and each worker's
// CPU share (utime + stime of /proc/PID/stat over the wall time). Counters are turned into
// figures over a window between two readings at least kMinWindow apart; a report sooner than
// that (a burst of changes) repeats the last figures without reading anything. Every file is
// read through a SystemFiles seam and bounded: a few small reads per worker every report period.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/proc_readings.h"
#include "policy/node_signals.h"

namespace ddplaunch {

// The files the sampler reads: the kernel's in the launcher, fixed texts in tests.
class SystemFiles {
 public:
  virtual ~SystemFiles() = default;
  // At most about `limit` bytes of the file; "" when it cannot be read.
  virtual std::string read(const std::string& path, std::size_t limit) const = 0;
};

// The real /proc and /sys.
const SystemFiles& kernel_files();

// The figures of one window.
struct NodeSample {
  NodeSignals signals;
  std::map<pid_t, double> cpu_cores;  // by worker pid: the cores it used over the window
};

class NodeSignalSampler {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kMinWindow = std::chrono::seconds(1);
  static constexpr std::size_t kMaxCgroups = 64;  // distinct worker cgroups read per window

  // `ticks_per_s`: the clock ticks of /proc/PID/stat (sysconf(_SC_CLK_TCK)).
  NodeSignalSampler(const SystemFiles& files, long ticks_per_s);

  // The figures over the window that ends now, for the workers `pids`; within kMinWindow of the
  // last reading, the last figures.
  const NodeSample& sample(const std::vector<pid_t>& pids, Clock::time_point now);

 private:
  struct Reading {
    Clock::time_point at;
    std::optional<CpuTimes> cpu;
    std::map<pid_t, unsigned long long> ticks;           // by pid
    std::map<std::string, ThrottleCounts> throttling;    // by cgroup name
  };
  Reading read(const std::vector<pid_t>& pids, Clock::time_point now);
  std::optional<double> pressure(const char* resource) const;
  const std::vector<CgroupMount>& mounts();
  NodeSample figures_between(const Reading& before, const Reading& after) const;

  const SystemFiles& files_;
  double ticks_per_s_;
  std::optional<std::vector<CgroupMount>> mounts_;  // read once: where the cgroup hierarchies are
  std::optional<Reading> last_;
  NodeSample figures_;
};

}  // namespace ddplaunch
