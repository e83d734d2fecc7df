// Why a straggler may be slow, from what its node measured of itself (NodeSignals) and the
// CPU its rank got: only the signals that stand out are said, so that the line points at a
// cause instead of listing every figure. Pure.
//
// The thresholds, and why:
//  - the rank's CPU share below kLowCpuCores (half a core): a rank that computes, on a CPU or
//    feeding a GPU, keeps about one core busy; half of that means it was runnable but not run
//    (a quota, other processes on its cores) or blocked on something else (I/O, data);
//  - CPU steal at kHighSteal (10 %) of the node's CPU time: a healthy VM sees below 1–2 %; a
//    tenth of the time taken by the hypervisor slows every step visibly;
//  - cgroup throttling in kHighThrottled (20 %) of the CFS periods: a bursty service is
//    throttled in a few percent; one period in five means the quota caps the rank's compute;
//  - pressure ("some avg10": the share of the last 10 s some task stalled waiting for the
//    resource) at kHighPressure (20 %) for CPU and I/O, kHighMemoryPressure (10 %) for memory,
//    where a stall is reclaim or swap-in and hurts sooner.
// A node-wide figure must also stand out from the other nodes: it is said only when it is at
// least half its threshold above the median of the other nodes that reported it (on nodes that
// share a host, or a cluster where every node is as loaded, it explains nothing about one rank).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/node_signals.h"

namespace ddplaunch {

inline constexpr double kLowCpuCores = 0.5;
inline constexpr double kHighSteal = 0.10;
inline constexpr double kHighThrottled = 0.20;
inline constexpr double kHighPressure = 0.20;
inline constexpr double kHighMemoryPressure = 0.10;

// The straggler `rank`'s explaining signals, each a phrase for a person ("rank 1 got 0.05 of
// a core", "cgroup /batch throttled in 92 % of its CPU periods", "cpu pressure 81 %"), in
// that order; none when nothing stands out. `rank_cpu_cores`: the cores the rank used over
// its node's last window (none: not measured); `other_nodes`: the latest of every other node.
std::vector<std::string> straggler_signals(int rank, std::optional<double> rank_cpu_cores, const NodeSignals& its_node,
                                           const std::vector<NodeSignals>& other_nodes);

// "node 1: rank 1 got 0.05 of a core; cpu pressure 81 %", or "" when there is none to say.
std::string signals_text(int node, const std::vector<std::string>& signals);

}  // namespace ddplaunch
