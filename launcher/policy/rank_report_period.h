// How often a node sends its rank table to the master while the workers run (the periodic
// `rank_states`; changes of phase, section or debugger go at once anyway). Every 2 s while the
// job is small; stretched as it grows, so that the master receives at most
// kRankReportBudgetPerS of them a second — at 16384 nodes every 2 s was ~8,200 frames a second
// on node 0. The stretch stops where the master's readers of these reports would go blind:
//  - the straggler watch sums each rank's samples over a sliding window (20 s): a window must
//    hold two reports, or it is empty between two and names nobody;
//  - the hang watch learns of a step only with the next report, so a healthy rank looks silent
//    for up to a period plus a step: a period of at most a quarter of the suspect floor keeps
//    that under half the floor, where the watch starts counting a rank as quiet.
// docs/ARCHITECTURE.md "Keep-alive at scale". Pure.
#pragma once

#include <chrono>
#include <cstddef>

namespace ddplaunch {

// The period of a job that is small enough, and the most reports a second the master is sent
// (the keep-alive's budget of heartbeats, rendezvous ServerOptions::keepalive_budget_per_s).
inline constexpr std::chrono::milliseconds kRankReportBasePeriod{2000};
inline constexpr std::size_t kRankReportBudgetPerS = 800;

// The longest period the master's readers allow: half the straggler window, and a quarter of
// the hang watch's suspect floor (`hang.suspect_floor_s` of this launcher's configuration);
// never below the base period.
std::chrono::milliseconds longest_rank_report_period(double suspect_floor_s);

// The period for a job of `nodes` nodes: nodes / kRankReportBudgetPerS seconds, within the
// base period and the longest one.
std::chrono::milliseconds rank_report_period(std::size_t nodes, double suspect_floor_s);

}  // namespace ddplaunch
