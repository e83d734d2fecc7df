// Where no terminal of ours can show the debug console (a batch job: no fan-out terminal, the
// master's stdin not a terminal), ranks stopped at a breakpoint wait this long for a person to
// attach `ddplaunch debug`, then continue with their breakpoints skipped. Pure: times in,
// verdicts out; DebugRelay arms the timer and carries the verdict out.
#pragma once

#include <chrono>
#include <optional>

namespace ddplaunch::debug {

class UnattendedStop {
 public:
  using Clock = std::chrono::steady_clock;
  explicit UnattendedStop(std::chrono::milliseconds wait) : wait_(wait) {}

  std::chrono::milliseconds wait() const { return wait_; }
  // A person is at `ddplaunch debug` (each of its polls).
  void on_client(Clock::time_point now) { last_client_ = now; }
  // The wait armed at a stop ran out at `now`: true when the stopped ranks should continue —
  // nobody attached within the wait. Else the wait is armed again (a person is there).
  bool nobody_came(Clock::time_point now) const { return !last_client_ || now - *last_client_ >= wait_; }

 private:
  std::chrono::milliseconds wait_;
  std::optional<Clock::time_point> last_client_;
};

}  // namespace ddplaunch::debug
