// One connection to the rendezvous server: its handshake state, the node it joined as, and
// what the heartbeats and rejoins know about it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "connection.h"
#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::rendezvous {

struct ServerPeer {
  enum class State { kHandshake, kJoined, kQuerying, kGone };  // kQuerying: a held query connection
  std::shared_ptr<detail::Connection> conn;
  State state = State::kHandshake;
  std::string nonce;
  Clock::time_point hello_sent, last_heard;  // hello_sent: its handshake timeout runs from it
  NodeRecord record;
  bool rank_requested = false;
  // The generation this node is ready for: it rejoined for it, or (membership) it had no
  // workers to stop. Ready for the generation the server waits on = rejoined.
  std::optional<Generation> ready_for;
  std::uint64_t hb_seq = 0;
  Clock::time_point hb_sent;
  // The slowest pace this node was told (a heartbeat or the welcome's announcement carries it);
  // 0: none, the node keeps its configured one.
  std::chrono::milliseconds pace_told{0};

  // After the credentials: the master proves the token in turn, before saying anything else.
  // With a token, every frame after the welcome is MACed both ways (frame_seal.h).
  void welcome(const std::string& token, const Frame& request);
  // The join was admitted: the peer is trusted with the full frame limit and holds `rank`
  // (-1: the server or the launcher gives it one later).
  void join_as(NodeFacts facts, int rank, std::size_t max_frame_bytes);
  // The server is done with this peer: what was sent is flushed (within the bound), then closed.
  void leave(std::chrono::milliseconds flush_bound);
};

// "node rank 2 (host 'n3', 10.0.0.3)", or "node (host '?', 10.0.0.9)" before it has a rank.
inline std::string describe(const ServerPeer& peer) {
  std::string host = peer.record.facts.hostname.empty() ? "?" : peer.record.facts.hostname;
  std::string rank = peer.record.node_rank >= 0 ? "node rank " + std::to_string(peer.record.node_rank) + " " : "node ";
  return rank + "(host '" + host + "', " + peer.conn->peer_ip() + ")";
}

}  // namespace ddplaunch::rendezvous
