// The c10d process group for C++ (libtorch) trainers started by ddplaunch: built from the
// worker contract with the launcher's timeout, reporting init_begin / init_ok / init_failed
// on the status channel so the launcher can tell an init failure from a training failure.
#pragma once

#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "ddplaunch/shim.h"

namespace ddplaunch::shim {

// Used when the launcher set no DDPLAUNCH_TIMEOUT_S (gloo's own default in PyTorch).
inline constexpr double kDefaultProcessGroupTimeoutS = 1800.0;

// Either a ready process group, or an error naming rank, master address, backend and
// timeout, with the exception text and what to check. Never both.
struct ProcessGroupResult {
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  std::string error;
};

// The backends this build can create: {"gloo"}, plus "nccl" with a CUDA/NCCL libtorch.
std::vector<std::string> available_backends();

// Reads the contract from the environment (read_contract) and builds the group from it.
// backend: "gloo" (always available), or "nccl" when libtorch was built with NCCL.
ProcessGroupResult init_process_group(const std::string& backend = "gloo");

// Builds the group from an explicit contract: a c10d::TCPStore on master_addr:master_port
// (rank 0 serves it and waits for all ranks), then the backend's process group, both with
// timeout_s (kDefaultProcessGroupTimeoutS when 0). Reports InitBegin, then InitOk or
// InitFailed with the error text. Returns an error instead of throwing.
ProcessGroupResult init_process_group(const WorkerContract& contract,
                                      const std::string& backend = "gloo");

}  // namespace ddplaunch::shim
