// PeerProbeListener: the answering side of the peer probe (peer_probe.h). One thread, one
// poll loop over the listeners and their connections; bounded in connections (in all and per
// source address), time (1 s for the hello) and memory (a 4 KiB read buffer per connection;
// sample bytes are dropped).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ddplaunch/preflight/peer_probe.h"
#include "probe_wire.h"
#include "sockaddr_text.h"

namespace ddplaunch::preflight {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxConnections = 256;                    // peers probe a few each
constexpr std::size_t kMaxPerSource = 16;                       // a node probes at most 8 peers at once
constexpr auto kHelloDeadline = std::chrono::seconds(1);        // a prober sends it as it connects
constexpr auto kConnectionLifetime = std::chrono::seconds(10);  // a probe takes < 3 s
constexpr int kAcceptsPerRound = 64;

struct Connection {
  int fd = -1;
  std::string seen_as;    // the prober's address as this end sees it
  std::string hello;      // bytes of the hello line so far
  bool answered = false;  // a valid hello came; bulk: the sample's bytes follow, dropped until EOF
  Clock::time_point since;
};

void send_all(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the prober went away: nothing to tell it
    sent += static_cast<std::size_t>(n);
  }
}

// Reads what is there; false when the connection is done (EOF, error, bad hello, answered echo).
bool on_readable(Connection& c, const std::string& id, const ProbeAuth& auth) {
  char buffer[4096];
  ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  if (n == 0) return false;    // EOF: the prober is done
  if (c.answered) return true;  // the prober measures what the kernel acknowledged: nothing to count
  c.hello.append(buffer, static_cast<std::size_t>(n));
  auto newline = c.hello.find('\n');
  if (newline == std::string::npos) return c.hello.size() < probe_wire::kMaxLineBytes;
  auto hello = probe_wire::read_hello(c.hello.substr(0, newline), auth);
  if (!hello) return false;  // a stranger, or without the job's token: no answer
  send_all(c.fd, probe_wire::seen_line(c.seen_as, id, hello->nonce, auth));
  c.answered = true;
  return hello->bulk;
}

// Room for one more connection from `source`. Over a cap (per source, or in all) the oldest
// connection that has sent no valid hello yet — of that source, or of any at the total cap —
// makes room: idle strangers never lock out a prober, who sends its hello as it connects.
// False when every connection in the way is a probe in progress.
bool make_room(std::vector<Connection>& connections, const std::string& source) {
  auto evict_oldest_silent = [&](bool same_source_only) {
    auto it = std::find_if(connections.begin(), connections.end(), [&](const Connection& c) {
      return !c.answered && (!same_source_only || c.seen_as == source);
    });
    if (it == connections.end()) return false;
    ::close(it->fd);
    connections.erase(it);
    return true;
  };
  auto from_source = std::count_if(connections.begin(), connections.end(),
                                   [&](const Connection& c) { return c.seen_as == source; });
  if (static_cast<std::size_t>(from_source) >= kMaxPerSource && !evict_oldest_silent(true)) return false;
  return connections.size() < kMaxConnections || evict_oldest_silent(false);
}

// False when the connection is done: its time is up (1 s without a valid hello, 10 s in all).
bool within_deadline(const Connection& c, Clock::time_point now) {
  return now - c.since < (c.answered ? kConnectionLifetime : kHelloDeadline);
}

}  // namespace

Result<std::unique_ptr<PeerProbeListener>> PeerProbeListener::start(std::vector<ProbeEndpoint> endpoints,
                                                                    std::chrono::milliseconds lifetime, ProbeAuth auth) {
  std::unique_ptr<PeerProbeListener> l(new PeerProbeListener());
  const std::string id = probe_wire::random_hex(8);
  l->auth_ = std::move(auth);
  for (auto& e : endpoints) {
    e.listener_id = id;
    sockaddr_storage addr{};
    auto len = parse_ip_literal(e.address, 0, addr);
    if (!len) continue;
    int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), *len) != 0 || ::listen(fd, 256) != 0) {
      ::close(fd);
      continue;
    }
    socklen_t got_len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &got_len);
    e.port = ntohs(addr.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&addr)->sin_port
                                             : reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    l->endpoints_.push_back(e);
    l->listen_fds_.push_back(fd);
  }
  l->id_ = id;
  if (::pipe2(l->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
    return Result<std::unique_ptr<PeerProbeListener>>::failure(
        std::string("peer probe: cannot create a pipe: ") + std::strerror(errno));
  auto until = std::chrono::steady_clock::now() + lifetime;
  PeerProbeListener* self = l.get();
  l->thread_ = std::thread([self, until] { self->serve(until); });
  return Result<std::unique_ptr<PeerProbeListener>>::success(std::move(l));
}

void PeerProbeListener::serve(Clock::time_point until) {
  std::vector<Connection> connections;
  while (Clock::now() < until) {
    std::vector<pollfd> fds;
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    for (int fd : listen_fds_) fds.push_back({fd, POLLIN, 0});
    for (auto& c : connections) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    if (fds[0].revents) break;  // stop()

    // The connections polled this round first (at fds[1 + listeners + index]), then new ones.
    const auto now = Clock::now();
    const std::size_t first = 1 + listen_fds_.size();
    std::vector<Connection> kept;
    for (std::size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      bool alive = within_deadline(c, now);
      if (alive && fds[first + i].revents) alive = on_readable(c, id_, auth_);
      if (alive) kept.push_back(c);
      else ::close(c.fd);
    }
    connections.swap(kept);
    for (std::size_t i = 0; i < listen_fds_.size(); ++i) {
      if (!(fds[1 + i].revents & POLLIN)) continue;
      for (int n = 0; n < kAcceptsPerRound; ++n) {
        sockaddr_storage peer{};
        socklen_t len = sizeof(peer);
        int fd = ::accept4(listen_fds_[i], reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        Connection c{fd, sockaddr_ip_text(reinterpret_cast<sockaddr*>(&peer)), "", false, now};
        if (!make_room(connections, c.seen_as) || !on_readable(c, id_, auth_)) {  // a prober's hello is there already
          ::close(fd);
          continue;
        }
        connections.push_back(c);
      }
    }
  }
  for (auto& c : connections) ::close(c.fd);
}

void PeerProbeListener::stop() {
  if (thread_.joinable()) {
    char byte = 1;
    (void)!::write(wake_pipe_[1], &byte, 1);
    thread_.join();
  }
  for (int fd : listen_fds_) ::close(fd);
  listen_fds_.clear();
  for (int& fd : wake_pipe_)
    if (fd >= 0) ::close(fd), fd = -1;
}

PeerProbeListener::~PeerProbeListener() { stop(); }

std::vector<ProbeEndpoint> candidate_endpoints(const std::vector<NetInterface>& interfaces, bool include_loopback) {
  std::vector<ProbeEndpoint> out;
  for (const auto& i : interfaces) {
    if (!i.up || (i.loopback && !include_loopback) || !i.has_address()) continue;
    out.push_back({i.name, !i.ipv4.empty() ? i.ipv4.front() : i.ipv6.front(), 0, ""});
  }
  return out;
}

}  // namespace ddplaunch::preflight
