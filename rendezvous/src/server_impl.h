// Server internals shared by server.cpp (connections, heartbeats, timers),
// server_admission.cpp (join/status handling, plans) and server_members.cpp. The rules of a
// join are join_rules.h's; a peer's own steps (welcome, join, leave) are ServerPeer's.
#pragma once

#include <memory>
#include <optional>
#include <vector>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "connection.h"
#include "held_queries.h"
#include "ddplaunch/rendezvous/server.h"
#include "join_rules.h"
#include "joined_nodes.h"
#include "keepalive_pace.h"
#include "server_listeners.h"
#include "server_peer.h"
#include "unjoined_connections.h"
#include "wire.h"

namespace ddplaunch::rendezvous {

class Server::Impl : public std::enable_shared_from_this<Server::Impl>, public QueryDesk {
 public:
  using tcp = boost::asio::ip::tcp;
  using PeerPtr = std::shared_ptr<ServerPeer>;
  enum class Phase { kIdle, kWaitingJoins, kRunning, kWaitingRejoins, kClosed };

  Impl(boost::asio::io_context& io, ServerOptions options, ServerCallbacks callbacks);

  // server.cpp
  ListenError listen(const std::vector<std::string>& bind_addresses, std::uint16_t port);
  void accept_next(tcp::acceptor& acceptor);
  void accept_ready(tcp::acceptor& acceptor);
  void accept_failed(tcp::acceptor& acceptor, const boost::system::error_code& ec);
  static constexpr int kAcceptBatch = 64;  // accepted per turn of the loop, at most
  void on_accept(tcp::socket socket, const tcp::endpoint& accepted_from);  // port 0: ask the socket
  void drop(const PeerPtr& peer, const std::string& why);
  // One timer for every connection in its handshake: it fires at the earliest one's timeout.
  void watch_handshakes();
  void drop_slow_handshakes();
  void heartbeat_tick();
  void progress_tick();
  std::chrono::milliseconds progress_interval_to_nodes() const;
  void start_wait_timers();
  void on_join_deadline();
  void send_message(const PeerPtr& peer, const Message& m);
  void close(bool answer_waiting_queries = true);
  void abort(const std::string& reason);
  Frame frame_of(const char* kind) const;
  void notify_refused(const std::string& peer, const std::string& reason);

  // server_frames.cpp: each frame a peer sends goes through frame_routes.h's server_routes
  void on_frame(const PeerPtr& peer, Frame& frame);
  void on_heartbeat(const PeerPtr& peer, Frame& frame);
  void on_heartbeat_ack(const PeerPtr& peer, Frame& frame);
  void on_message(const PeerPtr& peer, Frame& frame);

  // server_admission.cpp
  bool replace_silent_holder(int rank, const NodeFacts& joining);
  void handle_join(const PeerPtr& peer, Frame& frame);
  void handle_status(const PeerPtr& peer, Frame& frame);
  void handle_held_query(const PeerPtr& peer, Frame& frame) { held_queries_.take(peer, frame); }
  std::string answer_query(const std::string& query) override;  // the launcher's answer ("": status)
  Frame reply_frame() const override { return frame_of(detail::kStatusReply); }
  void refuse(const PeerPtr& peer, const std::string& reason);
  void handle_rejoin(const PeerPtr& peer, Frame& frame);
  void begin_generation(Generation generation);
  void maybe_plan();
  void maybe_plan_after_this_call();  // from the event loop: never inside the launcher's call
  void admit(const PeerPtr& peer, NodeFacts facts, const std::string& who);  // asks join_rules.h

  // server_members.cpp (membership mode)
  void begin_member_generation(Generation generation, const std::vector<int>& member_ids,
                               const std::vector<int>& ran_workers);
  void dismiss_member(int member_id, const std::string& reason);
  void plan_generation();
  std::vector<std::string> missing() const { return nodes_.missing(phase_ == Phase::kWaitingRejoins, generation_, opt_.expected_nodes); }

  boost::asio::io_context& io_;
  ServerOptions opt_;
  ServerCallbacks cb_;
  ServerListeners listeners_;  // one per bound address
  boost::asio::steady_timer join_timer_, progress_timer_, heartbeat_timer_;
  boost::asio::steady_timer handshake_sweep_timer_;
  bool handshake_sweep_armed_ = false;
  detail::SilenceJudge silence_;  // a late heartbeat tick judges nobody
  // The heartbeat interval and silence timeout now: the configured ones, stretched as the job
  // grows (keepalive_pace.h); never shortened during a job, since nodes pace by what they were told.
  detail::KeepalivePace pace_;
  Clock::time_point progress_sent_;  // when the nodes last got a progress frame
  UnjoinedConnections unjoined_;  // in their handshake, or waiting for a place
  JoinedNodes nodes_;             // join order, and the generation's slots
  HeldQueries held_queries_;      // query connections held open, their waiting queries
  Phase phase_ = Phase::kIdle;
  bool planned_once_ = false;
  Generation generation_;
  int next_member_id_ = 0;
};

}  // namespace ddplaunch::rendezvous
