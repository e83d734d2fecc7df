// RankTimelineReporter: a node's part of the job's timeline. Whenever the node looks at its
// ranks (each rank-state report, within 20 ms of a change, and before a failure report), the
// ranks whose state moved on become timeline events, sent to the master with this node's
// clock, so that the master can align them. Events wait (bounded) while no master listens.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "supervise/worker.h"
#include "timeline/rank_transitions.h"

namespace ddplaunch {

class RankTimelineReporter {
 public:
  static constexpr std::size_t kMaxWaitingEvents = 16384;  // the oldest beyond it are dropped

  using Send = std::function<void(const rendezvous::Message&)>;

  // The ranks' states now; the changed ones go to the master (when `send` is given).
  void report(Generation generation, const std::vector<std::shared_ptr<Worker>>& workers, const Send& send);

 private:
  timeline::RankTransitions transitions_;
  std::vector<timeline::Event> waiting_;
};


}  // namespace ddplaunch
