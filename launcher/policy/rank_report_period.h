// How often a node sends its rank table to the master while the workers run (the periodic
// `rank_states`; changes of phase, section or debugger go at once anyway). Every 2 s while the
// job is small; in a large job a little more often than the keep-alive pace (nodes / the
// master's budget of frames a second at rest, rendezvous keepalive_pace.h), so that each node's
// report is its heartbeat too (a node sends a heartbeat only after a silence of its pace) and
// the master receives about kRestBudgetPerS frames a second from all nodes together whatever
// their count: ~460 reports a second at 16384 nodes (every 35.8 s) where 2 s reports had been
// ~8,200 and reports plus heartbeats ~3,400 before.
// The master's readers follow the period rather than bounding it: the hang watch does not
// count a rank silent between two reports (hang_tracker.h, on_reported), the straggler watch
// stretches its window to hold two reports (straggler_watch.h, stretched_for).
// docs/ARCHITECTURE.md "Keep-alive at scale". Pure.
#pragma once

#include <chrono>
#include <cstddef>

namespace ddplaunch {

// The period of a job that is small enough, and the frames a second the master receives at
// rest from all nodes together in a large one (the rendezvous server's
// ServerOptions::keepalive_budget_per_s, the same number: the pace and the reports stretch
// together).
inline constexpr std::chrono::milliseconds kRankReportBasePeriod{2000};
inline constexpr std::size_t kRestBudgetPerS = 400;
// The longest period: beyond ~120,000 nodes the reports grow with the node count again.
inline constexpr std::chrono::milliseconds kRankReportLongestPeriod{300000};

// The period for a job of `nodes` nodes: 7/8 of nodes / kRestBudgetPerS seconds (a report
// comes before the heartbeat it replaces falls due, whatever the timers' drift), within the
// base period and the longest one.
std::chrono::milliseconds rank_report_period(std::size_t nodes);

// The delay from `wall_now` (the wall clock, as time since the epoch) to a report due `after`
// from now, moved to the nearest instant of a grid on the wall clock: a second, or an eighth of
// `period` when that is shorter (never moved by more than half the grid). Nodes' wall clocks
// agree to milliseconds, so a large job's reports reach the master in batches once a second
// (one wake-up of its event loop for hundreds of reports) instead of one by one: alone, each
// costs the master about twice as much. The period's average is kept.
std::chrono::milliseconds report_delay_on_grid(std::chrono::milliseconds wall_now, std::chrono::milliseconds after,
                                               std::chrono::milliseconds period);

}  // namespace ddplaunch
