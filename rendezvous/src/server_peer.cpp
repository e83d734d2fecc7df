#include "server_peer.h"

#include "handshake.h"

namespace ddplaunch::rendezvous {

void ServerPeer::welcome(const std::string& token, const Frame& request) {
  conn->send(detail::welcome_for(token, nonce, request));
  if (auto seal = detail::master_session_seal(token, nonce, request)) conn->seal_frames(std::move(*seal));
}

void ServerPeer::join_as(NodeFacts facts, int rank, std::size_t max_frame_bytes) {
  state = State::kJoined;
  conn->limit_incoming_frames(max_frame_bytes);
  record.facts = std::move(facts);
  record.node_rank = rank;
  rank_requested = rank >= 0;
  record.observed_address = conn->peer_ip();
  record.rtt_ms = std::chrono::duration<double, std::milli>(Clock::now() - hello_sent).count();
}

void ServerPeer::leave(std::chrono::milliseconds flush_bound) {
  conn->close_graceful(flush_bound);
  state = State::kGone;
}

}  // namespace ddplaunch::rendezvous
