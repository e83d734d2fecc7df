// Rendezvous server bounds against strangers and stale peers: the cap on connections that
// have not joined yet (global: the listeners pause; per source address: closed at once),
// replacing a restarted node's silent old connection, and handing memory back to the system
// after a flood.
#include <malloc.h>

#include <algorithm>

#include "ddplaunch/rendezvous/printable.h"
#include "server_impl.h"

namespace ddplaunch::rendezvous {
namespace {

// A flood this large leaves freed buffers worth returning to the system once it is over.
constexpr std::size_t kFloodPeak = 32;

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

// At the global cap the listeners stop accepting instead of closing what they accept: new
// connections wait in the kernel's backlog (SOMAXCONN) until a handshake ends. Thousands of
// nodes starting together then join in turn instead of being turned away and retrying (each
// retry a connect, an accept and a close: at 4096 nodes that churn cost seconds), and a flood
// of strangers holds no more places than before. The per-address cap needs the address, so
// it still closes after accept.
bool Server::Impl::pause_at_unjoined_cap(tcp::acceptor& acceptor) {
  if (handshaking_.size() < opt_.max_unjoined_connections) return false;
  paused_acceptors_.push_back(&acceptor);
  return true;
}

void Server::Impl::end_handshake(ServerPeer* peer) {
  handshaking_.erase(peer);
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
