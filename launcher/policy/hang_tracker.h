// HangTracker: learnt runtime deadlines from the ranks' progress reports. Pure:
// reports and times come in as arguments; check() says who is suspect or hung.
//
// Two levels, as DESIGN.md's rule demands (a launcher must never kill a healthy job):
//  - suspect: no progress for max(suspect_floor, suspect_factor x the largest step interval
//    seen on any rank after warm-up). Only reported (with stacks), never acted on.
//  - hang: no progress for max(hang_minimum, hang_factor x that interval). The action.
// A rank inside a section ("checkpoint") is judged by the section's own deadlines, learnt
// from the longest section of that name seen so far: longer than ever is suspect, not hung.
// While some rank is in a section, the others (waiting for it in their next collective) are
// judged by the more lenient of their own and that section's deadlines; when it leaves the
// section, their clocks start again.
// Consistently slow steps raise the learnt interval, so they are never suspect. Before any
// interval is learnt (or seeded from history) only the floor and the minimum apply.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

struct HangSettings {
  int warmup_steps = 5;            // a rank's first steps (compilation, caches) teach nothing
  double suspect_factor = 5;       // ft_launcher's safety factor
  double suspect_floor_s = 60;     // never suspect sooner
  double hang_factor = 20;
  double hang_minimum_s = 1800;    // never act sooner: PyTorch's own default collective
                                   // timeout for gloo (NCCL's is 10 min), so a job PyTorch
                                   // would let live is not killed by default
  double section_suspect_floor_s = 300;
  double section_hang_minimum_s = 1800;
  double seeded_interval_s = 0;    // from the run history (0: none)
  std::string seeded_from;         // "history: p99 of 12 runs" — said with every deadline
};

struct HangLimits {                // the deadlines in force, with where they came from
  double suspect_s = 0;
  double hang_s = 0;
  std::string explained;           // "suspect after 60 s (floor; 5 x 0.42 s step) ..."
};

struct HangEvent {
  enum class Level { Suspect, Hang } level = Level::Suspect;
  std::vector<int> ranks;          // global ranks without progress beyond the limit
  double silent_s = 0;             // the longest silence among them
  std::string section;             // "" outside a section
  std::string text;                // the whole message for people
};

class HangTracker {
 public:
  explicit HangTracker(HangSettings settings = {}) : settings_(std::move(settings)) {}

  // A new generation of `world` ranks whose nodes report every `report_period`: nothing learnt
  // is forgotten (the step time is the program's), but every rank's clock and steps start again.
  void reset(int world, PolicyClock::time_point now, PolicyClock::duration report_period = {});
  // A report that told of `rank` came at `now` (with or without progress). Between two reports
  // the master cannot know whether a rank stepped, so a rank's silence is counted from its last
  // progress to its last report, and past that only once the next report is overdue (one
  // period): a healthy rank in a job whose nodes report every 36 s does not look silent for 36 s,
  // and a stopped one is found at most one period later than its limit.
  void on_reported(int rank, PolicyClock::time_point now);
  // A "step" report: steps so far in this generation, the longest interval since the last.
  // The interval is believed only up to the time this generation has run (a forged or
  // corrupt report cannot raise the hang deadline, nor the saved history, beyond that).
  void on_step(int rank, long steps, long max_interval_ms, PolicyClock::time_point now);
  void on_section(int rank, bool begin, const std::string& name, PolicyClock::time_point now);
  // A rank that ended (exit) is no longer judged.
  void on_exit(int rank);

  // New suspect / hang findings at `now` (each rank once per episode: progress re-arms it).
  // None while held.
  std::vector<HangEvent> check(PolicyClock::time_point now);
  // The last check's quiet ranks: every watched rank without progress for at least half its
  // suspect limit, the ranks of its events included. The stuck rank is sought among them:
  // progress reports come every 2 s (longer in a large job), so the rank that stopped
  // first is not always the first past a limit (a peer blocked in the collective it never
  // joined may cross it a report earlier).
  const std::vector<int>& quiet_ranks() const { return quiet_ranks_; }
  // A person holds a rank in a debugger: nobody is judged (the others wait for it by design);
  // when released, every rank's clock starts again at `now`.
  void hold(bool held, PolicyClock::time_point now);
  bool held() const { return held_; }

  const HangSettings& settings() const { return settings_; }
  // Ranks found suspect (or hung) and without progress since: `ddplaunch status` marks them.
  std::vector<int> suspect_ranks() const;
  HangLimits limits() const;                              // outside sections
  HangLimits section_limits(const std::string& name) const;
  double learnt_interval_s() const { return learnt_interval_s_; }
  const std::map<std::string, double>& longest_sections() const { return longest_section_s_; }

 private:
  struct Rank {
    bool alive = true;
    long steps = 0;
    PolicyClock::time_point last_progress{};
    PolicyClock::time_point last_reported{};  // the last report that told of this rank
    std::string section;                 // "" when not in one
    PolicyClock::time_point section_since{};
    bool suspect_reported = false;
    bool hang_reported = false;
  };
  std::string interval_origin() const;
  double silent_s(const Rank& r, PolicyClock::time_point now) const;  // see on_reported

  HangSettings settings_;
  std::vector<Rank> ranks_;
  std::vector<int> quiet_ranks_;  // found by the last check()
  bool held_ = false;
  PolicyClock::time_point generation_start_{};
  PolicyClock::duration report_period_{};
  double learnt_interval_s_ = 0;                 // largest step interval after warm-up, any rank
  std::map<std::string, double> longest_section_s_;
};

}  // namespace ddplaunch
