// SustainedCondition: see sustained_condition.h.
#include "policy/sustained_condition.h"

namespace ddplaunch {

bool SustainedCondition::observe(bool holds, PolicyClock::time_point now) {
  if (!holds) {
    since_.reset();
    return false;
  }
  if (!since_) since_ = now;
  return now - *since_ >= bound_;
}

}  // namespace ddplaunch
