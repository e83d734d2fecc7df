// FencedDecisions: see fenced_decisions.h.
#include "master/fenced_decisions.h"

#include <variant>

namespace ddplaunch {

std::function<void()> FencedDecisions::hold(JobPolicy::Decisions decisions, bool fenced) {
  JobPolicy::Decisions effects;
  for (auto& d : decisions) {
    if (auto* log = std::get_if<decision::Log>(&d)) say_(*log);
    else effects.push_back(std::move(d));
  }
  held_.push_back(Batch{std::move(effects), fenced, false});
  if (!fenced) return {};
  const long serial = front_serial_ + static_cast<long>(held_.size()) - 1;
  return [this, serial] {
    if (serial < front_serial_ || serial >= front_serial_ + static_cast<long>(held_.size())) return;  // cleared
    held_[static_cast<std::size_t>(serial - front_serial_)].confirmed = true;
    release();
  };
}

void FencedDecisions::release() {
  while (!held_.empty() && (!held_.front().fenced || held_.front().confirmed)) {
    JobPolicy::Decisions decisions = std::move(held_.front().decisions);
    held_.pop_front();
    ++front_serial_;
    carry_(decisions);
  }
}

}  // namespace ddplaunch
