// Glue from the live machine to the pure placement rules.
#include "placement/node_placement.h"

#include <fmt/format.h>

namespace ddplaunch::placement {

Result<std::vector<WorkerPlacement>> plan_node_placement(BindingMode mode, int nproc, int gpu_count,
                                                         const std::vector<std::string>& gpu_bus_ids,
                                                         const std::string& sys_root) {
  using R = Result<std::vector<WorkerPlacement>>;
  if (mode == BindingMode::None) return R::success({});
  if (gpu_count > 0 && static_cast<int>(gpu_bus_ids.size()) != gpu_count)
    return R::failure(fmt::format("--numa-binding {}: this node has {} GPU(s) but their PCI addresses are unknown "
                                  "(libcuda.so.1 did not report them); drop --numa-binding or make libcuda loadable",
                                  binding_mode_name(mode), gpu_count));
  auto topology = read_topology(sys_root, gpu_bus_ids);
  if (!topology) return R::failure(topology.error);
  return plan_placement(*topology, mode, allowed_cpus_of_this_process(), nproc);
}

}  // namespace ddplaunch::placement
