// PeerProbeListener: the answering side of the peer probe (peer_probe.h). One thread, one
// poll loop over the listeners and their connections; bounded in connections, time and
// memory (a 4 KiB read buffer per connection; sample bytes are dropped).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ddplaunch/preflight/peer_probe.h"
#include "sockaddr_text.h"

namespace ddplaunch::preflight {

namespace {

constexpr std::size_t kMaxConnections = 256;                 // peers probe a few each
constexpr auto kConnectionLifetime = std::chrono::seconds(10);  // a probe takes < 3 s
constexpr std::size_t kMaxHelloBytes = 64;

struct Connection {
  int fd = -1;
  std::string seen_as;  // the prober's address as this end sees it
  std::string hello;    // bytes of the hello line so far
  bool bulk = false;    // after the hello: the sample's bytes, read and dropped until EOF
  std::chrono::steady_clock::time_point since;
};

void send_all(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the prober went away: nothing to tell it
    sent += static_cast<std::size_t>(n);
  }
}

// Reads what is there; false when the connection is done (EOF, error, bad hello, answered).
bool on_readable(Connection& c, const std::string& id) {
  char buffer[4096];
  ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  if (n == 0) return false;  // EOF: the prober is done
  if (c.bulk) return true;    // the prober measures what the kernel acknowledged: nothing to count
  c.hello.append(buffer, static_cast<std::size_t>(n));
  auto newline = c.hello.find('\n');
  if (newline == std::string::npos) return c.hello.size() < kMaxHelloBytes;
  std::string line = c.hello.substr(0, newline);
  if (line != "DDPLPROBE1 echo" && line != "DDPLPROBE1 bulk") return false;
  send_all(c.fd, "SEEN " + c.seen_as + " " + id + "\n");
  c.bulk = line == "DDPLPROBE1 bulk";
  return c.bulk;
}

// 16 hex digits from the kernel's random source (not a secret: an identity).
std::string random_id() {
  unsigned char bytes[8] = {0};
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    if (std::fread(bytes, 1, sizeof(bytes), f) != sizeof(bytes)) bytes[0] ^= static_cast<unsigned char>(::getpid());
    std::fclose(f);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += hex[b >> 4], out += hex[b & 15];
  return out;
}

}  // namespace

Result<std::unique_ptr<PeerProbeListener>> PeerProbeListener::start(std::vector<ProbeEndpoint> endpoints,
                                                                    std::chrono::milliseconds lifetime) {
  std::unique_ptr<PeerProbeListener> l(new PeerProbeListener());
  const std::string id = random_id();
  for (auto& e : endpoints) {
    e.listener_id = id;
    sockaddr_storage addr{};
    auto len = parse_ip_literal(e.address, 0, addr);
    if (!len) continue;
    int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), *len) != 0 || ::listen(fd, 64) != 0) {
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

void PeerProbeListener::serve(std::chrono::steady_clock::time_point until) {
  std::vector<Connection> connections;
  while (std::chrono::steady_clock::now() < until) {
    std::vector<pollfd> fds;
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    for (int fd : listen_fds_) fds.push_back({fd, POLLIN, 0});
    for (auto& c : connections) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    if (fds[0].revents) break;  // stop()

    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < listen_fds_.size(); ++i) {
      if (!(fds[1 + i].revents & POLLIN)) continue;
      sockaddr_storage peer{};
      socklen_t len = sizeof(peer);
      int fd = ::accept4(listen_fds_[i], reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) continue;
      if (connections.size() >= kMaxConnections) {
        ::close(fd);
        continue;
      }
      connections.push_back({fd, sockaddr_ip_text(reinterpret_cast<sockaddr*>(&peer)), "", false, now});
    }
    // Connections polled this round are at fds[1 + listeners + index]; new ones wait a round.
    const std::size_t first = 1 + listen_fds_.size();
    std::vector<Connection> kept;
    for (std::size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      bool alive = now - c.since < kConnectionLifetime;
      if (alive && first + i < fds.size() && fds[first + i].revents) alive = on_readable(c, id_);
      if (alive) kept.push_back(c);
      else ::close(c.fd);
    }
    connections.swap(kept);
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
