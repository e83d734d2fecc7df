// Hints from a Kubeflow PyTorchJob pod: the PET_* variables the training operator sets
// for torchrun (PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT, ...).
#include <string>

#include <fmt/format.h>

#include "ddplaunch/cluster/cluster_hints.h"
#include "env_values.h"

namespace ddplaunch::cluster {
namespace {

constexpr std::uint64_t kMaxNodes = 1u << 20;
constexpr std::uint64_t kMaxPort = 65535;
constexpr std::uint64_t kMaxProcs = 4096;

}  // namespace

bool detect_kubeflow(const EnvMap& env) {
  return env_values::get(env, "PET_NNODES") &&
         (env_values::get(env, "PET_MASTER_ADDR") || env_values::get(env, "PET_RDZV_ENDPOINT"));
}

ClusterHints read_kubeflow_hints(const EnvMap& env) {
  ClusterHints h;
  h.source = "kubeflow";
  std::string err;
  auto failed = [&h](std::string msg) {
    h.error = std::move(msg);
    return h;
  };

  // PET_NNODES: "N", or "MIN:MAX" for an elastic job (we start with MAX and say so).
  auto nnodes = env_values::get(env, "PET_NNODES");
  if (!nnodes)
    return failed("PET_NNODES is unset: not a Kubeflow PyTorchJob pod; pass --nodes yourself");
  std::string max_part = *nnodes;
  if (auto colon = nnodes->find(':'); colon != std::string::npos) {
    max_part = nnodes->substr(colon + 1);
    auto min = env_values::parse_count("PET_NNODES (min)", nnodes->substr(0, colon), kMaxNodes, err);
    if (!min) return failed(fmt::format("PET_NNODES=\"{}\": {}", *nnodes, err));
    auto max = env_values::parse_count("PET_NNODES (max)", max_part, kMaxNodes, err);
    if (!max) return failed(fmt::format("PET_NNODES=\"{}\": {}", *nnodes, err));
    if (*min > *max)
      return failed(fmt::format("PET_NNODES=\"{}\": minimum exceeds maximum", *nnodes));
    h.notes.push_back(fmt::format(
        "PET_NNODES={} is an elastic range; ddplaunch waits for the maximum, {} nodes", *nnodes,
        *max));
  }
  auto nodes = env_values::parse_count("PET_NNODES", max_part, kMaxNodes, err);
  if (!nodes) return failed(err);
  if (*nodes == 0) return failed("PET_NNODES=0: a job needs at least one node");
  h.nodes = static_cast<int>(*nodes);

  // PET_NODE_RANK: absent in elastic (c10d rendezvous) jobs, where torchrun assigns ranks.
  if (auto rank_value = env_values::get(env, "PET_NODE_RANK")) {
    auto rank = env_values::parse_count("PET_NODE_RANK", *rank_value, kMaxNodes, err);
    if (!rank) return failed(err);
    if (*rank >= *nodes)
      return failed(fmt::format("PET_NODE_RANK={} is not below the node count {} (PET_NNODES={})",
                                *rank, *nodes, *nnodes));
    h.node_rank = static_cast<int>(*rank);
  } else {
    h.notes.push_back("PET_NODE_RANK is unset; the node rank is left to the rendezvous");
  }

  // Master: PET_MASTER_ADDR/PET_MASTER_PORT, else PET_RDZV_ENDPOINT "host:port".
  std::optional<std::string> port_value;
  const char* port_var = "PET_MASTER_PORT";
  if (auto addr = env_values::get(env, "PET_MASTER_ADDR")) {
    h.master_host = *addr;
    port_value = env_values::get(env, "PET_MASTER_PORT");
  } else if (auto ep = env_values::get(env, "PET_RDZV_ENDPOINT")) {
    auto colon = ep->rfind(':');
    h.master_host = ep->substr(0, colon);
    if (colon != std::string::npos) port_value = ep->substr(colon + 1);
    port_var = "PET_RDZV_ENDPOINT (port)";
    if (h.master_host->empty())
      return failed(fmt::format("PET_RDZV_ENDPOINT=\"{}\" has no host", *ep));
  }
  if (port_value) {
    auto port = env_values::parse_count(port_var, *port_value, kMaxPort, err);
    if (!port) return failed(err);
    if (*port == 0) return failed(fmt::format("{}=0 is not a usable port", port_var));
    h.rendezvous_port = static_cast<int>(*port);
  }

  // PET_NPROC_PER_NODE: a number, or "auto"/"gpu"/"cpu" which we leave to local detection.
  if (auto nproc = env_values::get(env, "PET_NPROC_PER_NODE")) {
    if (*nproc == "auto" || *nproc == "gpu" || *nproc == "cpu") {
      h.notes.push_back(fmt::format(
          "PET_NPROC_PER_NODE={}: the workers per node are counted on this node", *nproc));
    } else {
      auto n = env_values::parse_count("PET_NPROC_PER_NODE", *nproc, kMaxProcs, err);
      if (!n) return failed(err);
      if (*n == 0) return failed("PET_NPROC_PER_NODE=0: each node needs at least one worker");
      h.nproc_per_node = static_cast<int>(*n);
    }
  }

  if (auto id = env_values::get(env, "PET_RDZV_ID")) h.job_id = *id;
  return h;
}

}  // namespace ddplaunch::cluster
