// Which of a straggler's node's signals stand out: see straggler_explanation.h.
#include "policy/straggler_explanation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ddplaunch/base/small_math.h"

namespace ddplaunch {

namespace {

using Figure = std::optional<double> NodeSignals::*;

// At its threshold, and half the threshold above what the other nodes see (their median).
bool stands_out(Figure figure, double threshold, const NodeSignals& its_node, const std::vector<NodeSignals>& others) {
  const std::optional<double>& its = its_node.*figure;
  if (!its || *its < threshold) return false;
  std::vector<double> theirs;
  for (const auto& other : others)
    if (other.*figure) theirs.push_back(*(other.*figure));
  return *its - median_of(theirs) >= threshold / 2;
}

int percent(double share) { return static_cast<int>(round_half_away(share * 100.0)); }

}  // namespace

std::vector<std::string> straggler_signals(int rank, std::optional<double> rank_cpu_cores, const NodeSignals& its_node,
                                           const std::vector<NodeSignals>& other_nodes) {
  std::vector<std::string> said;
  if (rank_cpu_cores && *rank_cpu_cores >= 0 && *rank_cpu_cores < kLowCpuCores)
    said.push_back(fmt::format("rank {} got {:.2f} of a core", rank, *rank_cpu_cores));
  if (stands_out(&NodeSignals::throttled, kHighThrottled, its_node, other_nodes))
    said.push_back(fmt::format("cgroup {} throttled in {} % of its CPU periods",
                               its_node.throttled_cgroup.empty() ? "?" : its_node.throttled_cgroup,
                               percent(*its_node.throttled)));
  if (stands_out(&NodeSignals::steal, kHighSteal, its_node, other_nodes))
    said.push_back(fmt::format("CPU steal {} %", percent(*its_node.steal)));
  if (stands_out(&NodeSignals::cpu_pressure, kHighPressure, its_node, other_nodes))
    said.push_back(fmt::format("cpu pressure {} %", percent(*its_node.cpu_pressure)));
  if (stands_out(&NodeSignals::memory_pressure, kHighMemoryPressure, its_node, other_nodes))
    said.push_back(fmt::format("memory pressure {} %", percent(*its_node.memory_pressure)));
  if (stands_out(&NodeSignals::io_pressure, kHighPressure, its_node, other_nodes))
    said.push_back(fmt::format("io pressure {} %", percent(*its_node.io_pressure)));
  return said;
}

std::string signals_text(int node, const std::vector<std::string>& signals) {
  if (signals.empty()) return "";
  return fmt::format("node {}: {}", node, fmt::join(signals, "; "));
}

}  // namespace ddplaunch
