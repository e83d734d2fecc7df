// step() and Section: progress reports for the launcher's hang detection (shim.h).
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

}  // namespace

void step() noexcept {
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

Section::Section(std::string_view name) noexcept {
  try {
    name_ = std::string(name);
  } catch (...) {
  }
  report(c::StatusEvent::SectionBegin, name_);
}

Section::~Section() { report(c::StatusEvent::SectionEnd, name_); }

}  // namespace ddplaunch::shim
