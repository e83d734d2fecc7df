// What a node measures of itself that can explain a slow rank on it: the hypervisor's CPU steal,
// the CPU throttling of its workers' cgroup, and the kernel's pressure stall figures. Sent
// with the node's rank-state report; each figure is absent where the node cannot read it (no
// /proc/pressure, no cgroup mount visible to the launcher, the first report of a window).
// Each rank's own CPU share travels in its RankReport (cpu_millicores).
#pragma once

#include <optional>
#include <string>

namespace ddplaunch {

struct NodeSignals {
  // Shares in [0, 1].
  std::optional<double> steal;            // of the node's CPU time over the window (/proc/stat)
  std::optional<double> throttled;        // of the CFS periods its workers' most throttled cgroup was throttled in
  std::string throttled_cgroup;           // that cgroup's path ("" with no throttled figure)
  std::optional<double> cpu_pressure;     // "some avg10" of /proc/pressure/cpu: time some task waited for a CPU
  std::optional<double> memory_pressure;  // ... /proc/pressure/memory: waited for memory (reclaim, swap-in)
  std::optional<double> io_pressure;      // ... /proc/pressure/io: waited for I/O

  bool operator==(const NodeSignals&) const = default;
};

}  // namespace ddplaunch
