// Server: the frames a peer sends, dispatched by kind through server_routes (frame_routes.h):
// join or status first, then heartbeats, launcher messages and rejoins. The join, status and
// rejoin handlers are admission's (server_admission.cpp).
#include "frame_routes.h"
#include "server_impl.h"

namespace ddplaunch::rendezvous {

void Server::Impl::on_frame(const PeerPtr& peer, Frame& f) {
  peer->last_heard = Clock::now();
  if (peer->state == ServerPeer::State::kGone) return;
  const bool handshake = peer->state == ServerPeer::State::kHandshake;
  if (!handshake && f.job_id != opt_.job_id) {
    drop(peer, "sent a message for job '" + f.job_id + "', not this job");
    return;
  }
  static constexpr auto kRoutes = detail::server_routes<Impl>();
  const auto stage = handshake ? detail::PeerStage::Handshake
                     : peer->state == ServerPeer::State::kQuerying ? detail::PeerStage::Querying
                                                                    : detail::PeerStage::Joined;
  if (const auto* route = detail::find_route(kRoutes, detail::frame_kind(f.kind), stage))
    return (this->*route->handle)(peer, f);
  if (handshake) drop(peer, "expected a join or status request first, got '" + f.kind + "'");
  // Joined: unknown kinds (and handshake kinds) are ignored: a newer peer may send more.
}

// A heartbeat is answered only when it asks (one in kRttProbeEvery): otherwise this side's
// own heartbeats say it is alive.
void Server::Impl::on_heartbeat(const PeerPtr& peer, Frame& f) {
  if (!detail::asks_echo(f)) return;
  Frame ack = frame_of(detail::kHeartbeatAck);
  ack.fields = std::move(f.fields);
  peer->conn->send(ack);
}

void Server::Impl::on_heartbeat_ack(const PeerPtr& peer, Frame& f) {
  detail::note_heartbeat_ack(f.fields, peer->hb_seq, peer->hb_sent, peer->record.rtt_ms);
}

void Server::Impl::on_message(const PeerPtr& peer, Frame& f) {
  // Only a node that holds a rank speaks for the job: before the plan gives it one, what it
  // says would reach the launcher as node -1.
  if (peer->record.node_rank < 0) {
    notify_refused(peer->conn->peer(), "ignored message '" + f.subtype + "' from " + describe(*peer) +
                                           ": it has no node rank yet (all nodes must join first)");
    return;
  }
  if (cb_.on_message && phase_ != Phase::kClosed)
    cb_.on_message(peer->record.node_rank, Message{f.subtype, f.generation, std::move(f.fields)});
  held_queries_.may_have_changed();  // what the launcher was told may change its answers
}

}  // namespace ddplaunch::rendezvous
