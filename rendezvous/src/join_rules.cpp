#include "join_rules.h"

#include <climits>

namespace ddplaunch::rendezvous::join_rules {

std::string launcher_version_refusal(const ServerOptions& o, const NodeFacts& joining, const std::string& who) {
  if (o.launcher_version.empty() || joining.launcher_version == o.launcher_version) return "";
  return "launcher version mismatch: " + who + " runs ddplaunch '" + joining.launcher_version +
         "', the master runs '" + o.launcher_version + "'; install the same ddplaunch on all nodes";
}

std::string node_count_refusal(const ServerOptions& o, const NodeFacts& joining, const std::string& who) {
  if (joining.expected_nodes <= 0 || joining.expected_nodes == o.expected_nodes) return "";
  return who + " was started for a job of " + std::to_string(joining.expected_nodes) +
         " nodes, but the master (node 0) for " + std::to_string(o.expected_nodes) +
         "; pass the same --nodes / --nnodes on every node";
}

std::string no_room_refusal(const ServerOptions& o, bool admitting, int joined, const std::string& who) {
  if (admitting && joined < job_places(o)) return "";
  if (o.launcher_assigns_slots) {
    return "too many launchers: the job has room for " + std::to_string(o.expected_nodes) + " nodes and " +
           std::to_string(o.max_spares) + " spare(s), and all are here; " + who +
           " is one too many (start every launcher with a larger --spares to keep more spares)";
  }
  return "too many nodes: the job expects " + std::to_string(o.expected_nodes) +
         " nodes and all have joined already; " + who +
         " is one too many (check --nodes, or whether a job with this --job-id is already running)";
}

// Checked alike with and without membership. A rank at or above the node count is refused,
// unless the job keeps spares: then the launcher starts as a spare.
std::string requested_rank_refusal(const ServerOptions& o, int requested_rank, const std::string& who,
                                   const std::string& holder) {
  const int expected = o.expected_nodes;
  if (requested_rank >= expected) {
    if (o.launcher_assigns_slots) return "";  // the launcher reads it as "start me as a spare"
    return who + " asks for node rank " + std::to_string(requested_rank) + " but the job has " +
           std::to_string(expected) + " nodes (ranks 0.." + std::to_string(expected - 1) +
           "); check --node-rank and --nodes";
  }
  if (requested_rank < 0 || holder.empty()) return "";
  return "duplicate node rank " + std::to_string(requested_rank) + ": " + who + " asks for it but " + holder +
         " already holds it; every node needs a distinct --node-rank";
}

Assignments assignments_for(Generation generation, const std::vector<NodeRecord>& slots, const JobPlan& plan) {
  if (!plan.refusal.empty()) return plan.refusal;
  long long world = 0;
  std::vector<Assignment> out(slots.size());
  for (std::size_t r = 0; r < slots.size(); ++r) {
    out[r].node_rank = static_cast<int>(r);
    out[r].rank_offset = static_cast<int>(world);
    world += slots[r].facts.nproc;
    if (world > INT_MAX) return std::string("world size too large");
  }
  for (Assignment& a : out) {
    a.generation = generation;
    a.node_count = static_cast<int>(slots.size());
    a.world_size = static_cast<int>(world);
    a.worker_master_addr = plan.worker_master_addr;
    a.worker_master_port = plan.worker_master_port;
    a.init_deadline_s = plan.init_deadline_s;
    a.run_id = plan.run_id;
    a.run_nonce = plan.run_nonce;
  }
  return out;
}

}  // namespace ddplaunch::rendezvous::join_rules
