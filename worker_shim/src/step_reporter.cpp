// step() and Section: progress reports for the launcher's hang detection (shim.h).
#include <atomic>
#include <mutex>

#include "ddplaunch/shim.h"
#include "ddplaunch/step_counter.h"

namespace ddplaunch::shim {

namespace {

namespace c = ddplaunch::contract;

struct SharedCounter {
  std::mutex mutex;
  StepCounter counter;
  int in_flight = 0;                  // collectives issued and not yet completed
  StepCounter::Clock::time_point busy_since{};  // the first of them issued
};

// Never destroyed: a step from a thread still running at exit must not meet a dead mutex.
SharedCounter& shared_counter() {
  static SharedCounter* s = new SharedCounter;
  return *s;
}

// The program called step() itself: collectives are no longer progress of their own.
std::atomic<bool> program_steps{false};

void count_progress() noexcept {
  std::optional<c::StepProgress> due;
  {
    SharedCounter& s = shared_counter();
    std::lock_guard lock(s.mutex);
    due = s.counter.on_step(StepCounter::Clock::now());
  }
  if (due) {
    try {
      report(c::StatusEvent::Step, c::format_step_detail(*due));
    } catch (...) {  // out of memory formatting: progress is best-effort
    }
  }
}

}  // namespace

void step() noexcept {
  program_steps.store(true, std::memory_order_relaxed);
  count_progress();
}

namespace {
// One collective in flight fewer: when none is left, the time since the first was issued was
// spent waiting inside collectives (overlapping ones count once).
void end_in_flight() noexcept {
  SharedCounter& s = shared_counter();
  std::lock_guard lock(s.mutex);
  if (s.in_flight > 0 && --s.in_flight == 0) s.counter.add_wait(StepCounter::Clock::now() - s.busy_since);
}
}  // namespace

void collective_started() noexcept {
  SharedCounter& s = shared_counter();
  std::lock_guard lock(s.mutex);
  if (s.in_flight++ == 0) s.busy_since = StepCounter::Clock::now();
}

void collective_failed() noexcept { end_in_flight(); }

void collective_completed() noexcept {
  end_in_flight();
  if (!program_steps.load(std::memory_order_relaxed)) count_progress();
}

Section::Section(std::string_view name) noexcept {
  try {
    name_ = std::string(name);
  } catch (...) {
  }
  report(c::StatusEvent::SectionBegin, name_);
}

Section::~Section() { report(c::StatusEvent::SectionEnd, name_); }

}  // namespace ddplaunch::shim
