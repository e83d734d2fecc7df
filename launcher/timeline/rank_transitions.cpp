// RankTransitions: state events for the ranks whose state moved on.
#include "timeline/rank_transitions.h"

#include <utility>

namespace ddplaunch::timeline {

std::vector<Event> RankTransitions::observe(Generation generation, const std::vector<RankState>& ranks,
                                            std::int64_t now_us) {
  if (generation != generation_) {
    generation_ = generation;
    last_state_.clear();
    stepped_.clear();
  }
  std::vector<Event> changed;
  for (const RankState& r : ranks) {
    auto [seen, first] = last_state_.try_emplace(r.rank, r.state);
    if (first || seen->second != r.state) {
      seen->second = r.state;
      Event e;
      e.at_us = now_us;
      e.generation = generation;
      e.rank = r.rank;
      e.type = EventType::State;
      e.name = r.state;
      changed.push_back(std::move(e));
    }
    if (r.stepped && !std::exchange(stepped_[r.rank], true)) {
      Event e;
      e.at_us = now_us;
      e.generation = generation;
      e.rank = r.rank;
      e.name = kFirstStepName;
      e.category = kProgressCategory;
      changed.push_back(std::move(e));
    }
  }
  return changed;
}

}  // namespace ddplaunch::timeline
