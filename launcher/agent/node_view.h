// NodeView: what a node part may read of its node — its workers, its node rank, the step it
// is at (NodePolicy's state) — and nothing it could change. NodeAgent implements it; a part's
// unit test gives a fake (tests/unit/support/recording_master_link.h).
#pragma once

#include <memory>
#include <vector>

#include "policy/node_policy.h"
#include "supervise/worker.h"

namespace ddplaunch {

class NodeView {
 public:
  // This generation's workers (none before the first start).
  virtual const std::vector<std::shared_ptr<Worker>>& workers() const = 0;
  virtual bool workers_active() const = 0;  // some worker has not finished yet
  virtual int node_rank() const = 0;        // -1 before the first assignment
  virtual NodeState state() const = 0;

  // This node's worker of global rank `rank`; nullptr when it is another node's.
  std::shared_ptr<Worker> worker_of_rank(int rank) const {
    for (const auto& w : workers())
      if (w->global_rank == rank) return w;
    return nullptr;
  }

 protected:
  ~NodeView() = default;
};

}  // namespace ddplaunch
