// Rendezvous server, membership mode: launchers join at any time up to the job's
// nodes plus its spares; the launcher (JobPolicy's Membership) says which of them are the
// nodes of each generation, in which slot. The server only admits, reports and carries out.
#include <algorithm>

#include "server_impl.h"

namespace ddplaunch::rendezvous {

void Server::Impl::admit_member(const PeerPtr& peer, NodeFacts facts, const std::string& who) {
  if (std::string why = check_node_count(facts, who); !why.empty()) return refuse(peer, why);
  const int capacity = opt_.expected_nodes + opt_.max_spares;
  if (static_cast<int>(nodes_.count()) >= capacity) {
    return refuse(peer, "too many launchers: the job has room for " + std::to_string(opt_.expected_nodes) +
                            " nodes and " + std::to_string(opt_.max_spares) + " spare(s), and all are here; " + who +
                            " is one too many (start every launcher with a larger --spares to keep more spares)");
  }
  // Once the job runs, where a late launcher goes is the launcher's call: its rank is a wish
  // for the first generation only. (A rank at or above the node count stays as asked before
  // the start: the launcher reads it as "a spare".)
  int req = planned_once_ ? -1 : facts.requested_node_rank;
  if (std::string why = check_requested_rank(facts, who, req); !why.empty()) return refuse(peer, why);
  accept_join(peer, std::move(facts), req);
  peer->record.member_id = next_member_id_++;
  if (cb_.on_member_joined && phase_ != Phase::kClosed) cb_.on_member_joined(peer->record);
}

void Server::Impl::begin_member_generation(Generation generation, const std::vector<int>& member_ids,
                                           const std::vector<int>& ran_workers) {
  if (phase_ == Phase::kClosed) return;
  nodes_.seat_members(member_ids);
  generation_ = generation;
  phase_ = Phase::kWaitingRejoins;
  for (const auto& p : nodes_.slots()) {
    if (!p) continue;
    // A launcher without workers in the last generation has nothing to stop: it is ready.
    const bool ran = std::find(ran_workers.begin(), ran_workers.end(), p->record.member_id) != ran_workers.end();
    if (!ran) p->ready_for = generation;
  }
  start_wait_timers();
  maybe_plan();  // every node may be ready already (none of them ran workers)
}

void Server::Impl::dismiss_member(int member_id, const std::string& reason) {
  PeerPtr peer = nodes_.member(member_id);
  if (!peer) return;
  Frame f = frame_of(detail::kRefuse);
  f.fields["reason"] = reason;
  peer->conn->send(f);
  peer->conn->close_graceful(opt_.close_flush_bound);
  peer->state = ServerPeer::State::kGone;
  nodes_.remove(peer);
}

}  // namespace ddplaunch::rendezvous
