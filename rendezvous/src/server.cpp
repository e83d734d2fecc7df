// Rendezvous server: accepting, per-connection plumbing, heartbeats, progress and join deadline.
// Admission (who may join, which rank, the plan) is in server_admission.cpp; the frames a
// peer sends are dispatched in server_frames.cpp. The listening sockets are ServerListeners';
// the bounds on connections that have not joined, UnjoinedConnections'.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "join_rules.h"
#include "server_impl.h"

namespace ddplaunch::rendezvous {
Server::Impl::Impl(boost::asio::io_context& io, ServerOptions options, ServerCallbacks callbacks)
    : io_(io), opt_(std::move(options)), cb_(std::move(callbacks)),
      listeners_(io), join_timer_(io), progress_timer_(io), heartbeat_timer_(io), handshake_sweep_timer_(io),
      // Paced for the whole job from the start: the nodes that joined first must not spend the
      // master's time on heartbeats while thousands of others are still joining.
      pace_(detail::keepalive_pace(opt_.heartbeat_interval, opt_.heartbeat_timeout,
                                   static_cast<std::size_t>(std::max(0, join_rules::job_places(opt_))),
                                   opt_.keepalive_budget_per_s)),
      unjoined_({opt_.max_unjoined_connections, opt_.max_unjoined_per_address,
                 static_cast<std::size_t>(join_rules::job_places(opt_))},
                {[this](tcp::socket socket, const tcp::endpoint& remote) { on_accept(std::move(socket), remote); },
                 [this](tcp::acceptor& listener) { accept_next(listener); }}),
      held_queries_(io, *this, opt_.max_held_queries, opt_.max_query_wait) {}

ListenError Server::Impl::listen(const std::vector<std::string>& bind_addresses, std::uint16_t port) {
  if (phase_ != Phase::kIdle) return {{}, "the rendezvous server is already listening or closed"};
  if (opt_.expected_nodes < 1) return {{}, "expected_nodes must be at least 1"};
  std::vector<std::string> addresses = bind_addresses;
  if (addresses.empty()) addresses.push_back("0.0.0.0");
  if (ListenError error = listeners_.bind_all(addresses, port); error.failed()) return error;
  nodes_.open_slots(static_cast<std::size_t>(opt_.expected_nodes));
  phase_ = Phase::kWaitingJoins;
  start_wait_timers();
  heartbeat_tick();
  for (tcp::acceptor* listener : listeners_.all()) accept_next(*listener);
  return {};
}

// Waits until the listener has connections to accept, then accepts them (accept_ready).
void Server::Impl::accept_next(tcp::acceptor& acceptor) {
  if (unjoined_.pause_at_cap(acceptor, nodes_.count())) return;
  acceptor.async_wait(tcp::acceptor::wait_read, [self = shared_from_this(), &acceptor](const boost::system::error_code& ec) {
    if (self->phase_ == Phase::kClosed || ec == boost::asio::error::operation_aborted) return;
    if (ec) return self->accept_failed(acceptor, ec);
    self->accept_ready(acceptor);
  });
}

// Accepts what the listener holds, a bounded batch per turn of the loop, each socket
// non-blocking and close-on-exec from the start (accept4: no fcntl per connection; Asio's
// accept sets neither), with its peer's address (no getpeername either).
void Server::Impl::accept_ready(tcp::acceptor& acceptor) {
  for (int accepted = 0; accepted < kAcceptBatch; ++accepted) {
    if (phase_ == Phase::kClosed || unjoined_.pause_at_cap(acceptor, nodes_.count())) return;
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int fd = ::accept4(acceptor.native_handle(), reinterpret_cast<sockaddr*>(&address), &length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return accept_next(acceptor);  // all taken: wait for more
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;   // that one left: the next
      // Out of descriptors after accepting some: those may be connections their nodes already
      // left, whose descriptors come back as soon as the loop reads their end; try again after
      // it, and back off only when nothing could be accepted at all.
      if (accepted > 0 && (errno == EMFILE || errno == ENFILE)) return accept_next(acceptor);
      return accept_failed(acceptor, boost::system::error_code(errno, boost::system::system_category()));
    }
    tcp::endpoint remote;
    std::memcpy(remote.data(), &address, std::min<std::size_t>(length, remote.capacity()));
    remote.resize(std::min<std::size_t>(length, remote.capacity()));
    tcp::socket socket(io_);
    boost::system::error_code ec;
    socket.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
    if (ec) {
      ::close(fd);
      return accept_failed(acceptor, ec);
    }
    if (!unjoined_.wait_for_a_place(socket, nodes_.count(), remote)) on_accept(std::move(socket), remote);
  }
  boost::asio::post(io_, [self = shared_from_this(), &acceptor] {  // more may wait: after the others' turn
    if (self->phase_ != Phase::kClosed) self->accept_ready(acceptor);
  });
}

// EMFILE and friends: say so, back off briefly instead of spinning.
void Server::Impl::accept_failed(tcp::acceptor& acceptor, const boost::system::error_code& ec) {
  const bool out_of_fds = ec == boost::asio::error::no_descriptors ||
                          ec.value() == ENFILE;  // per process / for the whole system
  notify_refused("(listener)", "could not accept a connection: " + ec.message() +
                                   (out_of_fds ? " (the master is out of file descriptors: raise its "
                                                 "limit, `ulimit -n`; retrying every 100 ms, nodes retry "
                                                 "their connection meanwhile)"
                                               : " (retrying in 100 ms)"));
  // One timer per listener's retry: listeners failing together must not cancel each other.
  auto retry = std::make_shared<boost::asio::steady_timer>(io_, std::chrono::milliseconds(100));
  retry->async_wait([self = shared_from_this(), &acceptor, retry](const boost::system::error_code& e) {
    if (!e && self->phase_ != Phase::kClosed) self->accept_next(acceptor);
  });
}

Frame Server::Impl::frame_of(const char* kind) const {
  Frame f;
  f.kind = kind;
  f.job_id = opt_.job_id;
  f.generation = generation_;
  return f;
}

void Server::Impl::on_accept(tcp::socket socket, const tcp::endpoint& accepted_from) {
  boost::system::error_code ec;
  const tcp::endpoint remote = accepted_from.port() != 0 ? accepted_from : socket.remote_endpoint(ec);
  if (ec) return;  // already gone (reset while it waited in the backlog)
  if (std::string why = unjoined_.over_cap(remote.address().to_string()); !why.empty()) {
    socket.close(ec);  // cheap: no buffers, no timer, no greeting
    notify_refused(remote.address().to_string() + ":" + std::to_string(remote.port()), why);
    return;
  }
  auto peer = std::make_shared<ServerPeer>();
  peer->conn = std::make_shared<detail::Connection>(std::move(socket), remote, opt_.max_frame_bytes);
  peer->conn->limit_incoming_frames(std::min(opt_.max_handshake_frame_bytes, opt_.max_frame_bytes));  // raised on join
  peer->nonce = random_nonce();
  if (peer->nonce.empty()) {  // never greet with a guessable challenge
    peer->conn->close_now();
    notify_refused(peer->conn->peer(), "cannot draw a random nonce (getrandom failed); dropped");
    return;
  }
  peer->hello_sent = peer->last_heard = Clock::now();
  unjoined_.begin_handshake(peer);
  std::weak_ptr<ServerPeer> weak = peer;
  auto self = shared_from_this();
  peer->conn->start(
      [self, weak](Frame& f) {
        if (auto p = weak.lock()) self->on_frame(p, f);
      },
      [self, weak](const std::string& why) {
        if (auto p = weak.lock()) self->drop(p, why);
      });
  // The greeting says nothing about the job (no job id, launcher version, node count): only
  // the challenge, and the wire version so that an old node can say what differs.
  Frame hello = detail::bare_frame(detail::kHello);
  hello.fields["nonce"] = peer->nonce;
  hello.fields["protocol"] = std::to_string(kProtocolVersion);
  peer->conn->send(hello);
  watch_handshakes();
}

// While any connection is in its handshake, the sweep timer waits for the earliest one's
// timeout (it is already waiting when armed: a later connection's timeout comes later).
void Server::Impl::watch_handshakes() {
  if (handshake_sweep_armed_ || phase_ == Phase::kClosed) return;
  const auto earliest = unjoined_.earliest_greeting();
  if (!earliest) return;
  handshake_sweep_armed_ = true;
  handshake_sweep_timer_.expires_at(*earliest + opt_.handshake_timeout);
  handshake_sweep_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->handshake_sweep_armed_ = false;
    if (!ec) self->drop_slow_handshakes();
  });
}

void Server::Impl::drop_slow_handshakes() {
  for (const PeerPtr& p : unjoined_.greeted_by(Clock::now() - opt_.handshake_timeout)) {
    if (p->state != ServerPeer::State::kHandshake) continue;
    drop(p, "sent no complete join or status request within " + detail::format_seconds(opt_.handshake_timeout) +
                " (handshake timeout); dropped");
  }
  watch_handshakes();
}

// Reasons quote what peers sent (job ids, hostnames, kinds): escaped before anyone logs them.
void Server::Impl::notify_refused(const std::string& peer, const std::string& reason) {
  if (cb_.on_refused && phase_ != Phase::kClosed) cb_.on_refused(peer, printable(reason));
}

void Server::Impl::drop(const PeerPtr& peer, const std::string& why) {
  if (peer->state == ServerPeer::State::kGone) return;
  auto old_state = peer->state;
  peer->state = ServerPeer::State::kGone;
  peer->conn->close_now();
  if (old_state == ServerPeer::State::kHandshake) {
    unjoined_.end_handshake(peer.get());
    notify_refused(peer->conn->peer(), why);
    return;
  }
  if (old_state == ServerPeer::State::kQuerying) return held_queries_.release(peer.get());  // a client left
  nodes_.remove(peer);
  if (!planned_once_ && !opt_.launcher_assigns_slots) {
    notify_refused(peer->conn->peer(), describe(*peer) + " left before all nodes joined: " + why +
                                           "; its place is free again");
    return;
  }
  if (cb_.on_node_lost && phase_ != Phase::kClosed) cb_.on_node_lost(peer->record, printable(why));
  held_queries_.may_have_changed();
}

void Server::Impl::heartbeat_tick() {
  if (phase_ == Phase::kClosed) return;
  unjoined_.trim_after_flood();
  auto now = Clock::now();
  const detail::KeepalivePace wanted = detail::keepalive_pace(opt_.heartbeat_interval, opt_.heartbeat_timeout,
                                                              nodes_.count(), opt_.keepalive_budget_per_s);
  if (wanted.interval > pace_.interval) pace_ = wanted;
  const bool judge = silence_.may_judge(now, pace_.interval);
  std::vector<PeerPtr> silent;
  for (const auto& p : nodes_.in_join_order()) {
    if (judge && now - p->last_heard > pace_.timeout) {
      silent.push_back(p);
      continue;
    }
    const bool pace_told = pace_.interval == opt_.heartbeat_interval || p->pace_told == pace_.interval;
    if (!detail::heartbeat_due(now, p->conn->last_sent(), pace_.interval / 2, pace_told)) continue;
    Frame hb = frame_of(detail::kHeartbeat);
    detail::put_heartbeat(hb, ++p->hb_seq, pace_.interval);  // the node paces itself by it
    p->hb_sent = now;
    p->pace_told = pace_.interval;
    p->conn->send(hb);
  }
  for (const auto& p : silent) {
    auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(now - p->last_heard);
    drop(p, "no message from " + describe(*p) + " for " + detail::format_seconds(quiet) +
                " (heartbeat timeout " + detail::format_seconds(pace_.timeout) + ")");
  }
  heartbeat_timer_.expires_after(pace_.interval);
  heartbeat_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->heartbeat_tick();
  });
}

void Server::Impl::start_wait_timers() {
  join_timer_.expires_after(opt_.join_timeout);
  join_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->on_join_deadline();
  });
  progress_sent_ = Clock::now();
  progress_timer_.expires_after(opt_.progress_interval);
  progress_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->progress_tick();
  });
}

// How often the nodes hear how the join goes: every progress interval, or, once the job is too
// large for the keep-alive budget, no more often than its heartbeats (20 s at 16384 nodes),
// so that telling every node costs the master no more than the keep-alive does.
std::chrono::milliseconds Server::Impl::progress_interval_to_nodes() const {
  return pace_.interval > opt_.heartbeat_interval ? std::max(opt_.progress_interval, pace_.interval)
                                                  : opt_.progress_interval;
}

void Server::Impl::progress_tick() {
  if (phase_ != Phase::kWaitingJoins && phase_ != Phase::kWaitingRejoins) return;
  const bool rejoins = phase_ == Phase::kWaitingRejoins;
  int expected = rejoins ? static_cast<int>(nodes_.slots().size()) : opt_.expected_nodes;
  int joined = rejoins ? nodes_.ready_count(generation_) : static_cast<int>(nodes_.count());
  auto miss = missing();
  Frame progress = frame_of(detail::kProgress);
  progress.fields["joined"] = std::to_string(joined);
  progress.fields["expected"] = std::to_string(expected);
  progress.fields["missing"] = detail::join_list(miss);
  if (const auto now = Clock::now(); now - progress_sent_ >= progress_interval_to_nodes()) {
    progress_sent_ = now;
    for (const auto& p : nodes_.in_join_order()) p->conn->send(progress);
  }
  if (cb_.on_progress) cb_.on_progress(joined, expected, miss);
  if (phase_ != Phase::kWaitingJoins && phase_ != Phase::kWaitingRejoins) return;
  progress_timer_.expires_after(opt_.progress_interval);
  progress_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->progress_tick();
  });
}

// Reports the missing nodes; whether the job ends is the launcher's decision (abort()).
void Server::Impl::on_join_deadline() {
  if (phase_ != Phase::kWaitingJoins && phase_ != Phase::kWaitingRejoins) return;
  JoinTimeout timeout;
  timeout.missing = missing();
  timeout.during_rejoin = phase_ == Phase::kWaitingRejoins;
  std::string what = !timeout.during_rejoin
                         ? "join timeout: after " + detail::format_seconds(opt_.join_timeout) +
                               " only " + std::to_string(nodes_.count()) + " of " +
                               std::to_string(opt_.expected_nodes) + " nodes have joined"
                         : "rejoin timeout for generation " + to_string(generation_) +
                               ": after " + detail::format_seconds(opt_.join_timeout) + " only " +
                               std::to_string(nodes_.ready_count(generation_)) + " of " +
                               std::to_string(nodes_.slots().size()) + " nodes have rejoined";
  timeout.what = what + "; missing " + detail::join_list(timeout.missing);
  if (cb_.on_join_timeout) cb_.on_join_timeout(timeout);
  else abort(timeout.what);  // no launcher to decide: a wait must still end
}

void Server::Impl::abort(const std::string& reason) {
  if (phase_ == Phase::kClosed) return;
  Frame frame = frame_of(detail::kAbort);
  frame.fields["reason"] = reason;
  for (const auto& p : nodes_.in_join_order()) p->conn->send(frame);
  close();
}

void Server::Impl::send_message(const PeerPtr& peer, const Message& m) {
  Frame f = frame_of(detail::kMsg);
  f.generation = m.generation;
  f.subtype = m.type;
  f.fields = m.fields;
  if (!opt_.order_revision.empty()) f.fields[kOrderRevisionField] = opt_.order_revision;
  peer->conn->send(f);
}

void Server::Impl::close(bool answer_waiting_queries) {
  if (phase_ == Phase::kClosed) return;
  held_queries_.close(opt_.close_flush_bound, answer_waiting_queries);  // the last answer first
  phase_ = Phase::kClosed;
  boost::system::error_code ec;
  const std::vector<PeerPtr> handshaking = unjoined_.close();
  listeners_.close();
  join_timer_.cancel();
  progress_timer_.cancel();
  heartbeat_timer_.cancel();
  handshake_sweep_timer_.cancel();
  for (const auto& p : handshaking) p->leave(opt_.close_flush_bound);
  for (const auto& p : nodes_.in_join_order()) p->conn->close_graceful(opt_.close_flush_bound);
  nodes_.clear();
}

Server::Server(boost::asio::io_context& io, ServerOptions options, ServerCallbacks callbacks)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(callbacks))) {}
Server::~Server() { impl_->close(/*answer_waiting_queries=*/false); }  // the launcher may be half gone
std::string Server::listen(const std::string& bind_address, std::uint16_t port) {
  return impl_->listen({bind_address.empty() ? std::string("0.0.0.0") : bind_address}, port).text;
}
std::string Server::listen(const std::vector<std::string>& bind_addresses, std::uint16_t port) {
  return impl_->listen(bind_addresses, port).text;
}
ListenError Server::listen_on(const std::vector<std::string>& bind_addresses, std::uint16_t port) {
  return impl_->listen(bind_addresses, port);
}
std::uint16_t Server::port() const { return impl_->listeners_.port(); }
void Server::answers_may_have_changed() { impl_->held_queries_.may_have_changed(); }
void Server::set_order_revision(std::string revision) { impl_->opt_.order_revision = std::move(revision); }
std::vector<std::string> Server::listening_on() const { return impl_->listeners_.addresses(); }
void Server::send(int node_rank, const Message& m) {
  if (auto p = impl_->nodes_.holder(node_rank); p && p->state == ServerPeer::State::kJoined)
    impl_->send_message(p, m);
}
void Server::broadcast(const Message& m) {
  for (const auto& p : impl_->nodes_.in_join_order()) impl_->send_message(p, m);
}
void Server::begin_generation(Generation generation) { impl_->begin_generation(generation); }
void Server::begin_generation(Generation generation, const std::vector<int>& member_ids,
                              const std::vector<int>& ran_workers) {
  impl_->begin_member_generation(generation, member_ids, ran_workers);
}
void Server::send_to_member(int member_id, const Message& m) {
  if (auto peer = impl_->nodes_.member(member_id)) impl_->send_message(peer, m);
}
void Server::dismiss_member(int member_id, const std::string& reason) { impl_->dismiss_member(member_id, reason); }
void Server::close() { impl_->close(); }
void Server::abort(const std::string& reason) { impl_->abort(reason); }
Generation Server::generation() const { return impl_->generation_; }
int Server::joined_count() const { return static_cast<int>(impl_->nodes_.count()); }

std::vector<NodeRecord> Server::joined_nodes() const {
  std::vector<NodeRecord> nodes;
  for (const auto& peer : impl_->nodes_.in_join_order()) nodes.push_back(peer->record);
  return nodes;
}

}  // namespace ddplaunch::rendezvous
