// The machine's CPU layout as sysfs describes it: NUMA nodes, sockets (packages), physical
// cores (hyperthread siblings), largest shared caches (core complexes), and the NUMA node of
// each GPU. The sysfs root is a parameter, so tests read a fake tree.
#pragma once

#include <string>
#include <vector>

#include "ddplaunch/base/result.h"
#include "placement/cpu_list.h"

namespace ddplaunch::placement {

struct CpuInfo {
  int cpu = 0;
  int numa_node = 0;
  int package = 0;      // socket: topology/physical_package_id
  int core = 0;         // lowest CPU of topology/thread_siblings_list (one physical core)
  int cache_group = 0;  // lowest CPU sharing its largest data/unified cache (an L3 core complex)
};

struct GpuLocation {
  std::string bus_id;  // "0000:3b:00.0"
  int numa_node = 0;   // sysfs -1 (one-node machines) counts as 0, as torch does
};

struct Topology {
  std::vector<CpuInfo> cpus;      // online CPUs, by index
  std::vector<int> numa_nodes;    // node ids that have CPUs
  std::vector<GpuLocation> gpus;  // by CUDA device index as the workers see it

  CpuList cpus_of_node(int node) const;
  const CpuInfo* find(int cpu) const;
};

// Reads `sys_root` ("/sys" on a real machine). gpu_bus_ids: the launcher's visible GPUs in
// CUDA order (preflight::GpuInfo::pci_bus_ids); each must have a numa_node file.
Result<Topology> read_topology(const std::string& sys_root, const std::vector<std::string>& gpu_bus_ids);

// The CPUs this process may run on (sched_getaffinity): taskset, cgroups, Slurm's binding.
CpuList allowed_cpus_of_this_process();

}  // namespace ddplaunch::placement
