// node_assignment: see node_assignment.h.
#include "agent/node_assignment.h"

#include "env/torch_install.h"

namespace ddplaunch {

NodeAssignment node_assignment(const rendezvous::Assignment& a, const NodePlan& plan,
                               const std::string& status_socket, const std::string& socket_ifname,
                               int rendezvous_port) {
  NodeAssignment n;
  n.node_rank = a.node_rank;
  n.node_count = a.node_count;
  n.rank_offset = a.rank_offset;
  n.world_size = a.world_size;
  n.local_world_size = plan.nproc;
  n.master_addr = a.worker_master_addr;
  n.master_port = a.worker_master_port;
  n.init_deadline_s = a.init_deadline_s;
  n.generation = a.generation;
  n.max_restarts = plan.config.restart.max_restarts;
  n.run_id = a.run_id;
  n.role = plan.config.role;
  // Role ranks: counted over the nodes that run this role (the node list comes with the
  // assignment on jobs of up to 256 nodes; above that every node is taken to share it).
  if (!a.nodes.empty()) {
    n.role_rank_offset = 0;
    for (const auto& node : a.nodes) {
      if (node.facts.role != n.role) continue;
      if (node.node_rank < a.node_rank) n.role_rank_offset += node.facts.nproc;
      n.role_world_size += node.facts.nproc;
    }
  }
  n.job_id = plan.config.job_id;
  n.status_socket = status_socket;
  n.socket_ifname = socket_ifname;
  n.rendezvous_port = rendezvous_port;
  // A program that cannot be Python (a compiled one, no python word) gets both async NCCL
  // error variables, as for an unknown torch, without torch/version.py being looked for.
  if (!may_start_python(plan.config.program)) n.torch_version = "";
  return n;
}

}  // namespace ddplaunch
