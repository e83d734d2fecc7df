// Rendezvous server, membership mode: the launcher (JobPolicy's Membership) says which of
// the launchers that joined are the nodes of each generation, in which slot, and which must
// go. The server only admits (server_admission.cpp), reports and carries out.
#include <algorithm>

#include "server_impl.h"

namespace ddplaunch::rendezvous {

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
  maybe_plan_after_this_call();  // every node may be ready already (none of them ran workers)
}

void Server::Impl::dismiss_member(int member_id, const std::string& reason) {
  PeerPtr peer = nodes_.member(member_id);
  if (!peer) return;
  Frame f = frame_of(detail::kRefuse);
  f.fields["reason"] = reason;
  peer->conn->send(f);
  peer->leave(opt_.close_flush_bound);
  nodes_.remove(peer);
}

}  // namespace ddplaunch::rendezvous
