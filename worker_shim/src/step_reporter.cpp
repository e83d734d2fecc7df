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

void collective_completed() noexcept {
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
