// A condition that counts only once it has held without a break for a bound: one observation
// where it does not hold starts it over. Pure: the time comes in with each observation.
#pragma once

#include <optional>

#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

class SustainedCondition {
 public:
  explicit SustainedCondition(PolicyClock::duration bound) : bound_(bound) {}

  // True when `holds`, and every observation since the first true one was true too, for at
  // least the bound.
  bool observe(bool holds, PolicyClock::time_point now);
  PolicyClock::duration bound() const { return bound_; }

 private:
  PolicyClock::duration bound_;
  std::optional<PolicyClock::time_point> since_;
};

}  // namespace ddplaunch
