// Bounded TCP connect probe: one non-blocking connect per address, poll() with the
// remaining budget, SO_ERROR for the outcome.
#include "ddplaunch/preflight/tcp_probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "sockaddr_text.h"
#include "unique_fd.h"

namespace ddplaunch::preflight {
namespace {

using Clock = std::chrono::steady_clock;

std::string endpoint_text(const std::string& ip, int port) {
  if (ip.find(':') != std::string::npos) return "[" + ip + "]:" + std::to_string(port);
  return ip + ":" + std::to_string(port);
}

}  // namespace

std::string describe_probe(ProbeStatus s, const std::string& endpoint, int err, long timeout_ms) {
  switch (s) {
    case ProbeStatus::Connected:
      return "connected to " + endpoint;
    case ProbeStatus::Refused:
      return endpoint + " refused the connection: the host is up but nothing listens on that port "
             "(master not started yet, wrong port) or a firewall rejects it";
    case ProbeStatus::TimedOut:
      return "no answer from " + endpoint + " within " + std::to_string(timeout_ms) +
             " ms: the host is down, the address is wrong, or a firewall silently drops the "
             "packets; check the address and that the port is open between the nodes";
    case ProbeStatus::Unreachable:
      return endpoint + " is unreachable from this node (" + std::strerror(err) +
             "): no route to that network; check the address and this node's routes (ip route get)";
    case ProbeStatus::Error:
      break;
  }
  return "cannot connect to " + endpoint + ": " + std::strerror(err);
}

namespace {

// One attempt against one address; returns status and errno.
ProbeStatus connect_once(const sockaddr* sa, socklen_t len, Clock::time_point deadline, int& err) {
  err = 0;
  UniqueFd fd(::socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    err = errno;
    return ProbeStatus::Error;
  }
  if (::connect(fd.get(), sa, len) == 0) return ProbeStatus::Connected;
  if (errno != EINPROGRESS) {
    err = errno;
    return classify_connect_errno(err);
  }
  for (int round = 0; round < 1000; ++round) {  // bounded; EINTR is the only reason to loop
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return ProbeStatus::TimedOut;
    pollfd p{fd.get(), POLLOUT, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc == 0) return ProbeStatus::TimedOut;
    if (rc < 0) {
      if (errno == EINTR) continue;
      err = errno;
      return ProbeStatus::Error;
    }
    int so_error = 0;
    socklen_t so_len = sizeof so_error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &so_len) != 0) so_error = errno;
    if (so_error == 0) return ProbeStatus::Connected;
    err = so_error;
    return classify_connect_errno(err);
  }
  return ProbeStatus::TimedOut;
}

}  // namespace

const char* to_string(ProbeStatus s) {
  switch (s) {
    case ProbeStatus::Connected: return "connected";
    case ProbeStatus::Refused: return "refused";
    case ProbeStatus::TimedOut: return "timed out";
    case ProbeStatus::Unreachable: return "unreachable";
    case ProbeStatus::Error: return "error";
  }
  return "error";
}

ProbeStatus classify_connect_errno(int err) {
  switch (err) {
    case ECONNREFUSED: return ProbeStatus::Refused;
    case ETIMEDOUT: return ProbeStatus::TimedOut;
    case ENETUNREACH:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
    case EADDRNOTAVAIL: return ProbeStatus::Unreachable;
    default: return ProbeStatus::Error;
  }
}

ProbeResult probe_tcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  ProbeResult result;
  result.endpoint = endpoint_text(host, port);
  if (port < 1 || port > 65535) {
    result.error_code = EINVAL;
    result.message = "cannot probe " + result.endpoint + ": port must be 1..65535";
    return result;
  }
  const auto deadline = Clock::now() + timeout;
  std::string literal = host;
  if (literal.size() >= 2 && literal.front() == '[' && literal.back() == ']') literal = literal.substr(1, literal.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(literal.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) {
    result.message = "cannot probe " + result.endpoint + ": cannot resolve '" + host + "': " + gai_strerror(rc);
    return result;
  }
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    result.endpoint = endpoint_text(sockaddr_ip_text(ai->ai_addr), port);
    result.status = connect_once(ai->ai_addr, ai->ai_addrlen, deadline, result.error_code);
    if (result.status == ProbeStatus::Connected || Clock::now() >= deadline) break;
  }
  ::freeaddrinfo(list);
  result.message = describe_probe(result.status, result.endpoint, result.error_code,
                            static_cast<long>(timeout.count()));
  return result;
}

}  // namespace ddplaunch::preflight
