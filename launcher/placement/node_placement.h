// This node's placement at start: the --numa-binding mode applied to the machine the
// launcher runs on (sysfs, its own allowed CPUs, the GPUs libcuda reported).
#pragma once

#include <string>
#include <vector>

#include "ddplaunch/base/result.h"
#include "placement/cpu_placement.h"

namespace ddplaunch::placement {

// Empty without a mode. gpu_count > 0 without bus ids (no libcuda) is an error: binding
// CPU-only slices on a GPU node would be wrong.
Result<std::vector<WorkerPlacement>> plan_node_placement(BindingMode mode, int nproc, int gpu_count,
                                                         const std::vector<std::string>& gpu_bus_ids,
                                                         const std::string& sys_root = "/sys");

}  // namespace ddplaunch::placement
