// The rendezvous server's joined nodes and the slots of each generation.
#include "joined_nodes.h"

#include <algorithm>

#include "ddplaunch/rendezvous/node_rank_assignment.h"

namespace ddplaunch::rendezvous {

void JoinedNodes::open_slots(std::size_t count) { by_rank_.assign(count, nullptr); }

void JoinedNodes::add(const PeerPtr& peer) {
  const int rank = peer->record.node_rank;
  if (rank >= 0 && rank < static_cast<int>(by_rank_.size())) by_rank_[static_cast<std::size_t>(rank)] = peer;
  joined_.push_back(peer);
}

void JoinedNodes::remove(const PeerPtr& peer) {
  joined_.erase(std::remove(joined_.begin(), joined_.end(), peer), joined_.end());
  for (auto& slot : by_rank_)
    if (slot == peer) slot = nullptr;
}

void JoinedNodes::clear() {
  joined_.clear();
  by_rank_.clear();
}

JoinedNodes::PeerPtr JoinedNodes::holder(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(by_rank_.size())) return nullptr;
  return by_rank_[static_cast<std::size_t>(rank)];
}

JoinedNodes::PeerPtr JoinedNodes::member(int member_id) const {
  for (const auto& p : joined_)
    if (p->record.member_id == member_id && p->state == ServerPeer::State::kJoined) return p;
  return nullptr;
}

void JoinedNodes::rank_in_join_order() {
  std::vector<int> requested;  // in join order
  for (const auto& p : joined_) requested.push_back(p->rank_requested ? p->record.node_rank : -1);
  const auto ranks = assign_node_ranks(requested, by_rank_.size());
  for (std::size_t i = 0; i < joined_.size(); ++i) {
    joined_[i]->record.node_rank = ranks[i];
    by_rank_[static_cast<std::size_t>(ranks[i])] = joined_[i];
  }
}

void JoinedNodes::seat_members(const std::vector<int>& member_ids) {
  std::vector<PeerPtr> slots;
  for (int id : member_ids) slots.push_back(member(id));  // nullptr: gone meanwhile; never planned
  for (const auto& p : joined_) p->record.node_rank = -1;
  for (std::size_t slot = 0; slot < slots.size(); ++slot)
    if (slots[slot]) slots[slot]->record.node_rank = static_cast<int>(slot);
  by_rank_ = std::move(slots);
}

int JoinedNodes::ready_count(Generation generation) const {
  return static_cast<int>(std::count_if(by_rank_.begin(), by_rank_.end(),
                                        [generation](const PeerPtr& p) { return p && p->ready_for == generation; }));
}

bool JoinedNodes::every_slot_ready(Generation generation) const {
  return !by_rank_.empty() && ready_count(generation) == static_cast<int>(by_rank_.size());
}

std::vector<std::string> JoinedNodes::missing(bool rejoining, Generation generation, int expected_nodes) const {
  constexpr std::size_t kMaxListed = 16;
  std::vector<std::string> out;
  std::size_t total = 0;
  auto add = [&](std::string s) {
    if (++total <= kMaxListed) out.push_back(std::move(s));
  };
  if (rejoining) {
    for (std::size_t r = 0; r < by_rank_.size(); ++r) {
      const auto& p = by_rank_[r];
      if (!p) add("node rank " + std::to_string(r) + " (lost)");
      else if (p->ready_for != generation)
        add("node rank " + std::to_string(r) + " (host '" + p->record.facts.hostname + "')");
    }
  } else {
    int unranked = 0;
    for (const auto& p : joined_) unranked += p->rank_requested ? 0 : 1;
    int missing_count = expected_nodes - static_cast<int>(joined_.size());
    if (unranked == 0) {
      for (std::size_t r = 0; r < by_rank_.size(); ++r)
        if (!by_rank_[r]) add("node rank " + std::to_string(r));
    } else if (missing_count > 0) {
      add(std::to_string(missing_count) + " more node" + (missing_count == 1 ? "" : "s") + " (ranks unassigned)");
    }
  }
  if (total > kMaxListed) out.push_back("... and " + std::to_string(total - kMaxListed) + " more");
  return out;
}

std::vector<NodeRecord> JoinedNodes::slot_records() const {
  std::vector<NodeRecord> records;
  records.reserve(by_rank_.size());
  for (const auto& p : by_rank_) records.push_back(p->record);
  return records;
}

}  // namespace ddplaunch::rendezvous
