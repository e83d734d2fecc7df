// Hints from a Slurm job step's environment (what srun sets for every task), the
// deterministic port pair for a step, and the step detection helper.
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "ddplaunch/cluster/cluster_hints.h"
#include "ddplaunch/cluster/hostlist.h"
#include "env_values.h"


namespace ddplaunch::cluster {
namespace {

constexpr std::uint64_t kMaxSlurmId = 0xFFFFFFFFull;  // job and step ids are uint32 in Slurm
constexpr std::uint64_t kMaxNodes = 1u << 20;
constexpr std::uint64_t kMaxGpus = 4096;

// The first of `names` that is set, as (name, value).
std::optional<std::pair<const char*, std::string>> first_set(
    const EnvMap& env, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto v = env_values::get(env, n)) return std::make_pair(n, *v);
  return std::nullopt;
}

}  // namespace

bool detect_slurm_step(const EnvMap& env) {
  return env_values::get(env, "SLURM_JOB_ID") && env_values::get(env, "SLURM_NODEID") &&
         (env_values::get(env, "SLURM_STEP_ID") || env_values::get(env, "SLURM_STEPID"));
}

int slurm_rendezvous_port(std::uint64_t job_id, std::uint64_t step_id) {
  const std::uint64_t m = kSlurmPortSlots;
  std::uint64_t slot = ((job_id % m) * 131 + step_id % m) % m;
  return kSlurmPortBase + 2 * static_cast<int>(slot);
}

int slurm_worker_port(std::uint64_t job_id, std::uint64_t step_id) {
  return slurm_rendezvous_port(job_id, step_id) + 1;
}

ClusterHints read_slurm_hints(const EnvMap& env) {
  ClusterHints h;
  h.source = "slurm";
  std::string err;
  auto failed = [&h](std::string msg) {
    h.error = std::move(msg);
    return h;
  };
  auto missing = [&](const char* what) {
    return failed(fmt::format(
        "not inside a Slurm job step: {} is unset. Start ddplaunch on every node with srun "
        "(e.g. ddplaunch-srun -N 2 -- PROGRAM), or run without --slurm and pass "
        "--nodes/--node-rank/--master yourself",
        what));
  };

  // Job and step identity.
  auto job = env_values::get(env, "SLURM_JOB_ID");
  if (!job) return missing("SLURM_JOB_ID");
  auto step = first_set(env, {"SLURM_STEP_ID", "SLURM_STEPID"});
  if (!step) return missing("SLURM_STEP_ID (and SLURM_STEPID)");
  auto job_id = env_values::parse_count("SLURM_JOB_ID", *job, kMaxSlurmId, err);
  if (!job_id) return failed(err);
  auto step_id = env_values::parse_count(step->first, step->second, kMaxSlurmId, err);
  if (!step_id) return failed(err);
  h.job_id = fmt::format("{}.{}", *job_id, *step_id);

  // Node count and this node's rank.
  auto nodes_var = first_set(env, {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"});
  if (!nodes_var) return missing("SLURM_STEP_NUM_NODES (and SLURM_NNODES, SLURM_JOB_NUM_NODES)");
  auto nodes = env_values::parse_count(nodes_var->first, nodes_var->second, kMaxNodes, err);
  if (!nodes) return failed(err);
  if (*nodes == 0) return failed(fmt::format("{}=0: a step needs at least one node", nodes_var->first));
  auto rank_value = env_values::get(env, "SLURM_NODEID");
  if (!rank_value) return missing("SLURM_NODEID");
  auto rank = env_values::parse_count("SLURM_NODEID", *rank_value, kMaxNodes, err);
  if (!rank) return failed(err);
  if (*rank >= *nodes)
    return failed(fmt::format(
        "SLURM_NODEID={} is not below the node count {} ({}={}): the Slurm variables disagree; "
        "was the environment copied from another step?",
        *rank, *nodes, nodes_var->first, nodes_var->second));
  h.nodes = static_cast<int>(*nodes);
  h.node_rank = static_cast<int>(*rank);

  // One ddplaunch per node: with several tasks per node, each would claim the same node rank
  // (the ones on node 0 fight over the rendezvous port, the others join a half-formed job).
  if (auto tasks = env_values::get(env, "SLURM_STEP_NUM_TASKS")) {
    std::string ignored;
    auto count = env_values::parse_count("SLURM_STEP_NUM_TASKS", *tasks, 1ull << 32, ignored);
    if (count && *count > *nodes)
      return failed(fmt::format(
          "this Slurm step runs {} tasks on {} node(s) (SLURM_STEP_NUM_TASKS={}, "
          "SLURM_STEP_TASKS_PER_NODE={}): ddplaunch must run once per node and starts the workers "
          "itself. Use srun --ntasks-per-node=1 (ddplaunch-srun does) and give the workers "
          "per node with --nproc-per-node N",
          *count, *nodes, *tasks, env_values::get(env, "SLURM_STEP_TASKS_PER_NODE").value_or("unset")));
  }

  // Master: the first host of the step's node list (node rank 0 under srun).
  auto list_var = first_set(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"});
  if (!list_var) return missing("SLURM_STEP_NODELIST (and SLURM_JOB_NODELIST)");
  HostlistResult hosts = expand_hostlist(list_var->second);
  if (!hosts.ok()) return failed(fmt::format("{}: {}", list_var->first, *hosts.error));
  if (hosts.hosts.empty()) return failed(fmt::format("{} is empty", list_var->first));
  bool step_list = std::string_view(list_var->first) == "SLURM_STEP_NODELIST";
  if ((step_list && hosts.hosts.size() != *nodes) || hosts.hosts.size() < *nodes)
    return failed(fmt::format("{}={} names {} hosts but the node count is {} ({}={})",
                              list_var->first, list_var->second, hosts.hosts.size(), *nodes,
                              nodes_var->first, nodes_var->second));
  if (!step_list)
    h.notes.push_back(fmt::format(
        "SLURM_STEP_NODELIST is unset; took the master host from SLURM_JOB_NODELIST ({})",
        hosts.hosts.front()));
  h.master_host = hosts.hosts.front();

  // GPUs Slurm gave this node (set with --gpus-per-node / --gres=gpu:N).
  if (auto gpus = env_values::get(env, "SLURM_GPUS_ON_NODE")) {
    auto n = env_values::parse_count("SLURM_GPUS_ON_NODE", *gpus, kMaxGpus, err);
    if (!n) return failed(err);
    if (*n > 0)
      h.nproc_per_node = static_cast<int>(*n);
    else
      h.notes.push_back("SLURM_GPUS_ON_NODE=0: no GPUs allocated here; nproc per node not set");
  }

  h.rendezvous_port = slurm_rendezvous_port(*job_id, *step_id);
  h.worker_port = slurm_worker_port(*job_id, *step_id);
  return h;
}

}  // namespace ddplaunch::cluster
