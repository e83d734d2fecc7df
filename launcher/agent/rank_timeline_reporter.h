// RankTimelineReporter: a node's part of the job's timeline. Whenever the node looks at its
// ranks (each rank-state report, within 20 ms of a change, and before a failure report), the
// ranks whose state moved on become timeline events, sent to the master with this node's
// clock, so that the master can align them. Events wait (bounded) while no master listens.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "agent/master_link.h"
#include "supervise/worker.h"
#include "timeline/rank_transitions.h"

namespace ddplaunch {

class RankTimelineReporter {
 public:
  static constexpr std::size_t kMaxWaitingEvents = 16384;  // the oldest beyond it are dropped

  // The ranks' states now, in `master`'s generation; the changed ones go to the master (they
  // wait while it is not connected).
  void report(const std::vector<std::shared_ptr<Worker>>& workers, MasterLink& master);

 private:
  timeline::RankTransitions transitions_;
  std::vector<timeline::Event> waiting_;
};


}  // namespace ddplaunch
