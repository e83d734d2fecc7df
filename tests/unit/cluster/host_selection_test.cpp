// Fan-out hosts: --hosts lists (Slurm hostlist syntax), DeepSpeed hostfiles, --include /
// --exclude of whole hosts or slots, and errors that name the line or item at fault.
#include <gtest/gtest.h>

#include "ddplaunch/cluster/host_selection.h"

namespace {

using namespace ddplaunch::cluster;

TEST(HostList, CommaListAndSlurmRangesInOrderAndDuplicatesRefused) {
  auto s = parse_host_list("gpu[01-03],login");
  ASSERT_TRUE(s.ok()) << s.error;
  ASSERT_EQ(s.hosts.size(), 4u);
  EXPECT_EQ(s.hosts[0].name, "gpu01");
  EXPECT_EQ(s.hosts[3].name, "login");
  EXPECT_EQ(s.hosts[0].workers(8), 8);
  EXPECT_NE(parse_host_list("a,b,a").error.find("names 'a' twice"), std::string::npos);
  EXPECT_FALSE(parse_host_list("").ok());
  EXPECT_FALSE(parse_host_list("ok,bad host").ok());
}

TEST(Hostfile, DeepSpeedFormatWithCommentsAndErrorsNamingTheLine) {
  auto s = parse_hostfile("# cluster\nworker-1 slots=4\n\nworker-2 slots=8  # big one\nworker-3\n", "hosts.txt");
  ASSERT_TRUE(s.ok()) << s.error;
  ASSERT_EQ(s.hosts.size(), 3u);
  EXPECT_EQ(s.hosts[1].slots, 8);
  EXPECT_EQ(s.hosts[2].workers(2), 2);  // no slots: --nproc-per-node decides
  EXPECT_EQ(parse_hostfile("a slots=4\nb slots=zero\n", "hosts.txt").error,
            "hosts.txt:2: expected 'HOST slots=N' with N >= 1, got 'b slots=zero'");
  EXPECT_NE(parse_hostfile("a slots=0\n", "f").error.find("f:1"), std::string::npos);
  EXPECT_NE(parse_hostfile("a\na\n", "f").error.find("f:2: host 'a' is listed twice"), std::string::npos);
  EXPECT_NE(parse_hostfile("# nothing\n", "f").error.find("lists no host"), std::string::npos);
}

TEST(SelectHosts, IncludeKeepsHostsOrSlotsExcludeRemovesThem) {
  auto all = parse_hostfile("w1 slots=4\nw2 slots=4\nw3 slots=4\n", "f");
  auto included = select_hosts(all, "w2:0,2@w3", "");
  ASSERT_TRUE(included.ok()) << included.error;
  ASSERT_EQ(included.hosts.size(), 2u);
  EXPECT_EQ(included.hosts[0].name, "w2");
  EXPECT_EQ(included.hosts[0].devices, (std::vector<int>{0, 2}));
  EXPECT_EQ(included.hosts[0].workers(1), 2);
  EXPECT_EQ(included.hosts[1].workers(1), 4);

  auto excluded = select_hosts(all, "", "w1@w3:1");
  ASSERT_TRUE(excluded.ok()) << excluded.error;
  ASSERT_EQ(excluded.hosts.size(), 2u);
  EXPECT_EQ(excluded.hosts[0].name, "w2");
  EXPECT_EQ(excluded.hosts[1].devices, (std::vector<int>{0, 2, 3}));

  EXPECT_NE(select_hosts(all, "w9", "").error.find("names 'w9', which is not among the hosts"), std::string::npos);
  EXPECT_NE(select_hosts(all, "w1:7", "").error.find("slot 7 of 'w1', which has slots=4"), std::string::npos);
  EXPECT_NE(select_hosts(all, "w1", "w2").error.find("cannot be combined"), std::string::npos);
  EXPECT_NE(select_hosts(all, "", "w1@w2@w3").error.find("leaves no host"), std::string::npos);
  EXPECT_NE(select_hosts(all, "w1:x", "").error.find("'x' is not a slot index"), std::string::npos);
}

}  // namespace
