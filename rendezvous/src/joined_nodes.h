// The nodes that joined the rendezvous server: in join order, and the slots of the current
// generation (node rank → the connection that holds it). Who is joined, who holds which rank,
// who is ready for a generation, and who is still missing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "server_peer.h"

namespace ddplaunch::rendezvous {

class JoinedNodes {
 public:
  using PeerPtr = std::shared_ptr<ServerPeer>;

  void open_slots(std::size_t count);  // that many ranks, all free
  // Joined: it holds the slot of its record's node rank, when it has one.
  void add(const PeerPtr& peer);
  // Left (or was sent away): out of the join order and of its slot.
  void remove(const PeerPtr& peer);
  void clear();

  PeerPtr holder(int rank) const;             // nullptr: free, or no such rank
  PeerPtr member(int member_id) const;        // a joined launcher by its member id (membership mode)
  // The first plan without membership: the requested ranks as asked, the others the lowest
  // free ranks in join order (assign_node_ranks).
  void rank_in_join_order();
  // Membership: generation's slots are these members, slot = index (a member gone meanwhile
  // leaves its slot empty); every other launcher holds no rank.
  void seat_members(const std::vector<int>& member_ids);

  int ready_count(Generation generation) const;     // slots whose node is ready for it
  bool every_slot_ready(Generation generation) const;
  // For progress reports and the join deadline, at most 16 entries and a count of the rest:
  // while rejoining, the slots lost or not ready for `generation`; while joining, the free
  // ranks (or how many more nodes, while some ranks are still unassigned).
  std::vector<std::string> missing(bool rejoining, Generation generation, int expected_nodes) const;
  std::vector<NodeRecord> slot_records() const;   // by node rank; every slot held

  const std::vector<PeerPtr>& in_join_order() const { return joined_; }
  const std::vector<PeerPtr>& slots() const { return by_rank_; }
  std::size_t count() const { return joined_.size(); }

 private:
  std::vector<PeerPtr> joined_;   // join order
  std::vector<PeerPtr> by_rank_;  // requested ranks at once, the others at the plan
};

}  // namespace ddplaunch::rendezvous
