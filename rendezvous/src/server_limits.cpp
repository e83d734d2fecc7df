// Rendezvous server bounds against strangers and stale peers: the cap on connections that
// have not joined yet (global: they wait for a place, ungreeted; per source address: closed at once),
// replacing a restarted node's silent old connection, and handing memory back to the system
// after a flood.
#include <malloc.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "ddplaunch/rendezvous/printable.h"
#include "server_impl.h"

namespace ddplaunch::rendezvous {
namespace {

// A flood this large leaves freed buffers worth returning to the system once it is over.
constexpr std::size_t kFloodPeak = 32;

// True when the peer has closed (or reset) a connection that has not been greeted yet: a node
// that met no greeting within its connect timeout gives up that connection and connects
// again. Its end of stream is already there to peek at, so the master skips it for one
// system call instead of greeting it, reading the end and dropping it: under load the queue
// would otherwise fill with connections their nodes have left, and greeting those would keep
// the master from the ones still waiting.
bool left_while_waiting(boost::asio::ip::tcp::socket& socket) {
  char byte = 0;
  const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace

// Counted from handshaking_ itself (at most max_unjoined_connections entries), so no second
// tally can drift from it. The global cap is met here only by an accept that was already
// under way on another listener when the cap filled (the listeners pause at it otherwise).
std::string Server::Impl::over_unjoined_cap(const std::string& ip) const {
  if (handshaking_.size() >= opt_.max_unjoined_connections)
    return "closed at once: " + std::to_string(handshaking_.size()) +
           " connections are already waiting to join, the most the master admits before peers prove "
           "they belong to the job (a flood or a port scan?); a real node retries until its join timeout";
  std::size_t from_ip = 0;
  for (const auto& [raw, peer] : handshaking_) from_ip += peer->conn->peer_ip() == ip ? 1 : 0;
  if (from_ip >= opt_.max_unjoined_per_address)
    return "closed at once: " + std::to_string(from_ip) + " connections from " + ip +
           " are already waiting to join, the most the master admits from one address before they prove "
           "they belong to the job (a flood or a port scan from there?); a real node retries until its join timeout";
  return "";
}

// At the global cap new connections wait for a place instead of being closed: thousands of
// nodes starting together then join in turn instead of being turned away and retrying (each
// retry a connect, an accept and a close: at 4096 nodes that churn cost seconds), and a flood
// of strangers holds no more handshake places than before. They wait ungreeted (no buffer,
// no timer, no greeting) in waiting_, in arrival order, as long as the job still has room for
// them (waiting_room); past that the listeners pause and they wait in the kernel's backlog.
// The backlog alone is not enough for a large job: it holds SOMAXCONN connections (4096 on
// Linux by default) and the kernel drops the connection attempts over it, which their nodes
// repeat only after 1 s, 3 s, 7 s... The per-address cap needs the address, so it is applied
// when a connection is greeted (on_accept), as before.
bool Server::Impl::pause_at_unjoined_cap(tcp::acceptor& acceptor) {
  if (handshaking_.size() < opt_.max_unjoined_connections || waiting_room() > 0) return false;
  paused_acceptors_.push_back(&acceptor);
  return true;
}

// The connections the master holds (joined, in their handshake, waiting) never outnumber the
// places of the job (its nodes, and its spares with membership): a complete job holds that
// many, so a flood of strangers cannot make it hold more descriptors than the job needs anyway.
std::size_t Server::Impl::waiting_room() const {
  const std::size_t places = static_cast<std::size_t>(opt_.expected_nodes) +
                             (opt_.launcher_assigns_slots ? static_cast<std::size_t>(opt_.max_spares) : 0);
  const std::size_t held = joined_.size() + handshaking_.size() + waiting_.size();
  return held < places ? places - held : 0;
}

// A connection accepted while every handshake place is taken (or others wait before it) waits
// for its turn; without room left it goes to on_accept, which closes it at the cap as before
// (only an accept already under way on another listener meets that).
bool Server::Impl::wait_for_a_place(tcp::socket& socket) {
  const bool places_taken = handshaking_.size() >= opt_.max_unjoined_connections || !waiting_.empty();
  if (!places_taken || waiting_room() == 0) return false;
  waiting_.push_back(std::move(socket));
  return true;
}

// A place is free: the longest-waiting connections are greeted (those their nodes have left
// are closed), then paused listeners go on.
void Server::Impl::end_handshake(ServerPeer* peer) {
  handshaking_.erase(peer);
  while (phase_ != Phase::kClosed && !waiting_.empty() && handshaking_.size() < opt_.max_unjoined_connections) {
    tcp::socket socket = std::move(waiting_.front());
    waiting_.pop_front();
    if (!left_while_waiting(socket)) on_accept(std::move(socket));
  }
  if (paused_acceptors_.empty() || phase_ == Phase::kClosed) return;
  std::vector<tcp::acceptor*> resumed;
  resumed.swap(paused_acceptors_);
  for (tcp::acceptor* acceptor : resumed) accept_next(*acceptor);  // pauses again when still full
}

void Server::Impl::note_unjoined_peak() { unjoined_peak_ = std::max(unjoined_peak_, handshaking_.size()); }

// Called from the heartbeat sweep: after a flood of strangers is over, give the freed heap
// back (glibc keeps it otherwise, and the master's RSS would stay at the flood's peak).
void Server::Impl::trim_after_flood() {
  if (unjoined_peak_ < kFloodPeak || handshaking_.size() * 4 > unjoined_peak_) return;
  malloc_trim(0);
  unjoined_peak_ = handshaking_.size();
}

// A node that restarts while its old connection lingers half-open (the machine rebooted, the
// old launcher was frozen) asks for the rank its old self still holds. When the holder is the
// same host and has said nothing for a few heartbeat intervals (a live node answers every
// interval), the old connection is retired and the new join goes ahead.
bool Server::Impl::replace_silent_holder(int rank, const NodeFacts& joining) {
  const PeerPtr holder = by_rank_[static_cast<std::size_t>(rank)];
  if (!holder || holder->record.facts.hostname != joining.hostname) return false;
  auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - holder->last_heard);
  if (silent < opt_.heartbeat_interval * opt_.silent_intervals_before_replace) return false;
  drop(holder, "host '" + printable(joining.hostname) + "' joined again as node rank " + std::to_string(rank) +
                   " while this connection had been silent for " + detail::format_seconds(silent) +
                   " (a restarted node; the old connection was left half-open), so the new one replaces it");
  return true;
}

}  // namespace ddplaunch::rendezvous
