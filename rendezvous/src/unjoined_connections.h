// The rendezvous server's connections that have not joined yet, and the bounds against
// strangers on them: those in their handshake (greeted, each holding a place), those waiting
// ungreeted for a place, the listeners paused while no place is left, and the heap handed
// back to the system after a flood.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

namespace ddplaunch::rendezvous {

struct ServerPeer;

class UnjoinedConnections {
 public:
  using tcp = boost::asio::ip::tcp;
  struct Bounds {
    std::size_t max_handshaking = 0;   // connections in their handshake, from all sources together
    std::size_t max_per_address = 0;   // the same, from one source address
    std::size_t places = 0;            // connections the job holds when complete: its nodes and spares
    // A waiting connection is asked whether its node left it (one system call) only when it
    // waited this long: a node gives one up only after its connect timeout (seconds).
    std::chrono::milliseconds ask_if_left_after{100};
  };
  struct Hooks {
    // A waiting connection's turn has come; its peer's address as accept gave it (port 0: unknown).
    std::function<void(tcp::socket, const tcp::endpoint&)> greet;
    std::function<void(tcp::acceptor&)> resume;      // a paused listener may accept again
  };
  UnjoinedConnections(Bounds bounds, Hooks hooks);

  // "" when a new connection from `ip` may start its handshake; else why it is closed at once.
  std::string over_cap(const std::string& ip) const;
  void begin_handshake(const std::shared_ptr<ServerPeer>& peer);
  // Joined, refused, answered or dropped: its place is free for the longest-waiting connection,
  // then paused listeners go on.
  void end_handshake(ServerPeer* peer);
  // `joined` (here and below): how many connections have joined, for the room left.
  // true: the listener waits for a free place (it is resumed from end_handshake).
  bool pause_at_cap(tcp::acceptor& listener, std::size_t joined);
  // true: the connection waits, ungreeted, for a place (with its peer's address, when known).
  bool wait_for_a_place(tcp::socket& socket, std::size_t joined, const tcp::endpoint& remote = {});
  // From the heartbeat sweep: after a flood of strangers, the freed heap goes back to the system.
  void trim_after_flood();
  // Closes the waiting connections, forgets the paused listeners and hands back the peers
  // still in their handshake (the server closes them gracefully).
  std::vector<std::shared_ptr<ServerPeer>> close();
  std::size_t handshaking() const { return handshaking_.size(); }
  // The connections greeted at or before `cutoff` and still in their handshake (too slow: the server
  // drops them), and the earliest greeting of those in their handshake (none: no one is).
  // One sweep for all of them instead of a timer per connection.
  std::vector<std::shared_ptr<ServerPeer>> greeted_by(std::chrono::steady_clock::time_point cutoff) const;
  std::optional<std::chrono::steady_clock::time_point> earliest_greeting() const;

 private:
  std::size_t room(std::size_t joined) const;  // how many more may wait

  Bounds bounds_;
  Hooks hooks_;
  std::unordered_map<ServerPeer*, std::shared_ptr<ServerPeer>> handshaking_;
  // How many of handshaking_ come from each address: kept beside it in begin_handshake and
  // end_handshake (and close), the only places handshaking_ changes.
  std::unordered_map<std::string, std::size_t> handshaking_from_;
  struct Waiting {
    tcp::socket socket;
    tcp::endpoint remote;
    std::chrono::steady_clock::time_point since;
  };
  std::deque<Waiting> waiting_;  // in arrival order
  std::vector<tcp::acceptor*> paused_listeners_;
  std::size_t peak_ = 0;                      // most connections in their handshake since the last trim
  bool closed_ = false;
};

}  // namespace ddplaunch::rendezvous
