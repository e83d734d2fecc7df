// preflight: worker-port checks against real sockets on 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "ddplaunch/preflight/port.h"

using namespace ddplaunch::preflight;

TEST(PreflightPort, Range) {
  EXPECT_TRUE(check_port_in_range(1).ok);
  EXPECT_TRUE(check_port_in_range(65535).ok);
  auto zero = check_port_in_range(0);
  EXPECT_FALSE(zero.ok);
  EXPECT_NE(zero.message.find("worker port 0"), std::string::npos) << zero.message;
  auto big = check_port_in_range(70000, "rendezvous port");
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.message.find("rendezvous port 70000"), std::string::npos) << big.message;
}

TEST(PreflightPort, RendezvousAndWorkerPortMustDiffer) {
  EXPECT_TRUE(check_ports_distinct(29400, 29500).ok);
  auto same = check_ports_distinct(29500, 29500);
  EXPECT_FALSE(same.ok);
  EXPECT_NE(same.message.find("29500"), std::string::npos);
  EXPECT_NE(same.message.find("--worker-port auto"), std::string::npos);
}

TEST(PreflightPort, FreePortIsBindableAndThenInUseWhileHeld) {
  auto port = find_free_port("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.error;
  ASSERT_GT(*port, 0);
  EXPECT_TRUE(check_port_bindable("127.0.0.1", *port).ok);

  // Hold it the way a c10d store would: SO_REUSEADDR + listen.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(*port));
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  auto busy = check_port_bindable("127.0.0.1", *port);
  auto busy_any = check_port_bindable("0.0.0.0", *port);
  auto busy_all = check_port_bindable("", *port);  // dual-stack "::" collides with the IPv4 holder
  ::close(fd);
  ASSERT_FALSE(busy.ok);
  EXPECT_NE(busy.message.find("already in use"), std::string::npos) << busy.message;
  EXPECT_NE(busy.message.find("127.0.0.1:" + std::to_string(*port)), std::string::npos) << busy.message;
  EXPECT_NE(busy.message.find("--worker-port auto"), std::string::npos) << busy.message;
  EXPECT_NE(busy.message.find("ss -ltnp"), std::string::npos) << busy.message;
  // This process holds it, and /proc shows that.
  EXPECT_NE(busy.message.find("it is held by pid " + std::to_string(::getpid()) + " ("), std::string::npos) << busy.message;
  EXPECT_FALSE(busy_any.ok) << "0.0.0.0 overlaps 127.0.0.1";
  EXPECT_FALSE(busy_all.ok) << busy_all.message;
  EXPECT_NE(busy_all.message.find("*:" + std::to_string(*port)), std::string::npos) << busy_all.message;
}

TEST(PreflightPort, BadBindAddresses) {
  auto not_literal = check_port_bindable("node01", 29500);
  EXPECT_FALSE(not_literal.ok);
  EXPECT_NE(not_literal.message.find("not an IP literal"), std::string::npos);
  auto foreign = check_port_bindable("198.18.0.250", 29500);  // not an address of this host
  EXPECT_FALSE(foreign.ok);
  EXPECT_NE(foreign.message.find("does not belong to this node"), std::string::npos) << foreign.message;
  EXPECT_FALSE(find_free_port("not-an-ip").ok());
  auto any = find_free_port("");
  ASSERT_TRUE(any.ok()) << any.error;
  EXPECT_TRUE(check_port_bindable("", *any).ok);
}

TEST(PreflightPort, LikelyHolderNamesTheUsualSuspects) {
  EXPECT_NE(likely_port_holder(29500).find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(likely_port_holder(29400).find("rendezvous"), std::string::npos);
  int lo = 32768, hi = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> lo >> hi;
  EXPECT_NE(likely_port_holder(hi).find("ephemeral"), std::string::npos);
  EXPECT_NE(likely_port_holder(12345).find("ss -ltnp 'sport = :12345'"), std::string::npos);
}
