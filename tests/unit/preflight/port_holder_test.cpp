// find_port_holder against this machine's real /proc: a socket this test listens on is found
// with this process's pid and command line; a port nobody listens on has no holder.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ddplaunch/preflight/port_holder.h"

namespace ddplaunch::preflight {
namespace {

TEST(PortHolder, AListeningSocketOfThisProcessIsFoundWithItsPidAndCommand) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);
  auto holder = find_port_holder(port);
  ASSERT_TRUE(holder);
  EXPECT_EQ(holder->pid, ::getpid());
  EXPECT_NE(holder->command.find("port_holder_test"), std::string::npos) << holder->command;
  EXPECT_NE(describe_port_holder(port).find("pid " + std::to_string(::getpid()) + " ("), std::string::npos);
  ::close(fd);
  EXPECT_FALSE(find_port_holder(port)) << "closed: nobody holds it";
  EXPECT_EQ(describe_port_holder(port), "");
}

}  // namespace
}  // namespace ddplaunch::preflight
