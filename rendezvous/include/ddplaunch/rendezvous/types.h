// Plain data the rendezvous exchanges: node facts, the launcher's plan, the per-node assignment.
// The launcher layers its own meaning on Message types; the rendezvous only carries them.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch::rendezvous {

using Clock = std::chrono::steady_clock;
inline constexpr int kProtocolVersion = 2;  // 2: mutual token proof, nothing about the job before it

// A generic message the launcher layers its own meaning on (type names are the launcher's).
struct Message {
  std::string type;
  Generation generation;
  std::map<std::string, std::string> fields;
};

struct NodeFacts {
  std::string hostname;
  std::vector<std::string> addresses;
  int requested_node_rank = -1;  // -1: any; the server assigns the lowest free rank in join order
  std::string role;              // torchrun's --role of that node's workers
  int expected_nodes = 0;        // the node count this node was started with (0: not said)
  int nproc = 1;
  int gpu_count = 0;
  std::string launcher_version, program_fingerprint, driver_version, cuda_version, nccl_version;
  std::string socket_ifname;  // the user's NCCL_SOCKET_IFNAME on that node ("" = unset)
  std::string probe_endpoints;  // its peer-probe listeners, "eth0=10.0.0.1:41233,..." ("" = no probe)
};

struct NodeRecord {
  NodeFacts facts;
  int node_rank = -1;
  int member_id = -1;  // the server's id for this launcher's connection (not on the wire)
  std::string observed_address;  // peer IP as the server saw it
  double rtt_ms = 0;
};

// The longest job id (--rdzv-id) a join may carry: it travels in every frame and names the
// job's etcd keys.
inline constexpr std::size_t kMaxJobIdChars = 255;

// The launcher's decision for one generation, made once all nodes are present.
struct JobPlan {
  std::string refusal;  // non-empty: the job cannot start; sent to every node, then the server stops
  std::string worker_master_addr;
  int worker_master_port = 0;
  double init_deadline_s = 0;
  std::string run_id;
  std::string run_nonce;  // etcd: the run's own id, drawn by its first coordinator ("" otherwise)
};

// What each node receives.
struct Assignment {
  Generation generation;
  int node_rank = 0;
  int node_count = 0;
  int rank_offset = 0;  // sum of nproc of all lower node ranks
  int world_size = 0;   // sum of nproc of all nodes
  std::string worker_master_addr;
  int worker_master_port = 0;
  double init_deadline_s = 0;
  std::string run_id;
  std::string run_nonce;  // JobPlan::run_nonce
  // All nodes sorted by node_rank (their addresses: the peer probe's ring plan reads them) — filled only when node_count <= ServerOptions::max_listed_nodes
  // (default 256); above that it is empty, so that assignments stay O(K) in total, not O(K^2).
  std::vector<NodeRecord> nodes;
};

}  // namespace ddplaunch::rendezvous
