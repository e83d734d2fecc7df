// InitProgress: what people are told about a generation's start-up, from InitTracker's view
// of the ranks — once per generation, that every rank finished init and how long it took
// (the line people and bench/run gpu-check read; the run history learns its init seconds),
// and, at a bounded rate, which ranks the others wait for in init. Pure: `now` comes in.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/init_tracker.h"

namespace ddplaunch {

class InitProgress {
 public:
  // A new generation started at `now`.
  void begin(PolicyClock::time_point now);
  // The next generation's announcement is still to come (a new coordinator takes over).
  void forget_announcement() { init_done_announced_ = false; }
  // "generation 1: all 4 ranks finished init (init_ok) ...": the first time every rank of
  // `tracker` runs after an init; nullopt before, and after it was said.
  std::optional<std::string> announce_init_done(const InitTracker& tracker, Generation generation,
                                                PolicyClock::time_point now);
  // Who the ranks in init wait for, once some waited `first` and then at most every `every`.
  std::optional<std::string> wait_report(const InitTracker& tracker, PolicyClock::time_point now,
                                         std::chrono::milliseconds first, std::chrono::milliseconds every);
  // Seconds from the last rank entering init until every rank finished it (nullopt: not yet).
  std::optional<double> init_seconds() const { return init_seconds_; }

 private:
  friend struct StateFields<InitProgress>;  // the state document saves every field
  bool init_done_announced_ = false;
  std::optional<double> init_seconds_;
  PolicyClock::time_point generation_started_{};
  PolicyClock::time_point last_wait_report_{};
};

}  // namespace ddplaunch
