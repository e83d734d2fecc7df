// A hand-driven TCP peer for rendezvous tests: speaks raw bytes to a server, so a test can
// send what no real client would (garbage, forged or replayed handshakes) and read what came back.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "ddplaunch/rendezvous/codec.h"

namespace rdzv_test {

using ddplaunch::rendezvous::Frame;
using ddplaunch::rendezvous::FrameReader;

// A hand-driven TCP peer (blocking connect/send is safe here: the kernel completes them
// without the server's loop running).
struct RawPeer {
  int fd = -1;
  std::string received;
  bool closed_by_server = false;
  bool connected = false;

  explicit RawPeer(std::uint16_t port, const std::string& ip = "127.0.0.1") {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (ip.find(':') == std::string::npos) {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_port = htons(port);
      ::inet_pton(AF_INET, ip.c_str(), &a->sin_addr);
      len = sizeof(sockaddr_in);
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port);
      ::inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr);
      len = sizeof(sockaddr_in6);
    }
    fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    connected = ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0;
  }
  ~RawPeer() { if (fd >= 0) ::close(fd); }
  void send_bytes(const std::string& s) { EXPECT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size())); }
  // Non-blocking: collects what arrived; notes EOF/reset.
  void poll() {
    char buf[4096];
    for (int i = 0; i < 100 && !closed_by_server; ++i) {
      ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) received.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) closed_by_server = true;
      else break;
    }
  }
  std::optional<Frame> first_frame() { return nth_frame(0); }
  std::optional<Frame> nth_frame(std::size_t index) {
    FrameReader r(1 << 20);
    r.append(received.data(), received.size());
    Frame f;
    std::string e;
    for (std::size_t i = 0; r.next(f, e) == FrameReader::Status::kFrame; ++i)
      if (i == index) return f;
    return std::nullopt;
  }
};

// A listening TCP socket on 127.0.0.1 at a free port (fake masters and relays in tests).
// SO_REUSEADDR like the real master's: once closed, the real master can take the port over the
// connections it leaves in TIME_WAIT (Linux wants the option on both sockets).
inline int listen_on_loopback(std::uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

inline std::string framed(const std::string& body) {
  std::string out(4, '\0');
  std::uint32_t n = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  return out + body;
}

}  // namespace rdzv_test
