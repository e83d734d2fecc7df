// Server internals shared by server.cpp (connections, heartbeats, timers) and
// server_admission.cpp (join/status checks, rank assignment, plans).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "connection.h"
#include "ddplaunch/rendezvous/server.h"
#include "wire.h"

namespace ddplaunch::rendezvous {

struct ServerPeer {
  enum class State { kHandshake, kJoined, kGone };
  std::shared_ptr<detail::Connection> conn;
  std::unique_ptr<boost::asio::steady_timer> handshake_timer;
  State state = State::kHandshake;
  std::string nonce;
  Clock::time_point hello_sent, last_heard;
  NodeRecord record;
  bool rank_requested = false;
  // The generation this node is ready for: it rejoined for it, or (membership) it had no
  // workers to stop. Ready for the generation the server waits on = rejoined.
  std::optional<Generation> ready_for;
  std::uint64_t hb_seq = 0;
  Clock::time_point hb_sent;
};

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
 public:
  using tcp = boost::asio::ip::tcp;
  using PeerPtr = std::shared_ptr<ServerPeer>;
  enum class Phase { kIdle, kWaitingJoins, kRunning, kWaitingRejoins, kClosed };

  Impl(boost::asio::io_context& io, ServerOptions options, ServerCallbacks callbacks);

  // server.cpp
  ListenError listen(const std::vector<std::string>& bind_addresses, std::uint16_t port);
  ListenError listen_one(const std::string& bind_address, std::uint16_t port);
  std::uint16_t port() const;
  void accept_next(tcp::acceptor& acceptor);
  void on_accept(tcp::socket socket);
  void drop(const PeerPtr& peer, const std::string& why);
  void heartbeat_tick();
  void progress_tick();
  void start_wait_timers();
  void on_join_deadline();
  void send_message(const PeerPtr& peer, const Message& m);
  void close();
  void abort(const std::string& reason);
  Frame frame_of(const char* kind) const;
  Frame pre_proof_frame(const char* kind) const;  // no job id: for peers that proved nothing
  void notify_refused(const std::string& peer, const std::string& reason);

  // server_frames.cpp: each frame a peer sends goes through frame_routes.h's server_routes
  void on_frame(const PeerPtr& peer, Frame& frame);
  void on_heartbeat(const PeerPtr& peer, Frame& frame);
  void on_heartbeat_ack(const PeerPtr& peer, Frame& frame);
  void on_message(const PeerPtr& peer, Frame& frame);

  // server_limits.cpp
  std::string over_unjoined_cap(const std::string& ip) const;  // "" when a new peer may stay
  void note_unjoined_peak();
  bool pause_at_unjoined_cap(tcp::acceptor& acceptor);  // true: this listener waits for a free place
  bool wait_for_a_place(tcp::socket& socket);           // true: kept ungreeted in waiting_
  std::size_t waiting_room() const;                     // how many more waiting_ may hold
  void end_handshake(ServerPeer* peer);                 // joined, refused, answered or dropped
  void trim_after_flood();
  bool replace_silent_holder(int rank, const NodeFacts& joining);

  // server_admission.cpp
  void handle_join(const PeerPtr& peer, Frame& frame);
  void handle_status(const PeerPtr& peer, Frame& frame);
  std::string check_credentials(const PeerPtr& peer, const Frame& frame);
  void welcome(const PeerPtr& peer, const Frame& request);
  void refuse(const PeerPtr& peer, const std::string& reason);
  void handle_rejoin(const PeerPtr& peer, Frame& frame);
  void begin_generation(Generation generation);
  void maybe_plan();
  bool rejoined(const ServerPeer& peer) const { return peer.ready_for == generation_; }
  int rejoined_count() const;  // nodes of the awaited generation that are ready for it
  std::string check_node_count(const NodeFacts& facts, const std::string& who) const;
  std::string check_requested_rank(const NodeFacts& facts, const std::string& who, int& requested_rank);
  void accept_join(const PeerPtr& peer, NodeFacts facts, int rank);

  // server_members.cpp (membership mode)
  void admit_member(const PeerPtr& peer, NodeFacts facts, const std::string& who);
  void begin_member_generation(Generation generation, const std::vector<int>& member_ids,
                               const std::vector<int>& ran_workers);
  PeerPtr find_member(int member_id) const;
  void dismiss_member(int member_id, const std::string& reason);
  void plan_generation();
  std::vector<std::string> missing() const;
  std::string describe(const ServerPeer& peer) const;

  boost::asio::io_context& io_;
  ServerOptions opt_;
  ServerCallbacks cb_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;  // one per bound address
  std::vector<tcp::acceptor*> paused_acceptors_;            // at the cap of unjoined peers (server_limits.cpp)
  boost::asio::steady_timer join_timer_, progress_timer_, heartbeat_timer_;
  detail::SilenceJudge silence_;  // a late heartbeat tick judges nobody
  std::unordered_map<ServerPeer*, PeerPtr> handshaking_;
  std::deque<tcp::socket> waiting_;  // accepted while every handshake place was taken (server_limits.cpp)
  std::vector<PeerPtr> joined_;   // join order
  std::vector<PeerPtr> by_rank_;  // size expected_nodes; requested ranks at once, others at plan
  Phase phase_ = Phase::kIdle;
  bool planned_once_ = false;
  Generation generation_;
  Clock::time_point wait_started_;
  std::size_t unjoined_peak_ = 0;  // most peers waiting to join since the last trim
  int next_member_id_ = 0;
};

}  // namespace ddplaunch::rendezvous
