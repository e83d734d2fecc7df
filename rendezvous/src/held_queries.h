// The query connections the server holds open (`ddplaunch status --watch`, `tail`, `debug`):
// each proved the token once and then asks over the same connection. A query may wait: "answer
// when your answer is no longer the one whose digest I send (`unless`), at most `wait_ms`".
// A waiting query is looked at again only when something may have changed (the launcher was
// told something: a message, a lost node, a plan; or another query was answered), at most
// once per kRecheckSpacing, and at its deadline; a held connection with nothing waiting costs
// nothing but its socket. Bounds: at most `max_held` connections, one answer outstanding per
// connection (a new query answers the waiting one first), a connection that asks nothing for
// kIdleLimit is closed, and the write queue's own bound fails a client that stops reading.
// Internal to rendezvous.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "server_peer.h"

namespace ddplaunch::rendezvous {

// What answers the queries: the launcher, through the server (Server::Impl).
class QueryDesk {
 public:
  virtual ~QueryDesk() = default;
  virtual std::string answer_query(const std::string& query) = 0;  // "" query: the status text
  virtual Frame reply_frame() const = 0;                           // a status_reply, addressed
};

// The digest a reply carries and a waiting query names (`unless`): equal digests, same answer.
std::string answer_digest(const std::string& text);

class HeldQueries {
 public:
  using PeerPtr = std::shared_ptr<ServerPeer>;
  using Clock = std::chrono::steady_clock;
  static constexpr auto kRecheckSpacing = std::chrono::milliseconds(50);
  static constexpr auto kIdleLimit = std::chrono::seconds(120);
  static constexpr auto kLastWordLinger = std::chrono::seconds(1);  // after the close (close())

  HeldQueries(boost::asio::io_context& io, QueryDesk& desk, std::size_t max_held, std::chrono::milliseconds max_wait);
  ~HeldQueries() { *alive_ = false; }
  HeldQueries(const HeldQueries&) = delete;
  HeldQueries& operator=(const HeldQueries&) = delete;

  bool full() const { return held_.size() >= max_held_; }
  std::size_t count() const { return held_.size(); }
  // The peer proved the token and asked to be held: from now on its status frames are queries.
  void hold(const PeerPtr& peer);
  void release(const ServerPeer* peer);
  // One query frame (fields "query", optionally "wait_ms", "unless", "seq"): answered now, or
  // kept waiting.
  void take(const PeerPtr& peer, const Frame& request);
  // Something the answers are made of may have changed: waiting queries are asked again.
  void may_have_changed();
  // The server closes: every waiting query gets its answer as it stands, and a client between
  // two queries gets it if it asks the same query again within kLastWordLinger (neither when
  // the server is being destroyed: its launcher may be half gone); every connection is then
  // flushed (within `flush_bound`) and closed.
  void close(std::chrono::milliseconds flush_bound, bool answer_waiting);

 private:
  struct Waiting {
    std::string query, unless, seq;
    Clock::time_point deadline;
  };
  struct Held {
    PeerPtr peer;
    std::optional<Waiting> waiting;
    Clock::time_point last_asked;
    std::string last_query;                // the query it asked last
    std::optional<std::string> last_word;  // after the close: the answer to last_query as it stood then
  };
  void give_last_word(Held& held, const Frame& request);
  void send(Held& held, const std::string& seq, std::string text);
  void recheck(bool deadlines_only);
  void arm_timer();
  Held* find(const ServerPeer* peer);

  boost::asio::io_context& io_;
  QueryDesk& desk_;
  std::size_t max_held_;
  std::chrono::milliseconds max_wait_;
  std::vector<Held> held_;
  boost::asio::steady_timer timer_;  // the earliest deadline, idle limit or deferred recheck
  Clock::time_point last_recheck_{};
  bool recheck_due_ = false;  // a change came within kRecheckSpacing of the last recheck
  bool closed_ = false;
  std::chrono::milliseconds flush_bound_{0};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // a timer's handler may outlive this
};

}  // namespace ddplaunch::rendezvous
