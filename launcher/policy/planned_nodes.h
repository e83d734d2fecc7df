// PlannedNodes: the nodes of the current generation, as planned (sorted by node rank), and
// each one's standing in it: its workers still run, all of them ended, or the node was lost.
// The job ends when none is active; the first non-zero exit a node reported is the job's
// exit status when the workers ended by themselves. Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "policy/failure.h"
#include "policy/init_tracker.h"

namespace ddplaunch {

template <class T>
struct StateFields;

// A planned node's standing in the current generation. Not its membership role (MemberRole:
// active, spare, excluded, lost across generations).
enum class NodeStanding { Active, Finished, Lost };
std::string_view node_standing_name(NodeStanding state);  // "active", "finished", "lost"
std::optional<NodeStanding> node_standing_from_name(std::string_view name);

class PlannedNodes {
 public:
  // A new generation of `nodes`: every one active.
  void plan(const std::vector<rendezvous::NodeRecord>& nodes);
  // Nobody planned (a new coordinator waits for the launchers to join again).
  void clear();

  // Node `node` stopped being active (its workers ended, or it was lost). False when it was
  // not an active node of this generation.
  bool finish(int node, NodeStanding standing, int exit_code);
  // A restart: the nodes whose workers ended run the next generation too.
  void reactivate_finished();
  int active_count() const;
  bool any_planned() const { return !standings_.empty(); }
  int first_failed_exit() const { return first_failed_exit_; }  // 0 while every node ended well

  const std::vector<rendezvous::NodeRecord>& records() const { return nodes_; }
  const rendezvous::NodeRecord* find(int node) const;  // nullptr: not a node of this generation
  std::string host_of(int node) const;                  // its hostname, or "?"
  // A failure the master itself observed for global rank `rank` (a deadline, a hang), in the
  // shape its node would report: node, host, local rank and pid from `state`.
  FailureReport failure_of_rank(int rank, const TrackedRank& state, FailurePhase phase, FailureKind kind,
                                std::string detail) const;
  // Node of each global rank: node_of_rank[r].
  std::vector<int> node_of_each_rank() const;
  // Membership: the members that hold a slot in this plan (the server keeps no record of who ran workers).
  std::vector<int> member_ids() const;

 private:
  friend struct StateFields<PlannedNodes>;  // the state document saves every field
  std::vector<rendezvous::NodeRecord> nodes_;
  std::map<int, NodeStanding> standings_;
  int first_failed_exit_ = 0;
};

}  // namespace ddplaunch
