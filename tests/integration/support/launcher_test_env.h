// What integration tests that start real launchers share about the test's own environment:
// the variables that would change what the launcher does (unset for every launcher started),
// and whether the Python given can run torch.distributed (else those tests skip).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

inline const std::vector<std::string> kLauncherEnvToUnset = {
    "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
    "LOCAL_RANK", "SLURM_JOB_ID", "SLURM_NODEID", "SLURM_STEP_ID", "PET_NNODES", "DDPLAUNCH_TOKEN"};

inline bool torch_available(const std::string& python) {
  return run_command({python, "-c", "import torch.distributed"}, std::chrono::seconds(120)).exit_code == 0;
}

}  // namespace ddplaunch::testing
