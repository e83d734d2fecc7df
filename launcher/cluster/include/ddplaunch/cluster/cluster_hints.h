// What the surrounding Slurm step says about this node: node count and rank, master host,
// ports, job id. Pure functions of an env map, so they test without a cluster; the launcher
// merges these hints with its own options. (A Kubeflow PyTorchJob sets torchrun's PET_*
// variables instead, which the option table reads as torchrun does: config/option_table.cpp.)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddplaunch::cluster {

using EnvMap = std::map<std::string, std::string>;

struct ClusterHints {
  std::string source;  // "slurm", or empty when nothing was detected
  std::optional<int> nodes, node_rank, nproc_per_node;
  std::optional<std::string> master_host;  // a host NAME (see host_address.h to resolve it)
  std::optional<int> rendezvous_port, worker_port;
  std::optional<std::string> job_id;
  std::vector<std::string> notes;     // things worth telling the user once (non-fatal)
  std::optional<std::string> error;   // set when the environment is inconsistent; names var=value
  bool ok() const { return !error.has_value(); }
};

// True inside a Slurm job step (srun): SLURM_JOB_ID, SLURM_NODEID and
// SLURM_STEP_ID (or the older SLURM_STEPID) are all set.
bool detect_slurm_step(const EnvMap& env);

// Slurm step:
//   nodes          SLURM_STEP_NUM_NODES, else SLURM_NNODES, else SLURM_JOB_NUM_NODES
//   node_rank      SLURM_NODEID (step-relative under srun)
//   master_host    first host of SLURM_STEP_NODELIST, else of SLURM_JOB_NODELIST (expanded)
//   job_id         "<SLURM_JOB_ID>.<SLURM_STEP_ID>"
//   nproc_per_node SLURM_GPUS_ON_NODE when set and > 0, else left empty
//   ports          slurm_rendezvous_port / slurm_worker_port below
// Missing required variables, non-numbers, node rank >= nodes, or a step node list whose
// length differs from the node count give `error` naming the variable and its value.
ClusterHints read_slurm_hints(const EnvMap& env);

// Ports derived from the Slurm job and step ids, so every node of a step computes the same
// pair without talking to the others, and different steps or jobs sharing nodes rarely collide:
//   slot              = (job_id * 131 + step_id) mod 1634
//   rendezvous port   = 29500 + 2 * slot          (even, 29500..32766)
//   worker port       = rendezvous port + 1       (odd,  29501..32767)
// Never 0 and never equal. Kept below 32768, where Linux's ephemeral (outgoing) port range
// starts, so outgoing connections do not take them; the launcher still checks they bind.
inline constexpr int kSlurmPortBase = 29500;
inline constexpr int kSlurmPortSlots = 1634;
int slurm_rendezvous_port(std::uint64_t job_id, std::uint64_t step_id);
int slurm_worker_port(std::uint64_t job_id, std::uint64_t step_id);

}  // namespace ddplaunch::cluster
