// Which CPUs (and which NUMA nodes' memory) each local worker gets under torchrun's
// --numa-binding modes. Pure: the machine comes in as a Topology, so every mode is unit
// tested on fake layouts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/base/result.h"
#include "placement/cpu_list.h"
#include "placement/cpu_topology.h"

namespace ddplaunch::placement {

// torchrun's modes (torch.numa.binding.AffinityMode), worker local rank i using GPU i:
//   Node         every allowed CPU of the GPU's NUMA node
//   Socket       every allowed CPU of the NUMA nodes in the GPU's socket
//   Exclusive    the GPU's node's physical cores split evenly among that node's GPUs
//   CoreComplex  one largest-cache group (L3 complex) of the GPU's node, a different one per GPU when possible
// Without GPUs every mode gives each worker an even, disjoint slice of the allowed cores.
enum class BindingMode { None, Node, Socket, Exclusive, CoreComplex };

std::optional<BindingMode> binding_mode_from_name(std::string_view name);  // "node", "core-complex", ...
std::string_view binding_mode_name(BindingMode mode);

struct WorkerPlacement {
  CpuList cpus;               // sched_setaffinity
  std::vector<int> memory_nodes;  // preferred NUMA nodes for memory; empty on one-node machines
  std::string why;            // "GPU 1 (0000:3b:00.0) is on NUMA node 1", shown by --dry-run
};

// One placement per local rank, or an error naming the rank, the GPU and the fix.
Result<std::vector<WorkerPlacement>> plan_placement(const Topology& topology, BindingMode mode,
                                                               const CpuList& allowed, int workers);

// "cpus 0-7 (NUMA node 0), memory preferred on node 0: GPU 0 (...) is on NUMA node 0"
std::string describe_placement(const WorkerPlacement& placement);

}  // namespace ddplaunch::placement
