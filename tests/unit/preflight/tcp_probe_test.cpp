// preflight: the bounded TCP probe against real sockets on 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "ddplaunch/preflight/tcp_probe.h"

using namespace ddplaunch::preflight;
using namespace std::chrono_literals;

namespace {
// A listening socket on 127.0.0.1 with a kernel-chosen port; backlog as given.
struct Listener {
  int fd = -1;
  int port = 0;
  explicit Listener(int backlog) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, backlog) != 0) return;
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() { if (fd >= 0) ::close(fd); }
};
}  // namespace

TEST(PreflightTcpProbe, ConnectsToAListener) {
  Listener l(16);
  ASSERT_GT(l.port, 0);
  auto r = probe_tcp("127.0.0.1", l.port, 2000ms);
  EXPECT_EQ(r.status, ProbeStatus::Connected) << r.message;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.endpoint, "127.0.0.1:" + std::to_string(l.port));
}

TEST(PreflightTcpProbe, ClosedPortIsRefused) {
  int port = 0;
  {
    Listener l(16);
    port = l.port;
  }
  ASSERT_GT(port, 0);
  auto r = probe_tcp("127.0.0.1", port, 2000ms);
  EXPECT_EQ(r.status, ProbeStatus::Refused) << r.message;
  EXPECT_EQ(r.error_code, ECONNREFUSED);
  EXPECT_NE(r.message.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("refused"), std::string::npos) << r.message;
}

TEST(PreflightTcpProbe, FullAcceptQueueTimesOutWithinTheBound) {
  // Backlog 0 and nobody accepting: once the accept queue is full, Linux drops new SYNs,
  // which is what a silently filtering firewall looks like.
  Listener l(0);
  ASSERT_GT(l.port, 0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(l.port));
    ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    fillers.push_back(fd);
  }
  ::usleep(50 * 1000);
  auto start = std::chrono::steady_clock::now();
  auto r = probe_tcp("127.0.0.1", l.port, 300ms);
  auto took = std::chrono::steady_clock::now() - start;
  for (int fd : fillers) ::close(fd);
  EXPECT_EQ(r.status, ProbeStatus::TimedOut) << r.message;
  EXPECT_NE(r.message.find("within 300 ms"), std::string::npos) << r.message;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 1500ms);
}

TEST(PreflightTcpProbe, Ipv6LoopbackAndBadPort) {
  auto bad = probe_tcp("127.0.0.1", 0, 100ms);
  EXPECT_EQ(bad.status, ProbeStatus::Error);
  EXPECT_NE(bad.message.find("1..65535"), std::string::npos);
  auto unresolvable = probe_tcp("no-such-host.invalid", 80, 100ms);
  EXPECT_FALSE(unresolvable.ok());
  EXPECT_NE(unresolvable.message.find("no-such-host.invalid"), std::string::npos);
}

TEST(PreflightTcpProbe, ErrnoClassification) {
  EXPECT_EQ(classify_connect_errno(ECONNREFUSED), ProbeStatus::Refused);
  EXPECT_EQ(classify_connect_errno(ETIMEDOUT), ProbeStatus::TimedOut);
  EXPECT_EQ(classify_connect_errno(ENETUNREACH), ProbeStatus::Unreachable);
  EXPECT_EQ(classify_connect_errno(EHOSTUNREACH), ProbeStatus::Unreachable);
  EXPECT_EQ(classify_connect_errno(EACCES), ProbeStatus::Error);
  EXPECT_STREQ(to_string(ProbeStatus::Unreachable), "unreachable");
}
