// StragglerReports: the master's side of the straggler watch. It feeds the pure StragglerWatch
// with the ranks' reports (and tells it when the job pauses as a whole: a rank in a debugger,
// paused, or in a planned section makes the others wait without anyone being slow), and
// carries out what the watch names: one log line when a straggler starts and one when it ends,
// an instant on the rank's timeline lane for each, a compute-share counter per rank (when it
// moved by kCounterStep, at most every kCounterEvery, and every kCounterKeyframe whatever: a
// steady job of 16384 ranks had written 1,600 counters a second), the straggler in `ddplaunch status`, and the episodes for the
// job's end summary and the run history's per-host record. Where the straggler's node measured
// something that explains it (its rank's CPU share, throttling, steal, pressure: NodeSignals),
// the signals that stand out are said with it (policy/straggler_explanation.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "master/master_timeline.h"
#include "policy/node_signals.h"
#include "policy/rank_phase.h"
#include "policy/straggler_watch.h"

namespace ddplaunch {

class StragglerReports {
 public:
  static constexpr auto kCounterEvery = std::chrono::seconds(10);
  static constexpr auto kCounterKeyframe = std::chrono::minutes(10);
  static constexpr double kCounterStep = 0.02;
  static constexpr std::size_t kMaxEpisodes = 100;  // kept for the end summary; the count goes on

  explicit StragglerReports(MasterTimeline& timeline, StragglerSettings settings = {});

  // `report_period`: how often the nodes report their ranks (policy/rank_report_period.h).
  void start_generation(Generation generation, int world, PolicyClock::duration report_period,
                        PolicyClock::time_point now);
  // One node's rank-state report: `host` and `signals` are the node's as it said in the report.
  void on_ranks_reported(int node_rank, const std::string& host, Generation generation,
                         const std::vector<RankReport>& ranks, PolicyClock::time_point now,
                         const NodeSignals& signals = {});
  // On the master's 1 s sweep.
  void check(PolicyClock::time_point now);

  // For `ddplaunch status`: the straggler now, and each rank's compute share over the window.
  std::optional<int> straggler() const { return watch_.straggler(); }
  std::map<int, double> compute_shares(PolicyClock::time_point now) const;
  // Each rank's CPU share (cores) over its node's last window, where measured; and what
  // explains the straggler now, by its node's latest report ("rank 1 got 0.05 of a core",
  // "cpu pressure 81 %"), none without a straggler or a signal that stands out.
  std::map<int, double> cpu_cores() const;
  std::vector<std::string> explaining_signals() const;
  // The straggler named now, where it runs and how long it has held the job back (for the
  // policy's straggler action); none while nobody is named.
  struct Holding {
    int rank = -1;
    int node = -1;
    double held_s = 0;
    std::string what;  // "computes 1.8x the median of the other ranks; they wait 44 % of each step"
  };
  std::optional<Holding> holding_back(PolicyClock::time_point now) const;
  // For the job's end: one line per episode (the last kMaxEpisodes), and episodes by host.
  std::vector<std::string> summary_lines(PolicyClock::time_point now) const;
  std::map<std::string, int> episodes_by_host() const;

 private:
  struct Place {
    int node = -1;
    std::string host;
  };
  struct Episode {
    int rank = -1;
    Place place;
    double compute_ratio = 0;
    double others_wait_share = 0;
    PolicyClock::time_point began{};
    std::optional<PolicyClock::duration> lasted;  // none while it goes on
    std::string signals;                          // what explained it when it started ("" for nothing)
  };
  std::string where(int rank) const;  // "rank 5 (node 2, host h3)"
  std::vector<std::string> signals_of(int rank) const;  // the phrases that stand out, by its node's latest
  void carry_out(const straggler::Event& event, PolicyClock::time_point now);

  MasterTimeline& timeline_;
  StragglerWatch watch_;
  std::optional<Generation> generation_;
  int world_ = 0;
  std::map<int, Place> places_;  // by rank, from the reports
  std::map<int, bool> holding_;  // by rank: in a debugger, paused or in a section at its last report
  int holding_count_ = 0;        // how many of them hold
  std::vector<Episode> episodes_;
  std::size_t episodes_dropped_ = 0;
  std::map<std::string, int> by_host_;
  struct Counter {
    PolicyClock::time_point at;
    double share = 0;
  };
  std::map<int, Counter> counter_at_;  // by rank: its last counter
  PolicyClock::time_point next_counters_at_{};  // when check() looks at the counters again
  std::map<int, NodeSignals> node_signals_;            // by node rank: its latest report's
  std::map<int, double> cpu_cores_;                    // by rank: its latest measured CPU share
};

}  // namespace ddplaunch
