// InitDeadline: the group's init deadline, one generation at a time. Its value: the formula
// (init_deadline_formula.h, grown by each restart after an init failure), raised to what
// past runs of the same job needed (the run history) but never past timeout.max_s, with the
// words that say where it came from. Its arming: it runs while InitTracker's rule says so and
// no rank is held in a debugger; each arming is numbered, so a timer of an older arming that
// fires late is ignored and disarming needs no timer of its own. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "policy/decisions.h"
#include "policy/restart_settings.h"

namespace ddplaunch {

template <class T>
struct StateFields;

struct InitDeadlineSettings {
  InitDeadlineFormula formula;
  double history_init_s = 0;      // what past runs needed for init (0: no history)
  std::string history_explained;  // where that number comes from, for people
  bool doctor = false;            // doctor's checks: no dedicated-NIC allowance
};

class InitDeadline {
 public:
  explicit InitDeadline(InitDeadlineSettings settings) : settings_(std::move(settings)) {}

  // A new generation of `nodes`, after `init_failure_restarts` restarts for init failures:
  // its value, and disarmed.
  void plan(const std::vector<rendezvous::NodeRecord>& nodes, int init_failure_restarts);
  // Whether the deadline runs now (`runs`); the timer to arm when it starts running.
  std::optional<decision::ArmInitDeadline> recheck(bool runs, Generation generation);
  // True when a timer of arming `serial` is the current one and still armed.
  bool fired(int serial) const { return armed_ && serial == serial_; }
  // The armings of another coordinator are not this one's: disarmed, and their timers ignored.
  void forget_armings();

  double seconds() const { return seconds_; }
  const std::string& explained() const { return explained_; }

 private:
  friend struct StateFields<InitDeadline>;  // the state document saves every field but the settings
  void raise_to_history();

  InitDeadlineSettings settings_;
  double seconds_ = 0;
  std::string explained_;
  bool armed_ = false;
  int serial_ = 0;
};

}  // namespace ddplaunch
