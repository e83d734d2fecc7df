// Membership: which launchers are the job's active nodes, which wait as hot
// spares, which were excluded or lost — and what a join, a loss or a bad node means for the
// next generation. Pure: events and times in, decisions out; JobPolicy acts on them.
//
// Rules:
//  - Slots 0..size-1 are the active node ranks. The job starts with MAX nodes, or with MIN
//    once the last call (`last_call_s` after MIN joined) ran out (torchrun's MIN:MAX).
//  - Up to `spares` more launchers wait idle. A lost or excluded active node is replaced by
//    the oldest spare *in its slot* (world size and the other ranks unchanged); with no spare
//    an elastic job shrinks (ranks renumbered contiguously) while >= MIN remain, and below
//    MIN waits `below_min_wait_s` for a launcher to join, then fails with the reason.
//  - A launcher joining a running job becomes a spare; an elastic job below MAX grows by it
//    at the next safe point (the policy asks grow_candidate()).
//  - A node whose ranks fail init first `exclude_after` times is excluded (cooldown before
//    its host may join again).
//  - Membership changes never spend the failure budget, but more than `max_changes` of them
//    end the job (a flapping node cannot loop it forever).
//  - Hosts that caused trouble in past runs (`reserve_hosts`, from the run history) are kept as
//    the spares when the job has spares. One that joins before the start (but the master's
//    own, or one on a host that has a node already) waits as a spare while the spare places last; a launcher that asked to be a spare
//    (--node-rank >= --nodes) takes the node place it left. It takes part only when no other
//    launcher came within the last call after every other node joined. A slot is refilled
//    from the other spares first; an elastic job does not grow by a reserved host.
//  - A node whose rank is a persistent straggler may be swapped for a spare (the job's
//    straggler action): excluded like a node that fails init, its slot refilled.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

enum class MemberRole { Active, Spare, Excluded, Lost };
std::string_view member_role_name(MemberRole role);  // "active", "spare", "excluded", "lost"
std::optional<MemberRole> member_role_from_name(std::string_view name);

struct MembershipSettings {
  int min_nodes = 1;
  int max_nodes = 1;           // MIN == MAX: a fixed-size job
  int spares = 0;
  double last_call_s = 30;     // elastic: wait this long for more nodes after MIN joined
  double below_min_wait_s = 300;
  int exclude_after = 2;       // first init failures on a node's ranks before it is excluded
  double exclude_cooldown_s = 0;
  int max_changes = 10;
  std::vector<std::string> reserve_hosts;  // kept as the spares when there are spares (past trouble)
};

struct Member {
  int id = 0;                  // stable for this launcher's connection (the rendezvous peer)
  std::string host;
  MemberRole role = MemberRole::Spare;
  int slot = -1;               // node rank while active (-1 before the start: given at the start)
  int requested_slot = -1;     // --node-rank, honoured at the start when below max_nodes
  std::string reason;          // why it is what it is ("promoted: replaced node 2 (lost: ...)")
  PolicyClock::time_point since{};
  int first_init_failures = 0;
};

// What a membership event means for the job.
struct MembershipChange {
  enum class Kind {
    None,        // nothing to do (e.g. a spare came or went)
    Start,       // enough nodes: start the first generation
    Replace,     // a spare took the lost/excluded slot: restart the group, same world
    Resize,      // elastic shrink or grow: restart the group with the new active set
    Wait,        // below MIN: wait (until `wait_until`) for a launcher to join
    Fail,        // the job cannot go on: `reason`
  } kind = Kind::None;
  std::string reason;          // for the log and the final report
  PolicyClock::time_point wait_until{};
  std::vector<int> excluded;   // member ids told to exit (with `reason`)
};

class Membership {
 public:
  explicit Membership(MembershipSettings settings) : settings_(std::move(settings)) {}

  // A launcher joined (host name for messages). Before the start it is one of the nodes
  // (unless it asked for a rank >= max_nodes, or all are here: a spare); after, it is a spare
  // (or refused during a cooldown / beyond the spare limit: refusal text in `refusal`).
  MembershipChange on_join(int id, const std::string& host, PolicyClock::time_point now, std::string* refusal,
                           int requested_slot = -1);
  // Time passed: the last call and the below-MIN wait end here.
  MembershipChange on_tick(PolicyClock::time_point now);
  // A member's launcher is gone (connection lost, heartbeat timeout, killed).
  MembershipChange on_lost(int id, const std::string& why, PolicyClock::time_point now);
  // The first init failure of a generation started on this active slot's ranks.
  MembershipChange on_first_init_failure(int slot, const std::string& what, PolicyClock::time_point now);
  // The node in `slot` holds the job back (a persistent straggler): with a spare it is
  // excluded and the spare takes its slot (Replace); without one nothing changes (None).
  MembershipChange on_straggler(int slot, const std::string& what, PolicyClock::time_point now);
  // An elastic job below MAX with a spare: the change that grows it (None otherwise).
  MembershipChange grow_candidate(PolicyClock::time_point now);

  bool started() const { return started_; }
  // A spare kept in reserve: its host caused trouble in past runs and has no node in the job.
  bool kept_in_reserve(int id) const;
  // No member that joined before this one is on its host.
  bool first_of_its_host(int id) const;
  // Before the start: at least MIN launchers are here, so the last call will start the job.
  bool min_reached() const { return min_reached_at_.has_value(); }
  int size() const;                               // active nodes
  std::vector<const Member*> active() const;      // by slot
  std::vector<int> active_ids() const;            // member ids by slot: the next generation's nodes
  const Member* member(int id) const;
  const std::vector<Member>& members() const { return members_; }
  std::string table(PolicyClock::time_point now) const;  // for status: one row per member

 private:
  friend struct StateFields<Membership>;  // the state document saves every field but settings_ (policy_state.h)
  Member* find(int id);
  Member* active_at(int slot);
  // The spare to promote: the oldest of those not kept in reserve, else (`reserve_too`) the
  // oldest reserved one.
  Member* oldest_spare(bool reserve_too = true);
  bool reserved(const Member& m) const;              // kept_in_reserve, by the member
  bool reserve_host(const std::string& host) const;  // one of settings_.reserve_hosts
  bool host_has_node(const std::string& host) const; // an active member runs there
  int spares_kept_in_reserve() const;
  MembershipChange exclude(Member& m, const std::string& reason, PolicyClock::time_point now);
  MembershipChange start_without_more_launchers(PolicyClock::time_point now);
  MembershipChange refill(int slot, const std::string& what, PolicyClock::time_point now);
  MembershipChange counted(MembershipChange change);  // applies the flap bound
  void renumber_active();
  MembershipChange start(std::string reason);  // slots for the first generation

  MembershipSettings settings_;
  std::vector<Member> members_;
  bool started_ = false;
  std::optional<PolicyClock::time_point> min_reached_at_;
  std::optional<PolicyClock::time_point> waiting_until_;
  // Before the start: since when only the spares kept in reserve keep the job from starting.
  std::optional<PolicyClock::time_point> reserve_call_from_;
  int changes_ = 0;
  std::vector<std::pair<std::string, PolicyClock::time_point>> cooldowns_;  // host, until
};

}  // namespace ddplaunch
