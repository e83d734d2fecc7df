// Bounds against strangers on connections that have not joined: the cap on those in their
// handshake (global: they wait for a place, ungreeted; per source address: closed at once),
// the wait for a place, and handing memory back after a flood.
#include "unjoined_connections.h"

#include <malloc.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "server_peer.h"

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

UnjoinedConnections::UnjoinedConnections(Bounds bounds, Hooks hooks) : bounds_(bounds), hooks_(std::move(hooks)) {}

// The global cap is met here only by an accept that was already under way on another listener
// when the cap filled (the listeners pause at it otherwise).
std::string UnjoinedConnections::over_cap(const std::string& ip) const {
  if (handshaking_.size() >= bounds_.max_handshaking)
    return "closed at once: " + std::to_string(handshaking_.size()) +
           " connections are already waiting to join, the most the master admits before peers prove "
           "they belong to the job (a flood or a port scan?); a real node retries until its join timeout";
  const auto counted = handshaking_from_.find(ip);
  const std::size_t from_ip = counted == handshaking_from_.end() ? 0 : counted->second;
  if (from_ip >= bounds_.max_per_address)
    return "closed at once: " + std::to_string(from_ip) + " connections from " + ip +
           " are already waiting to join, the most the master admits from one address before they prove "
           "they belong to the job (a flood or a port scan from there?); a real node retries until its join timeout";
  return "";
}

void UnjoinedConnections::begin_handshake(const std::shared_ptr<ServerPeer>& peer) {
  if (handshaking_.emplace(peer.get(), peer).second) ++handshaking_from_[peer->conn->peer_ip()];
  peak_ = std::max(peak_, handshaking_.size());
}

// At the global cap new connections wait for a place instead of being closed: thousands of
// nodes starting together then join in turn instead of being turned away and retrying (each
// retry a connect, an accept and a close: at 4096 nodes that churn cost seconds), and a flood
// of strangers holds no more handshake places than before. They wait ungreeted (no buffer,
// no timer, no greeting), in arrival order, as long as the job still has room for them
// (room); past that the listeners pause and they wait in the kernel's backlog.
// The backlog alone is not enough for a large job: it holds SOMAXCONN connections (4096 on
// Linux by default) and the kernel drops the connection attempts over it, which their nodes
// repeat only after 1 s, 3 s, 7 s... The per-address cap needs the address, so it is applied
// when a connection is greeted (over_cap).
bool UnjoinedConnections::pause_at_cap(tcp::acceptor& listener, std::size_t joined) {
  if (handshaking_.size() < bounds_.max_handshaking || room(joined) > 0) return false;
  paused_listeners_.push_back(&listener);
  return true;
}

// The connections the master holds (joined, in their handshake, waiting) never outnumber the
// places of the job: a complete job holds that many, so a flood of strangers cannot make it
// hold more descriptors than the job needs anyway.
std::size_t UnjoinedConnections::room(std::size_t joined) const {
  const std::size_t held = joined + handshaking_.size() + waiting_.size();
  return held < bounds_.places ? bounds_.places - held : 0;
}

// A connection accepted while every handshake place is taken (or others wait before it) waits
// for its turn; without room left it is greeted at once, and over_cap closes it (only an
// accept already under way on another listener meets that).
bool UnjoinedConnections::wait_for_a_place(tcp::socket& socket, std::size_t joined, const tcp::endpoint& remote) {
  const bool places_taken = handshaking_.size() >= bounds_.max_handshaking || !waiting_.empty();
  if (!places_taken || room(joined) == 0) return false;
  waiting_.push_back(Waiting{std::move(socket), remote, std::chrono::steady_clock::now()});
  return true;
}

// A place is free: the longest-waiting connections are greeted (those their nodes have left
// are closed), then paused listeners go on.
void UnjoinedConnections::end_handshake(ServerPeer* peer) {
  if (const auto held = handshaking_.find(peer); held != handshaking_.end()) {
    const auto counted = handshaking_from_.find(held->second->conn->peer_ip());
    if (counted != handshaking_from_.end() && --counted->second == 0) handshaking_from_.erase(counted);
    handshaking_.erase(held);  // last: the map may hold the peer's last reference
  }
  while (!closed_ && !waiting_.empty() && handshaking_.size() < bounds_.max_handshaking) {
    Waiting next = std::move(waiting_.front());
    waiting_.pop_front();
    const bool maybe_left = std::chrono::steady_clock::now() - next.since >= bounds_.ask_if_left_after;
    if (!maybe_left || !left_while_waiting(next.socket)) hooks_.greet(std::move(next.socket), next.remote);
  }
  if (paused_listeners_.empty() || closed_) return;
  std::vector<tcp::acceptor*> resumed;
  resumed.swap(paused_listeners_);
  for (tcp::acceptor* listener : resumed) hooks_.resume(*listener);  // pauses again when still full
}

std::vector<std::shared_ptr<ServerPeer>> UnjoinedConnections::greeted_by(
    std::chrono::steady_clock::time_point cutoff) const {
  std::vector<std::shared_ptr<ServerPeer>> late;
  for (const auto& [raw, peer] : handshaking_)
    if (peer->hello_sent <= cutoff) late.push_back(peer);
  return late;
}

// A scan of at most max_handshaking peers (128), once per sweep.
std::optional<std::chrono::steady_clock::time_point> UnjoinedConnections::earliest_greeting() const {
  std::optional<std::chrono::steady_clock::time_point> earliest;
  for (const auto& [raw, peer] : handshaking_)
    if (!earliest || peer->hello_sent < *earliest) earliest = peer->hello_sent;
  return earliest;
}

// Called from the heartbeat sweep: after a flood of strangers is over, give the freed heap
// back (glibc keeps it otherwise, and the master's RSS would stay at the flood's peak).
void UnjoinedConnections::trim_after_flood() {
  if (peak_ < kFloodPeak || handshaking_.size() * 4 > peak_) return;
  malloc_trim(0);
  peak_ = handshaking_.size();
}

std::vector<std::shared_ptr<ServerPeer>> UnjoinedConnections::close() {
  closed_ = true;
  paused_listeners_.clear();
  waiting_.clear();  // closes them: none was greeted
  std::vector<std::shared_ptr<ServerPeer>> peers;
  for (auto& [raw, peer] : handshaking_) peers.push_back(peer);
  handshaking_.clear();
  handshaking_from_.clear();
  return peers;
}

}  // namespace ddplaunch::rendezvous
