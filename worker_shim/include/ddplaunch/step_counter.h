// Counting training steps cheaply and reporting them rarely: every step is
// counted (a clock read and a few adds), but a "step" report goes out only on the first
// step and then at most once per `report_every`, carrying the count and the longest
// interval between two steps since the previous report — enough for the launcher to learn
// the step time and to see progress, at about one datagram a second — plus the wall time since
// the previous report and the part of it spent waiting inside collectives (the straggler
// watch's compute = span - wait). Pure and header-only:
// times come in as arguments, so tests drive it without sleeping.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

#include "ddplaunch/contract.h"

namespace ddplaunch::shim {

class StepCounter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StepCounter(std::chrono::milliseconds report_every = std::chrono::seconds(1))
      : report_every_(report_every) {}

  // One step ended at `now`; returns the report to send, if one is due.
  std::optional<contract::StepProgress> on_step(Clock::time_point now) {
    ++steps_;
    if (steps_ > 1) {
      auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_step_).count();
      max_interval_ms_ = std::max<long>(max_interval_ms_, static_cast<long>(interval));
    }
    last_step_ = now;
    if (steps_ > 1 && now - last_report_ < report_every_) return std::nullopt;
    contract::StepProgress progress{steps_, max_interval_ms_, 0, 0};
    if (steps_ > 1) {
      progress.span_ms = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(now - last_report_).count());
      const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited_).count();
      progress.wait_ms = std::min(static_cast<long>(waited_ms), progress.span_ms);
    }
    last_report_ = now;
    max_interval_ms_ = 0;
    waited_ = {};
    return progress;
  }

  // Time spent waiting inside collectives (since the previous report: the next one carries it).
  // Summed at the clock's resolution: many sub-millisecond collectives add up to the wait.
  void add_wait(Clock::duration waited) {
    if (waited > Clock::duration::zero()) waited_ += waited;
  }

  long steps() const { return steps_; }

 private:
  std::chrono::milliseconds report_every_;
  long steps_ = 0;
  long max_interval_ms_ = 0;
  Clock::duration waited_{};
  Clock::time_point last_step_{};
  Clock::time_point last_report_{};
};

}  // namespace ddplaunch::shim
