// Which frames each side takes, and when: a frame's kind is decoded once into a FrameKind,
// then looked up in its side's table (kind, stage → handler), as redis looks up a command.
// A frame that finds no route (an unknown kind, or a kind out of its stage) is each side's
// own explicit case: dropped, lost or ignored (server.cpp, client.cpp). Internal to rendezvous.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "ddplaunch/rendezvous/codec.h"

namespace ddplaunch::rendezvous::detail {

// Every frame kind of the protocol (their names: wire.h's kHello ... kMsg).
enum class FrameKind { Hello, Welcome, Join, Status, StatusReply, Assign, Refuse, Abort, Progress, Rejoin,
                       Heartbeat, HeartbeatAck, Msg };
inline constexpr std::size_t kFrameKindCount = 13;

std::optional<FrameKind> frame_kind(std::string_view name);  // nullopt: a kind this build does not know
std::string_view frame_kind_name(FrameKind kind);

// A route: the kind it takes, the stage of the connection it is taken in, its handler.
template <class Stage, class Handler>
struct FrameRoute {
  FrameKind kind;
  Stage stage;
  Handler handle;
};

// The route of a frame of `kind` in `stage`; nullptr when there is none.
template <class Stage, class Handler, std::size_t N>
constexpr const FrameRoute<Stage, Handler>* find_route(const std::array<FrameRoute<Stage, Handler>, N>& routes,
                                                       std::optional<FrameKind> kind, Stage stage) {
  if (!kind) return nullptr;
  for (const auto& route : routes)
    if (route.kind == *kind && route.stage == stage) return &route;
  return nullptr;
}

// The server's side. A peer first proves itself with a join or a status request; once joined
// it speaks heartbeats, launcher messages and rejoins; a status request that asked to be held
// (`ddplaunch status --watch`, tail, debug) asks further queries over the same connection
// (Server::Impl; tests pass a recorder).
enum class PeerStage { Handshake, Joined, Querying };

template <class Target>
using ServerHandler = void (Target::*)(const typename Target::PeerPtr&, Frame&);

template <class Target>
constexpr std::array<FrameRoute<PeerStage, ServerHandler<Target>>, 7> server_routes() {
  return {{
      {FrameKind::Join, PeerStage::Handshake, &Target::handle_join},
      {FrameKind::Status, PeerStage::Handshake, &Target::handle_status},
      {FrameKind::Status, PeerStage::Querying, &Target::handle_held_query},
      {FrameKind::Heartbeat, PeerStage::Joined, &Target::on_heartbeat},
      {FrameKind::HeartbeatAck, PeerStage::Joined, &Target::on_heartbeat_ack},
      {FrameKind::Msg, PeerStage::Joined, &Target::on_message},
      {FrameKind::Rejoin, PeerStage::Joined, &Target::handle_rejoin},
  }};
}

// The client's side. Greeting: waiting for the master's hello; Proof: the join is sent and
// only the master's proof (welcome) or a refusal is believed; Session: everything after it.
enum class LinkStage { Greeting, Proof, Session };

template <class Target>
using ClientHandler = void (Target::*)(Frame&);

template <class Target>
constexpr std::array<FrameRoute<LinkStage, ClientHandler<Target>>, 10> client_routes() {
  return {{
      {FrameKind::Hello, LinkStage::Greeting, &Target::on_hello},
      {FrameKind::Welcome, LinkStage::Proof, &Target::on_welcome},
      {FrameKind::Refuse, LinkStage::Proof, &Target::on_refuse},  // a refusal needs no proof
      {FrameKind::Refuse, LinkStage::Session, &Target::on_refuse},
      {FrameKind::Assign, LinkStage::Session, &Target::on_assign},
      {FrameKind::Abort, LinkStage::Session, &Target::on_abort},
      {FrameKind::Progress, LinkStage::Session, &Target::on_progress},
      {FrameKind::Heartbeat, LinkStage::Session, &Target::on_heartbeat},
      {FrameKind::HeartbeatAck, LinkStage::Session, &Target::on_heartbeat_ack},
      {FrameKind::Msg, LinkStage::Session, &Target::on_message},
  }};
}

}  // namespace ddplaunch::rendezvous::detail
