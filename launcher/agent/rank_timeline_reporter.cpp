// RankTimelineReporter: rank state changes → timeline_events messages to the master.
#include "agent/rank_timeline_reporter.h"

#include "wire/launcher_messages.h"

namespace ddplaunch {

void RankTimelineReporter::report(const std::vector<std::shared_ptr<Worker>>& workers, MasterLink& master) {
  const Generation generation = master.generation();
  std::vector<timeline::RankState> states;
  states.reserve(workers.size());
  for (const auto& w : workers) states.push_back({w->global_rank, w->state_text(), w->progress.steps() > 0});
  for (auto& e : transitions_.observe(generation, states, timeline_clock_us())) waiting_.push_back(std::move(e));
  if (waiting_.size() > kMaxWaitingEvents)
    waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<long>(waiting_.size() - kMaxWaitingEvents));
  if (!master.connected() || waiting_.empty()) return;
  for (auto& batch : messages::timeline_batches(std::move(waiting_)))
    master.send(messages::encode(generation, messages::TimelineEvents{timeline_clock_us(), std::move(batch)}));
  waiting_.clear();
}

}  // namespace ddplaunch
