// StragglerWatch: which rank holds the job back. Every rank steps at the pace of the slowest,
// so the step rate names nobody; where the time goes does. Each rank's shim reports the wall
// time its steps covered and the part of it spent waiting inside collectives: the rank that
// computes persistently longer than the others while they wait for it is the straggler. It is
// named once when that starts and once when it ends. Pure: samples and the time come in.
//
// The rule, over a sliding window of each rank's samples (compute share c = 1 - wait/span):
// the rank with the largest c is a straggler when its c is at least `compute_ratio` times the
// median c of the other ranks and at least `min_gap` of the wall time above it, and the other
// ranks wait on average at least `others_wait_share` of their time; held for `sustain`. A
// balanced job, whose ranks' shares differ only by noise, meets neither bound for long. A pause
// of the whole job (a debugger, a planned section) makes everyone but one rank wait: the
// caller forgets the window then (on_pause), so a pause is never a straggler.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <variant>
#include <vector>

#include "policy/init_tracker.h"  // PolicyClock
#include "policy/sustained_condition.h"

namespace ddplaunch {

struct StragglerSettings {
  PolicyClock::duration window = std::chrono::seconds(20);       // older samples are forgotten
  PolicyClock::duration min_covered = std::chrono::seconds(6);   // each rank's window covers this much
  PolicyClock::duration sustain = std::chrono::seconds(8);       // held this long to start, gone this long to end
  double compute_ratio = 1.3;
  double min_gap = 0.10;
  double others_wait_share = 0.15;
};

// The settings for ranks that report every `report_period`: a window holds two and a half
// reports at least (two whole ones whatever the phase), each rank's window covers one report,
// and the condition holds for one report before a straggler is named or ended. At the 2 s of a
// small job `base` is unchanged; at 16384 nodes (reports every ~36 s, rank_report_period.h) a
// straggler is named about two reports after it started.
StragglerSettings stretched_for(const StragglerSettings& base, PolicyClock::duration report_period);

namespace straggler {

struct Started {
  int rank = -1;
  double compute_ratio = 0;      // its compute time over the others' median
  double others_wait_share = 0;  // the share of their time the other ranks wait
};
struct Ended {
  int rank = -1;
  PolicyClock::duration lasted{};  // since it was named
};
using Event = std::variant<Started, Ended>;

}  // namespace straggler

class StragglerWatch {
 public:
  using TimePoint = PolicyClock::time_point;

  explicit StragglerWatch(StragglerSettings settings = {});

  // A new generation of `world` ranks whose nodes report every `report_period`: the samples
  // are forgotten, the settings stretched for that period (stretched_for); a straggler named in
  // the old one ends now (its end is returned).
  std::vector<straggler::Event> on_generation(int world, TimePoint now,
                                              PolicyClock::duration report_period = std::chrono::seconds(2));
  // A rank's report: `span_ms` of wall time since its previous one, `wait_ms` of it inside
  // collectives. Nonsense (negative, wait above span, an unknown rank) is ignored.
  void on_sample(int rank, long span_ms, long wait_ms, TimePoint now);
  // The whole job paused (a rank in a debugger, a planned section): the window is forgotten.
  void on_pause();
  // The rule applied now: at most an end and a start.
  std::vector<straggler::Event> check(TimePoint now);

  // Over the window, for `ddplaunch status` and the timeline: each rank's compute share
  // (1 - wait/span), or nullopt while its window covers less than min_covered.
  std::vector<std::optional<double>> compute_shares(TimePoint now) const;
  std::optional<int> straggler() const { return named_; }
  const StragglerSettings& settings() const { return settings_; }

 private:
  struct Sample {
    TimePoint at;
    long span_ms;
    long wait_ms;
  };
  struct Verdict {
    int rank = -1;
    double compute_ratio = 0;
    double others_wait_share = 0;
  };
  std::optional<Verdict> judge(TimePoint now) const;
  void forget_older_than(TimePoint cutoff);

  StragglerSettings base_;      // as configured
  StragglerSettings settings_;  // stretched for this generation's report period
  std::vector<std::deque<Sample>> samples_;  // by rank
  SustainedCondition starting_;
  SustainedCondition ending_;
  std::optional<int> candidate_;  // the rank the start condition has held for
  std::optional<int> named_;
  TimePoint named_at_{};
};

}  // namespace ddplaunch
