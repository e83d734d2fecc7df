// What this node tells the master about itself when it joins (DESIGN.md, "Join carries
// node facts"), and the environment additions that load the worker shim.
#pragma once

#include <string>
#include <vector>

#include "config/launch_config.h"
#include "ddplaunch/preflight/gpus.h"
#include "ddplaunch/rendezvous/types.h"
#include "env/worker_environment.h"

namespace ddplaunch {

std::string local_hostname();

// Hash of the program file(s): argv[0] and, for interpreters, the script. Nodes running
// different builds of the trainer are the classic silent divergence.
std::string program_fingerprint(const std::vector<std::string>& program);

rendezvous::NodeFacts gather_node_facts(const LaunchConfig& config, int nproc, const preflight::GpuInfo& gpus);

// LD_PRELOAD (NCCL init reporting) and PYTHONPATH (python shim) per the `shim` setting; with
// "auto" the Python shim is added whatever the program (its sitecustomize runs in any Python
// the workers start, and costs nothing elsewhere) and the preload when built with NCCL.
// Returns notes for the user; `env` is modified in place.
std::vector<std::string> add_shim_environment(ShimChoice shim, const std::vector<std::string>& program,
                                              Environment& env);

}  // namespace ddplaunch
