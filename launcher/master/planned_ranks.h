// PlannedRanks: which node holds which rank in the current generation, as the master planned
// it. A node speaks for its own ranks only: the debug relay asks this before it believes a
// node's debugger messages (the JobCoordinator answers from its policy).
#pragma once

#include <string>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch {

// What the relay asks of the job's plan: the current generation, and which node each of its
// ranks was assigned to — a node speaks at the console only for its own ranks.
class PlannedRanks {
 public:
  virtual ~PlannedRanks() = default;
  virtual Generation current_generation() const = 0;
  // True when global rank `rank` of generation `generation` was assigned to node `node`.
  virtual bool node_holds(int node, int rank, Generation generation) const = 0;
  // The host of node `node` as it joined (its authenticated connection's), "?" when unknown.
  virtual std::string node_host(int node) const = 0;
};

}  // namespace ddplaunch
