// The c10d process group for C++ (libtorch) trainers started by ddplaunch: built from the
// worker contract with PyTorch's own timeouts (or the program's), reporting init_begin /
// init_ok / init_failed on the status channel so the launcher can tell an init failure from
// a training failure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "ddplaunch/shim.h"

namespace ddplaunch::shim {

// PyTorch's defaults (torch.distributed.constants): 30 min for gloo (default_pg_timeout),
// 10 min for NCCL (default_pg_nccl_timeout). Used unless the program passes its own timeout.
// DDPLAUNCH_TIMEOUT_S is never used here: it is the launcher's init deadline, which the
// launcher enforces itself; as the c10d timeout it would also bound the store wait and every
// later collective, and fail a healthy job whose rank 0 checkpoints for longer.
inline constexpr std::chrono::seconds kDefaultGlooTimeout{1800};
inline constexpr std::chrono::seconds kDefaultNcclTimeout{600};

// The timeout a group of `backend` gets when the program passes none.
std::chrono::milliseconds default_timeout(const std::string& backend);

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
// timeout: the program's own, as torch.distributed's init_process_group(timeout=...);
// default_timeout(backend) when not given.
ProcessGroupResult init_process_group(const std::string& backend = "gloo",
                                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// Builds the group from an explicit contract: a c10d::TCPStore on master_addr:master_port
// (rank 0 serves it and waits for all ranks), then the backend's process group, both with
// `timeout` (default_timeout(backend) when not given; contract.timeout_s is ignored).
// Reports InitBegin, then InitOk or InitFailed with the error text. Returns an error instead
// of throwing.
ProcessGroupResult init_process_group(const WorkerContract& contract,
                                      const std::string& backend = "gloo",
                                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace ddplaunch::shim
