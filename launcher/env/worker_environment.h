// Builds each worker's environment: the launcher's own environment plus the contract of
// DESIGN.md (torchrun names and ddplaunch's DDPLAUNCH_* ones), computed the same way on
// every node from one NodeAssignment.
#pragma once

#include <map>
#include <string>
#include <vector>

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
  double timeout_s = 0;
  long generation = 0;        // restart round; TORCHELASTIC_RESTART_COUNT too
  int max_restarts = 0;
  std::string run_id;
  std::string role = "default";
  std::string job_id;
  std::string status_socket;  // AF_UNIX datagram path the shim reports on
  std::string socket_ifname;  // injected as NCCL/GLOO_SOCKET_IFNAME only when the user set neither
};

Environment current_environment();

Environment build_worker_environment(const Environment& base, const NodeAssignment& assignment, int local_rank);

// "KEY=VALUE" strings for exec.
std::vector<std::string> to_env_strings(const Environment& env);

}  // namespace ddplaunch
