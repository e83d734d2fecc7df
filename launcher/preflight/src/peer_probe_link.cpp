// probe_link: the probing side of the peer probe (peer_probe.h). Blocking socket calls,
// each bounded by poll, so one probe never outlives its budget.
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "ddplaunch/preflight/peer_probe.h"
#include "ddplaunch/preflight/tcp_probe.h"
#include "probe_wire.h"
#include "sockaddr_text.h"
#include "unique_fd.h"

namespace ddplaunch::preflight {

namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned long long kSampleBytes = 4ull << 20;  // 4 MiB: ~3 ms at 10 Gbit/s, 34 ms at 1 Gbit/s

std::string endpoint_text(const ProbeEndpoint& e) {
  return e.address.find(':') != std::string::npos ? "[" + e.address + "]:" + std::to_string(e.port)
                                                  : e.address + ":" + std::to_string(e.port);
}

std::string seconds_text(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof(text), d.count() % 1000 ? "%.1f s" : "%.0f s", d.count() / 1000.0);
  return text;
}

long ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<long>(left) : 0;
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  while (true) {
    int r = ::poll(&p, 1, static_cast<int>(ms_left(deadline)));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

// One "\n"-terminated line, or "" when none came before the deadline.
std::string read_line(int fd, Clock::time_point deadline) {
  std::string line;
  char c;
  while (line.size() < probe_wire::kMaxLineBytes && wait_for(fd, POLLIN, deadline)) {
    if (::recv(fd, &c, 1, 0) != 1) break;
    if (c == '\n') return line;
    line.push_back(c);
  }
  return "";
}

bool send_text(int fd, const std::string& text) {
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// A connected socket from local_address (on ifname where the kernel allows binding to a
// device) to the peer, or the reason there is none.
UniqueFd connect_from(const LinkProbe& probe, std::string& error) {
  sockaddr_storage local{}, remote{};
  auto local_len = parse_ip_literal(probe.local_address, 0, local);
  auto remote_len = parse_ip_literal(probe.peer.address, probe.peer.port, remote);
  if (!local_len || !remote_len) {
    error = "not an IP address: " + (local_len ? probe.peer.address : probe.local_address);
    return UniqueFd();
  }
  if (local.ss_family != remote.ss_family) {
    error = "address families differ (" + probe.local_address + " vs " + probe.peer.address + ")";
    return UniqueFd();
  }
  UniqueFd fd(::socket(remote.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    error = std::string("socket(): ") + std::strerror(errno);
    return UniqueFd();
  }
  // Needs CAP_NET_RAW: without it the source address alone picks the way (good enough when
  // each interface has its own subnet, which is what a multi-NIC node has).
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, probe.ifname.c_str(),
                     static_cast<socklen_t>(probe.ifname.size()));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), *local_len) != 0) {
    error = "cannot use " + probe.local_address + " as the source: " + std::strerror(errno);
    return UniqueFd();
  }
  const auto deadline = Clock::now() + probe.connect_timeout;
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&remote), *remote_len) != 0 && errno != EINPROGRESS) {
    error = describe_probe(classify_connect_errno(errno), endpoint_text(probe.peer), errno, probe.connect_timeout.count());
    return UniqueFd();
  }
  if (!wait_for(fd.get(), POLLOUT, deadline)) {
    error = "timed out after " + seconds_text(probe.connect_timeout);
    return UniqueFd();
  }
  int so_error = 0;
  socklen_t len = sizeof(so_error);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len);
  if (so_error != 0) {
    error = std::string(std::strerror(so_error));
    return UniqueFd();
  }
  return fd;
}

}  // namespace

LinkResult probe_link(const LinkProbe& probe) {
  LinkResult result;
  UniqueFd fd = connect_from(probe, result.error);
  if (!fd.valid()) return result;
  const bool bulk = probe.sample.count() > 0;
  const auto reply_deadline = Clock::now() + std::chrono::seconds(2);
  const auto hello_sent = Clock::now();
  const std::string nonce = probe.auth.enabled() ? probe_wire::random_hex(16) : "";
  if (!send_text(fd.get(), probe_wire::hello_line(bulk, nonce, probe.auth))) {
    result.error = std::string("send failed: ") + std::strerror(errno);
    return result;
  }
  std::string line = read_line(fd.get(), reply_deadline);
  result.rtt_ms = std::chrono::duration<double, std::milli>(Clock::now() - hello_sent).count();
  auto seen = probe_wire::read_seen(line, nonce, probe.auth, result.error);
  if (!seen) return result;
  result.seen_as = seen->seen_as;
  if (!probe.peer.listener_id.empty() && seen->listener_id != probe.peer.listener_id) {
    result.error = "reached another launcher at " + probe.peer.address +
                   ", not that node's: the address is on several hosts (a local bridge like docker0?)";
    return result;
  }
  if (result.seen_as != probe.local_address) {
    result.error = "source address rewritten on the way (NAT?): the peer saw " + result.seen_as + ", not " +
                   probe.local_address + "; NCCL/gloo peers advertise their own address and would not connect back";
    return result;
  }
  result.ok = true;
  if (!bulk) return result;

  // Throughput: send up to kSampleBytes within the sample time, then let the queue drain;
  // what the peer's kernel acknowledged (written minus still queued, SIOCOUTQ) over the time
  // it took. Bounded in time and bytes: a fast link is done in milliseconds, the ring's
  // samples (all at once) cost little CPU and bandwidth, and a link too slow to drain in
  // time is still measured — the sender's count needs no answer from the peer.
  std::vector<char> chunk(64 * 1024, 'x');
  unsigned long long written = 0;
  int queued = 0;
  const auto start = Clock::now(), stop = start + probe.sample;
  while (Clock::now() < stop) {
    if (written < kSampleBytes) {
      if (!wait_for(fd.get(), POLLOUT, stop)) break;
      ssize_t n = ::send(fd.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) written += static_cast<unsigned long long>(n);
      else if (errno != EAGAIN) break;
    } else if (::ioctl(fd.get(), SIOCOUTQ, &queued) != 0 || queued == 0) {
      break;  // all acknowledged (or the kernel cannot say): measured
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (::ioctl(fd.get(), SIOCOUTQ, &queued) == 0 && seconds > 0) {
    const double acknowledged = static_cast<double>(written) - std::max(queued, 0);
    result.mbit_per_s = std::max(acknowledged, 0.0) * 8 / 1e6 / seconds;
  }
  return result;
}

}  // namespace ddplaunch::preflight
