// InitTracker: every rank's phase for one generation, as the master sees it, and the rule
// of the group's init deadline (DESIGN.md): the deadline runs only while no rank waits for
// a rank that has not entered init yet. A rank's init_entries says which init "round" it
// reached (init_process_group, then each lazily created communicator); a rank in init whose
// round some other rank has not reached yet is waiting for that rank, not hung. Pure: times
// come in as arguments.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "policy/rank_phase.h"

namespace ddplaunch {

using PolicyClock = std::chrono::steady_clock;

// The fields the state document saves (state_io.h); the classes of the policy befriend theirs.
template <class T>
struct StateFields;

struct TrackedRank {
  int node = 0;
  RankReport last;                // phase, pid, init entries, state text
  PolicyClock::time_point since;  // when it entered its current phase
  std::optional<PolicyClock::time_point> entered_init;  // its first init report of this generation
};

class InitTracker {
 public:
  // A new generation: every rank in setup since `now`. node_of_rank[r] = node of global rank r.
  void reset(const std::vector<int>& node_of_rank, PolicyClock::time_point now);
  // True when global rank `rank` of this generation runs on node `node`.
  bool holds(int node, int rank) const;
  // What applying one report did: whether it named a rank of this generation, and whether it
  // moved what the init rules read (the rank's phase, its init round, or its debugger). A
  // steady training job's periodic reports move none of it, so the rules, which look at every
  // rank, need not run again for them (at 16384 ranks they did, for each report).
  struct Applied {
    bool held = false;
    bool moved = false;
  };
  Applied update(int node, const RankReport& report, PolicyClock::time_point now);

  // True while the group's init deadline must run: some rank is in init and every live
  // rank has entered that init round too.
  bool deadline_applies() const;
  bool any_in_debugger() const;  // some rank is stopped in a debugger (its last report said so)
  // Ranks in init that no one else is waiting for: the ones the deadline judges.
  std::vector<int> ranks_in_judged_init() const;
  // When some ranks wait in init for others that have not reached that round: the ranks
  // behind (in setup, or running before the round) and how many wait for them.
  struct Waiting {
    std::vector<int> behind;  // global ranks the others wait for
    int waiting = 0;          // ranks in init waiting for them
    PolicyClock::time_point since;  // the earliest entry into init among the waiting ranks
  };
  std::optional<Waiting> waiting() const;
  // When the last rank of the group first entered init (nullopt while one has not): where
  // the group's init phase starts, and what the run history measures from.
  std::optional<PolicyClock::time_point> last_entered_init() const;
  // Ranks in setup for longer than `limit` at `now`.
  std::vector<int> in_setup_longer_than(std::chrono::milliseconds limit, PolicyClock::time_point now) const;

  const std::vector<TrackedRank>& ranks() const { return ranks_; }
  int world_size() const { return static_cast<int>(ranks_.size()); }

 private:
  friend struct StateFields<InitTracker>;  // the state document saves every field (policy_state.h)
  int lowest_round() const;  // min init_entries over ranks that have not exited; -1 if none

  std::vector<TrackedRank> ranks_;
};

// "rank 7 (node 2)" / "ranks 3, 7 (nodes 1, 2)" — at most 8 named, then "and N more".
std::string name_ranks(const std::vector<int>& ranks, const InitTracker& tracker);

// "35 s", "4 min", "1 h 5 min": durations rounded for people.
std::string human_duration(double seconds);

}  // namespace ddplaunch
