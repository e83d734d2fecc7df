// The placement rules of each --numa-binding mode, written from torch.numa.binding's
// documented meaning.
#include "placement/cpu_placement.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ddplaunch::placement {

namespace {

using Plan = Result<std::vector<WorkerPlacement>>;

// CPUs of `cpus` grouped by a key (physical core, cache group), groups ordered by key.
std::vector<CpuList> group_by(const Topology& t, const CpuList& cpus, int CpuInfo::*key) {
  std::map<int, CpuList> groups;
  for (int cpu : cpus)
    if (const CpuInfo* info = t.find(cpu)) groups[info->*key].push_back(cpu);
  std::vector<CpuList> out;
  for (auto& [k, group] : groups) out.push_back(std::move(group));
  return out;
}

// Slice `index` of `count` near-equal slices of `units` (the first ones one larger), as
// CPUs. With fewer units than slices, slices share: slice i gets unit i % units.
CpuList even_slice(const std::vector<CpuList>& units, int index, int count) {
  CpuList out;
  if (units.empty() || count <= 0) return out;
  const int n = static_cast<int>(units.size());
  if (n < count) return units[static_cast<std::size_t>(index % n)];
  const int base = n / count, extra = n % count;
  const int start = index * base + std::min(index, extra);
  const int end = start + base + (index < extra ? 1 : 0);
  for (int u = start; u < end; ++u) out = unite(out, units[static_cast<std::size_t>(u)]);
  return out;
}

std::vector<int> nodes_of(const Topology& t, const CpuList& cpus) {
  std::vector<int> nodes;
  for (int cpu : cpus)
    if (const CpuInfo* info = t.find(cpu)) nodes.push_back(info->numa_node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// GPU indices on `node`, ascending: the workers that share its CPUs.
std::vector<int> gpus_on_node(const Topology& t, int node) {
  std::vector<int> out;
  for (std::size_t i = 0; i < t.gpus.size(); ++i)
    if (t.gpus[i].numa_node == node) out.push_back(static_cast<int>(i));
  return out;
}

int position_of(const std::vector<int>& list, int value) {
  return static_cast<int>(std::find(list.begin(), list.end(), value) - list.begin());
}

Result<CpuList> cpus_for_gpu(const Topology& t, BindingMode mode, const CpuList& allowed, int gpu) {
  using R = Result<CpuList>;
  const int node = t.gpus[static_cast<std::size_t>(gpu)].numa_node;
  const CpuList node_cpus = intersect(t.cpus_of_node(node), allowed);
  if (node_cpus.empty())
    return R::failure(fmt::format("GPU {} ({}) is on NUMA node {}, but none of that node's CPUs ({}) is allowed to "
                                  "this launcher (allowed: {}; taskset, a cgroup or Slurm's --cpu-bind narrowed it)",
                                  gpu, t.gpus[static_cast<std::size_t>(gpu)].bus_id, node,
                                  format_cpu_list(t.cpus_of_node(node)), format_cpu_list(allowed)));
  switch (mode) {
    case BindingMode::Node: return R::success(node_cpus);
    case BindingMode::Socket: {
      const int package = t.find(node_cpus.front())->package;
      CpuList out;
      for (const auto& c : t.cpus)
        if (c.package == package) out.push_back(c.cpu);
      CpuList socket_nodes_cpus;
      for (int n : nodes_of(t, out)) socket_nodes_cpus = unite(socket_nodes_cpus, t.cpus_of_node(n));
      return R::success(intersect(socket_nodes_cpus, allowed));
    }
    case BindingMode::Exclusive: {
      const auto sharing = gpus_on_node(t, node);
      const auto cores = group_by(t, node_cpus, &CpuInfo::core);
      if (cores.size() < sharing.size())
        return R::failure(fmt::format("NUMA node {} has {} allowed physical core(s) for its {} GPUs: 'exclusive' "
                                      "needs at least one core per GPU; use --numa-binding node instead",
                                      node, cores.size(), sharing.size()));
      return R::success(even_slice(cores, position_of(sharing, gpu), static_cast<int>(sharing.size())));
    }
    case BindingMode::CoreComplex: {
      auto groups = group_by(t, node_cpus, &CpuInfo::cache_group);
      // Larger complexes first (more free CPUs), then lower CPU numbers.
      std::stable_sort(groups.begin(), groups.end(), [](const CpuList& a, const CpuList& b) {
        return a.size() != b.size() ? a.size() > b.size() : a.front() < b.front();
      });
      const auto sharing = gpus_on_node(t, node);
      return R::success(groups[static_cast<std::size_t>(position_of(sharing, gpu)) % groups.size()]);
    }
    case BindingMode::None: break;
  }
  return R::success(allowed);
}

}  // namespace

std::optional<BindingMode> binding_mode_from_name(std::string_view name) {
  if (name == "node") return BindingMode::Node;
  if (name == "socket") return BindingMode::Socket;
  if (name == "exclusive") return BindingMode::Exclusive;
  if (name == "core-complex" || name == "core_complex") return BindingMode::CoreComplex;
  if (name.empty() || name == "none") return BindingMode::None;
  return std::nullopt;
}

std::string_view binding_mode_name(BindingMode mode) {
  switch (mode) {
    case BindingMode::Node: return "node";
    case BindingMode::Socket: return "socket";
    case BindingMode::Exclusive: return "exclusive";
    case BindingMode::CoreComplex: return "core-complex";
    case BindingMode::None: break;
  }
  return "none";
}

Plan plan_placement(const Topology& t, BindingMode mode, const CpuList& allowed, int workers) {
  std::vector<WorkerPlacement> out;
  if (mode == BindingMode::None) return Plan::success(out);
  const bool several_nodes = t.numa_nodes.size() > 1;
  if (!t.gpus.empty() && workers > static_cast<int>(t.gpus.size()))
    return Plan::failure(fmt::format("--numa-binding {} places local rank i by GPU i, but this node runs {} workers "
                                     "on {} GPU(s): use --nproc-per-node {} or drop --numa-binding",
                                     binding_mode_name(mode), workers, t.gpus.size(), t.gpus.size()));
  // Without GPUs: the allowed CPUs' physical cores, NUMA node by node, cut into even slices.
  std::vector<CpuList> cores;
  if (t.gpus.empty()) {
    for (int node : t.numa_nodes)
      for (auto& core : group_by(t, intersect(t.cpus_of_node(node), allowed), &CpuInfo::core))
        cores.push_back(std::move(core));
    if (cores.empty())
      return Plan::failure(fmt::format("--numa-binding {}: none of the allowed CPUs ({}) appears in sysfs",
                                       binding_mode_name(mode), format_cpu_list(allowed)));
  }
  for (int local = 0; local < workers; ++local) {
    WorkerPlacement placement;
    if (t.gpus.empty()) {
      placement.cpus = even_slice(cores, local, workers);
      placement.why = static_cast<int>(cores.size()) >= workers
                          ? fmt::format("no GPU: slice {} of {} of the {} allowed core(s)", local + 1, workers, cores.size())
                          : fmt::format("no GPU: {} workers share {} core(s), one core each in turn", workers, cores.size());
    } else {
      auto cpus = cpus_for_gpu(t, mode, allowed, local);
      if (!cpus) return Plan::failure(fmt::format("--numa-binding {}: local rank {}: {}", binding_mode_name(mode), local,
                                                  cpus.error));
      placement.cpus = *cpus;
      const GpuLocation& gpu = t.gpus[static_cast<std::size_t>(local)];
      placement.why = fmt::format("GPU {} ({}) is on NUMA node {}", local, gpu.bus_id, gpu.numa_node);
    }
    if (several_nodes) placement.memory_nodes = nodes_of(t, placement.cpus);
    out.push_back(std::move(placement));
  }
  return Plan::success(std::move(out));
}

std::string describe_placement(const WorkerPlacement& p) {
  std::string memory = p.memory_nodes.empty()
                           ? std::string("memory policy unchanged (one NUMA node)")
                           : fmt::format("memory preferred on NUMA node(s) {}", fmt::join(p.memory_nodes, ","));
  return fmt::format("cpus {}, {}: {}", format_cpu_list(p.cpus), memory, p.why);
}

}  // namespace ddplaunch::placement
