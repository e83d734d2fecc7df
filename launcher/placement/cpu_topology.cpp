// Reading the CPU layout from sysfs. Missing optional files fall back to the plainest
// answer (one package, a core per CPU, a cache group per package) so that a container or
// an old kernel still gets a placement; a missing CPU list is an error.
#include "placement/cpu_topology.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace ddplaunch::placement {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_small_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text(4096, '\0');  // sysfs values are short; bounded read
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::optional<int> read_int(const fs::path& path) {
  auto text = read_small_file(path);
  if (!text) return std::nullopt;
  try {
    return std::stoi(*text);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<CpuList> read_cpu_list(const fs::path& path) {
  auto text = read_small_file(path);
  return text ? parse_cpu_list(*text) : std::nullopt;
}

// Lowest CPU sharing the highest-level data or unified cache with `cpu`; nullopt when
// sysfs has no cache description (VMs often have none).
std::optional<int> largest_cache_group(const fs::path& cpu_dir) {
  std::error_code ec;
  int best_level = -1;
  std::optional<int> group;
  for (const auto& entry : fs::directory_iterator(cpu_dir / "cache", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    auto type = read_small_file(entry.path() / "type");
    if (!type || (type->rfind("Unified", 0) != 0 && type->rfind("Data", 0) != 0)) continue;
    auto level = read_int(entry.path() / "level");
    auto shared = read_cpu_list(entry.path() / "shared_cpu_list");
    if (!level || !shared || shared->empty() || *level <= best_level) continue;
    best_level = *level;
    group = shared->front();
  }
  return group;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

CpuList Topology::cpus_of_node(int node) const {
  CpuList out;
  for (const auto& c : cpus)
    if (c.numa_node == node) out.push_back(c.cpu);
  return out;
}

const CpuInfo* Topology::find(int cpu) const {
  auto it = std::find_if(cpus.begin(), cpus.end(), [&](const CpuInfo& c) { return c.cpu == cpu; });
  return it == cpus.end() ? nullptr : &*it;
}

Result<Topology> read_topology(const std::string& sys_root, const std::vector<std::string>& gpu_bus_ids) {
  using R = Result<Topology>;
  const fs::path root(sys_root);
  const fs::path cpu_root = root / "devices/system/cpu";
  auto online = read_cpu_list(cpu_root / "online");
  if (!online || online->empty())
    return R::failure(fmt::format("cannot read the online CPUs from {}: --numa-binding needs sysfs",
                                  (cpu_root / "online").string()));
  Topology topology;
  for (int cpu : *online) {
    const fs::path dir = cpu_root / fmt::format("cpu{}", cpu);
    CpuInfo info;
    info.cpu = cpu;
    info.package = read_int(dir / "topology/physical_package_id").value_or(0);
    auto siblings = read_cpu_list(dir / "topology/thread_siblings_list");
    info.core = siblings && !siblings->empty() ? siblings->front() : cpu;
    topology.cpus.push_back(info);
  }
  // A cache group defaults to the package: one "complex" per socket.
  for (auto& info : topology.cpus) {
    auto group = largest_cache_group(cpu_root / fmt::format("cpu{}", info.cpu));
    if (group) info.cache_group = *group;
    else {
      auto first = std::find_if(topology.cpus.begin(), topology.cpus.end(),
                                [&](const CpuInfo& c) { return c.package == info.package; });
      info.cache_group = first->cpu;
    }
  }

  // NUMA nodes: nodeN/cpulist; a kernel without NUMA has no node directory: one node 0.
  std::error_code ec;
  std::vector<std::pair<int, CpuList>> nodes;
  for (const auto& entry : fs::directory_iterator(root / "devices/system/node", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 5 || name.rfind("node", 0) != 0 || !std::isdigit(static_cast<unsigned char>(name[4]))) continue;
    auto cpus = read_cpu_list(entry.path() / "cpulist");
    if (cpus && !cpus->empty()) nodes.emplace_back(std::stoi(name.substr(4)), *cpus);
  }
  std::sort(nodes.begin(), nodes.end());
  for (auto& info : topology.cpus)
    for (const auto& [node, cpus] : nodes)
      if (std::binary_search(cpus.begin(), cpus.end(), info.cpu)) info.numa_node = node;
  for (const auto& [node, cpus] : nodes) topology.numa_nodes.push_back(node);
  if (topology.numa_nodes.empty()) topology.numa_nodes.push_back(0);

  for (const auto& raw : gpu_bus_ids) {
    GpuLocation gpu;
    gpu.bus_id = lowercase(raw);
    const fs::path file = root / "bus/pci/devices" / gpu.bus_id / "numa_node";
    auto node = read_int(file);
    if (!node)
      return R::failure(fmt::format("cannot read the NUMA node of GPU {} ({}) from {}: --numa-binding needs it; "
                                    "drop the flag on this machine",
                                    topology.gpus.size(), gpu.bus_id, file.string()));
    gpu.numa_node = std::max(*node, 0);
    topology.gpus.push_back(gpu);
  }
  return R::success(std::move(topology));
}

CpuList allowed_cpus_of_this_process() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuList out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  return out;
}

}  // namespace ddplaunch::placement
