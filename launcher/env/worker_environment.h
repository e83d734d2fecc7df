// Builds each worker's environment: the launcher's own environment plus the contract of
// DESIGN.md (torchrun names and ddplaunch's DDPLAUNCH_* ones), computed the same way on
// every node from one NodeAssignment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch {

using Environment = std::map<std::string, std::string>;

// Everything one node needs to know to start its workers for one generation.
struct NodeAssignment {
  int node_rank = 0;
  int node_count = 1;
  int rank_offset = 0;        // global rank of this node's local rank 0
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr;    // workers' MASTER_ADDR (rank 0's c10d store)
  int master_port = 0;
  double init_deadline_s = 0;       // the group's init deadline: enforced by the launcher, DDPLAUNCH_TIMEOUT_S for information
  Generation generation;      // restart round; TORCHELASTIC_RESTART_COUNT too
  int max_restarts = 0;
  std::string run_id;
  std::string role = "default";
  int role_rank_offset = -1;  // role rank of local rank 0 among the nodes with this role (-1: = rank_offset)
  int role_world_size = 0;    // workers of this role across nodes (0: = world_size)
  std::string job_id;
  std::string status_socket;  // AF_UNIX datagram path the shim reports on
  std::string socket_ifname;  // injected as NCCL/GLOO_SOCKET_IFNAME only when the user set neither
  int rendezvous_port = 0;    // the launchers' own port (DDPLAUNCH_RENDEZVOUS_PORT; 0: not given)
  // PYTHON_EXEC; "" means default_python_exec(base): $PYTHON_EXEC, else /usr/bin/python3.
  std::string python_exec;
  // torch.__version__ of the workers' Python, deciding TORCH_NCCL_ASYNC_ERROR_HANDLING (>= 2.2)
  // or NCCL_ASYNC_ERROR_HANDLING (older). nullopt: found once by find_torch_version (files
  // only, cached); "" or not found: both variables are set (each torch reads its own).
  std::optional<std::string> torch_version;
  // Where each rank's TORCHELASTIC_ERROR_FILE goes (error_file_path); "" means the directory
  // of status_socket (the launcher's private temp directory) when that is an absolute path.
  std::string error_file_dir;
};

Environment current_environment();

// The directory of the ranks' TORCHELASTIC_ERROR_FILEs ("" when there is none).
std::string error_dir_of(const NodeAssignment& assignment);

// `base` plus the contract. Variables the user set win for OMP_NUM_THREADS, PYTHONUNBUFFERED
// (1 unless set, so Python workers' output is seen live), the async NCCL error variables and
// NCCL/GLOO_SOCKET_IFNAME; the launcher's values win for the rest. An inherited
// TORCHELASTIC_ERROR_FILE belongs to an outer agent and is never passed on.
Environment build_worker_environment(const Environment& base, const NodeAssignment& assignment, int local_rank);

// torchrun's --virtual-local-rank: LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES = the local rank's
// entry of the inherited list (the local rank itself when none is set), so every worker
// uses device 0 and sees only its own GPU.
void narrow_to_own_gpu(Environment& env, int local_rank);
// "" or why --virtual-local-rank cannot give each of `nproc` workers its own GPU.
std::string virtual_local_rank_problem(const Environment& base, int nproc);

// "KEY=VALUE" strings for exec.
std::vector<std::string> to_env_strings(const Environment& env);

}  // namespace ddplaunch
