// HangWatch: the master's view of every rank's training progress. Turns the
// nodes' periodic rank reports (steps, longest recent interval, age of the last progress,
// open section) into HangTracker events, so the tracker's learnt deadlines apply. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/hang_action.h"
#include "policy/hang_tracker.h"
#include "policy/rank_phase.h"

namespace ddplaunch {

class HangWatch {
 public:
  using TimePoint = PolicyClock::time_point;
  explicit HangWatch(HangSettings settings = {}) : tracker_(std::move(settings)) {}

  // A new generation of `world` ranks whose nodes report every `report_period`
  // (rank_report_period.h): a rank is not counted silent between two reports.
  void on_generation(Generation generation, int world, TimePoint now, PolicyClock::duration report_period = {});
  void on_ranks_reported(Generation generation, const std::vector<RankReport>& ranks, TimePoint now);
  std::vector<HangEvent> check(TimePoint now) { return tracker_.check(now); }
  const std::vector<int>& quiet_ranks() const { return tracker_.quiet_ranks(); }  // the last check's
  // Once per job: ranks that have run past the suspect floor since their init without any
  // sign of progress are not judged (the watch starts at a rank's first progress). The note
  // that says so, naming them and what counts as progress; nothing otherwise.
  std::optional<std::string> unwatched_note(TimePoint now);

  std::optional<Generation> generation() const { return generation_; }
  const HangTracker& tracker() const { return tracker_; }
  // For `ddplaunch status` and the start of the run: the deadlines in force, and whence.
  std::string deadlines_text() const;

 private:
  HangTracker tracker_;
  std::optional<Generation> generation_;  // none before the first generation
  std::vector<std::string> sections_;  // by rank: the open section as last reported
  // By rank: in a debugger at its last report; its next step interval spans the time a person
  // held the job, so it teaches nothing (it would raise the learnt deadlines).
  std::vector<bool> in_debugger_, interval_spans_hold_;
  long in_debugger_count_ = 0;  // how many of in_debugger_ are true
  std::vector<long> steps_;            // by rank: the step count last passed to the tracker
  // By rank: when it was first reported running in this generation, and whether it has shown
  // progress (a step or a section) since.
  std::vector<std::optional<TimePoint>> running_since_;
  std::vector<bool> progressed_;
  bool unwatched_said_ = false;
};

}  // namespace ddplaunch
