// Node name -> address: numeric and local names resolve; an unknown name fails with
// advice to pass --master; NodeAddr is read from scontrol output.
#include <gtest/gtest.h>

#include "ddplaunch/cluster/host_address.h"

using namespace ddplaunch::cluster;

TEST(ClusterHostAddress, ResolvesNumericAndLocalhost) {
  auto r = resolve_slurm_host("127.0.0.1");
  ASSERT_TRUE(r.ok()) << *r.error;
  EXPECT_EQ(r.address, "127.0.0.1");
  EXPECT_EQ(r.how, "resolver");
  r = resolve_slurm_host("localhost");
  ASSERT_TRUE(r.ok()) << *r.error;
  EXPECT_TRUE(r.address == "127.0.0.1" || r.address == "::1") << r.address;
}

TEST(ClusterHostAddress, UnknownNameSaysPassMaster) {
  // RFC 6761: .invalid never resolves.
  auto r = resolve_slurm_host("no-such-node.invalid");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.address.empty());
  EXPECT_NE(r.error->find("no-such-node.invalid"), std::string::npos) << *r.error;
  EXPECT_NE(r.error->find("--master"), std::string::npos) << *r.error;
  // A name that could not be a node is refused without reaching a shell.
  auto bad = resolve_slurm_host("x';touch /tmp/pwned;'");
  ASSERT_FALSE(bad.ok());
}

TEST(ClusterHostAddress, ParsesNodeAddrFromScontrol) {
  const std::string line =
      "NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 NodeAddr=127.0.0.1 "
      "NodeHostName=localhost Version=22.05.8 OS=Linux\n";
  EXPECT_EQ(parse_scontrol_node_addr(line), "127.0.0.1");
  EXPECT_EQ(parse_scontrol_node_addr("NodeAddr=10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(parse_scontrol_node_addr("NodeName=n1 ActiveNodeAddr=1.2.3.4 x=y"), std::nullopt);
  EXPECT_EQ(parse_scontrol_node_addr("Node n9 not found"), std::nullopt);
  EXPECT_EQ(parse_scontrol_node_addr(""), std::nullopt);
  EXPECT_EQ(parse_scontrol_node_addr("NodeName=n1 NodeAddr=(null) Foo=1"), std::nullopt);
}
